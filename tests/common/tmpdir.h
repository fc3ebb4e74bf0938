/* Temporary directories of the tests. */
#ifndef TXLM_TEST_COMMON_TMPDIR_H
#define TXLM_TEST_COMMON_TMPDIR_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A fresh directory $TMPDIR/PREFIX-XXXXXX ($TMPDIR unset or empty: /tmp),
 * its path malloc'd; NULL on failure. */
static inline char *test_mkdtemp(const char *prefix)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    size_t n = strlen(base) + strlen(prefix) + 16;
    char *dir = malloc(n);
    if (!dir) return NULL;
    snprintf(dir, n, "%s/%s-XXXXXX", base, prefix);
    if (!mkdtemp(dir)) {
        free(dir);
        return NULL;
    }
    return dir;
}

/* Entries directly inside dir (not "." and ".."), -1 when it cannot be read:
 * what tests count to see that nothing, a temporary file included, was left. */
static inline int test_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

/* Removes the files directly inside dir, then dir itself (the tests write
 * no subdirectories there). */
static inline void test_rmdir_flat(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

#endif
