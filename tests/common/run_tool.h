/* Running a program from a test and keeping what it printed. */
#ifndef TXLM_TEST_COMMON_RUN_TOOL_H
#define TXLM_TEST_COMMON_RUN_TOOL_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "slurp.h"

/* Runs argv (NULL-terminated, argv[0] a path) with stdin from /dev/null;
 * *out and *err (either may be NULL) receive what it printed, NUL-terminated,
 * malloc'd. Returns the exit status (128 + signal when killed), -1 if it did
 * not run. */
static inline int run_tool(const char *const *argv, char **out, char **err)
{
    char so[] = "/tmp/txlm_test_outXXXXXX", se[] = "/tmp/txlm_test_errXXXXXX";
    int fo = mkstemp(so), fe = fo < 0 ? -1 : mkstemp(se);
    if (fe < 0) {
        if (fo >= 0) close(fo), unlink(so);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        if (in < 0 || dup2(in, 0) < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(127);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(fo);
    close(fe);
    int status = 0;
    int ok = pid > 0 && waitpid(pid, &status, 0) == pid;
    if (out) *out = slurp(so, NULL);
    if (err) *err = slurp(se, NULL);
    unlink(so);
    unlink(se);
    if (!ok) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#endif
