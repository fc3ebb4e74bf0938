/* Session state files: bound to their model, checked, and replaced
 * atomically (format/container/atomic_write.c). A write that fails between the
 * temporary file and the rename (TXLM_FAULT_OUTPUT=fail) or a process killed
 * before the rename (=kill) leaves the previous state intact and no
 * temporary file; a link planted at the old temporary name is not followed. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic_write.h"
#include "faults_common.h"

static int32_t toks[8] = {3, 17, 5, 9, 100, 2, 44, 61};

/* Number of entries in dir other than the ones named. */
static int others(const char *dir, const char *a, const char *b)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, a) && strcmp(e->d_name, b)) {
            fprintf(stderr, "unexpected file %s\n", e->d_name);
            n++;
        }
    if (d) closedir(d);
    return n;
}

static int same_file(const char *path, const uint8_t *want, size_t len)
{
    size_t got_len;
    uint8_t *got = fmt_read_all(path, &got_len);
    int same = got && got_len == len && memcmp(got, want, len) == 0;
    free(got);
    return same;
}

/* The child of the killed save: a process of its own (exec, not only
 * fork: a GPU driver's device does not survive fork, and some drivers
 * cannot open another in a forked child). */
static int killed_save(const char *model_path, const char *state_path)
{
    txlm_context_options o = flt_options(0);
    txlm_context *c2 = NULL;
    txlm_model *m2 = NULL;
    txlm_session *s2 = NULL;
    if (txlm_context_create(&o, &c2) || txlm_model_load(c2, model_path, NULL, &m2) || txlm_session_create(m2, NULL, &s2) ||
        txlm_session_feed(s2, toks, 8, NULL)) {
        fprintf(stderr, "killed save: %s\n", txlm_last_error());
        return 4;
    }
    setenv("TXLM_FAULT_OUTPUT", "kill", 1); /* a fresh process: read at its first write */
    txlm_session_save_file(s2, state_path);
    return 3; /* not reached: the hook kills the process */
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--killed-save")) return killed_save(argv[2], argv[3]);
    char *dir = fmt_mkdtemp(), a_path[4096], b_path[4096], st_path[4096];
    snprintf(a_path, sizeof a_path, "%s/a.txlm", dir);
    snprintf(b_path, sizeof b_path, "%s/b.txlm", dir);
    snprintf(st_path, sizeof st_path, "%s/s.state", dir);
    /* Same shapes, different weights (f16 rounding): only the binding tells them apart. */
    if (flt_pack("char_preln", TXLM_DT_F32, a_path) || flt_pack("char_preln", TXLM_DT_F16, b_path)) return 1;
    txlm_context_options o = flt_options(0);
    txlm_context *ctx = NULL;
    txlm_model *a = NULL, *b = NULL;
    txlm_session *sa = NULL, *sa2 = NULL, *sb = NULL;
    if (txlm_context_create(&o, &ctx) || txlm_model_load(ctx, a_path, NULL, &a) || txlm_model_load(ctx, b_path, NULL, &b) ||
        txlm_session_create(a, NULL, &sa) || txlm_session_create(a, NULL, &sa2) || txlm_session_create(b, NULL, &sb)) {
        fprintf(stderr, "setup: %s\n", txlm_last_error());
        return 1;
    }
    unlink(b_path);
    float lp1[204], lp2[204];

    /* Round trip: the restored session continues exactly as the saved one. */
    CHECK(txlm_session_feed(sa, toks, 8, NULL) == TXLM_OK, "feed: %s", txlm_last_error());
    CHECK(txlm_session_save_file(sa, st_path) == TXLM_OK, "save: %s", txlm_last_error());
    CHECK(txlm_session_restore_file(sa2, st_path) == TXLM_OK, "restore: %s", txlm_last_error());
    CHECK(txlm_session_memory_len(sa2) == txlm_session_memory_len(sa), "memory length");
    CHECK(txlm_session_feed(sa, toks + 2, 1, lp1) == TXLM_OK && txlm_session_feed(sa2, toks + 2, 1, lp2) == TXLM_OK,
          "feed after restore: %s", txlm_last_error());
    CHECK(memcmp(lp1, lp2, sizeof lp1) == 0, "restored session differs");

    /* Another model refuses it. */
    txlm_status st = txlm_session_restore_file(sb, st_path);
    CHECK_STATUS(st, TXLM_ERR_INVALID_ARGUMENT, "different model");

    size_t len;
    uint8_t *good = fmt_read_all(st_path, &len);
    CHECK(good && len > 100, "state file read back");
    if (!good) return 1;
    char bad_path[4096];
    snprintf(bad_path, sizeof bad_path, "%s/bad.state", dir);
    uint8_t *bad = malloc(len);
    /* A flipped payload byte, a flipped checksum byte, another version, a cut file, an empty file. */
    struct {
        size_t at;
        uint8_t x;
        size_t len;
        txlm_status want;
        const char *needle;
    } cases[] = {{len / 2, 0x20, len, TXLM_ERR_CHECKSUM, "checksum"},
                 {len - 3, 0x01, len, TXLM_ERR_CHECKSUM, "checksum"},
                 {8, 0x02, len, TXLM_ERR_UNSUPPORTED, "version"},
                 {0, 0x00, len - 8, TXLM_ERR_FORMAT, "the file is truncated"},
                 {0, 0x00, 20, TXLM_ERR_FORMAT, "too short"},
                 {0, 0x00, 0, TXLM_ERR_IO, "cannot read"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(bad, good, len);
        bad[cases[i].at] ^= cases[i].x;
        fmt_write_all(bad_path, bad, cases[i].len);
        st = txlm_session_restore_file(sa2, bad_path);
        CHECK_STATUS(st, cases[i].want, cases[i].needle);
    }
    unlink(bad_path);
    free(bad);

    /* Failure after the temporary file is complete, before it replaces the state. */
    CHECK(txlm_session_feed(sa, toks, 5, NULL) == TXLM_OK, "feed: %s", txlm_last_error());
    txlm_atomic_fault("fail");
    st = txlm_session_save_file(sa, st_path);
    txlm_atomic_fault(NULL);
    CHECK_STATUS(st, TXLM_ERR_IO, "saving the session state");
    CHECK(same_file(st_path, good, len), "the previous state was damaged by a failed save");
    CHECK(others(dir, "s.state", "a.txlm") == 0, "a failed save left files behind");

    /* Killed halfway through writing. */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], "--killed-save", a_path, st_path, (char *)NULL);
        _exit(5);
    }
    int ws = 0;
    CHECK(pid > 0 && waitpid(pid, &ws, 0) == pid && WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL, "child status %d", ws);
    CHECK(same_file(st_path, good, len), "the previous state was damaged by a killed save");
    CHECK(others(dir, "s.state", "a.txlm") == 0, "a killed save left files behind");
    /* A link planted at the old temporary name "<path>.tmp" is neither
     * followed nor removed: its target keeps its bytes. */
    char planted[4200], victim[4200];
    snprintf(planted, sizeof planted, "%s.tmp", st_path);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    fmt_write_all(victim, "junk", 4);
    CHECK(symlink(victim, planted) == 0, "symlink");
    CHECK(txlm_session_save_file(sa, st_path) == TXLM_OK, "save beside a planted link: %s", txlm_last_error());
    CHECK(same_file(victim, (const uint8_t *)"junk", 4), "the planted link was followed");
    unlink(planted);
    unlink(victim);
    CHECK(!same_file(st_path, good, len) && others(dir, "s.state", "a.txlm") == 0, "new state in place, no temporary");
    CHECK(txlm_session_restore_file(sa2, st_path) == TXLM_OK, "restore the new state: %s", txlm_last_error());
    /* A FIFO is refused at once, not waited on. */
    char fifo[4200];
    snprintf(fifo, sizeof fifo, "%s/fifo.state", dir);
    CHECK(mkfifo(fifo, 0644) == 0, "mkfifo");
    alarm(60);
    st = txlm_session_restore_file(sa2, fifo);
    alarm(0);
    CHECK_STATUS(st, TXLM_ERR_IO, "a FIFO");
    unlink(fifo);
    /* A directory that does not exist: an error, nothing else. */
    char nodir[4200];
    snprintf(nodir, sizeof nodir, "%s/missing/s.state", dir);
    st = txlm_session_save_file(sa, nodir);
    CHECK_STATUS(st, TXLM_ERR_IO, "missing");

    free(good);
    CHECK(txlm_context_validation_messages(ctx) == 0, "validation messages");
    txlm_session_free(sa);
    txlm_session_free(sa2);
    txlm_session_free(sb);
    txlm_model_free(a);
    txlm_model_free(b);
    txlm_context_destroy(ctx);
    unlink(st_path);
    unlink(a_path);
    return flt_finish("state files", dir);
}
