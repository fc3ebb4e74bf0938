/* Outputs (format/container/atomic_write.c). A symbolic link planted at the old
 * temporary name ("<path>.tmp") is not followed and its target is
 * unchanged, with O_TMPFILE and without it (TXLM_FAULT_OUTPUT=named); a
 * link at the output itself is replaced, not written through. Every
 * failure (injected, file-size limit as a full disk, unwritable directory,
 * a directory or FIFO as output, no directory) leaves the old output byte
 * for byte and no temporary file. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <txlm.h>

#include "../common/tmpdir.h"
#include "atomic_write.h"
#include "fmt_common.h"

static char *dir;

static char *at(const char *name)
{
    static char buf[8][4096];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, 4096, "%s/%s", dir, name);
    return p;
}

static int holds(const char *path, const char *want)
{
    size_t len;
    uint8_t *b = fmt_read_all(path, &len);
    int same = b && len == strlen(want) && memcmp(b, want, len) == 0;
    free(b);
    return same;
}

static int is_regular(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void mode(const char *m) { txlm_atomic_fault(m); }

/* Runs txlm_atomic_write_file(path) of 64 KiB in a child, after `setup`;
 * returns its status (the call's code, or 128 + signal). */
static int in_child(const char *path, void (*setup)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (setup) setup();
        static char data[1 << 16];
        txlm_err err = {0, ""};
        int rc = txlm_atomic_write_file(path, data, sizeof data, &err);
        if (rc) fprintf(stderr, "  child: %s\n", err.msg);
        _exit(rc);
    }
    int ws = 0;
    if (pid < 0 || waitpid(pid, &ws, 0) != pid) return -1;
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static void small_disk(void)
{
    /* a file-size limit makes write fail with EFBIG, as a full disk fails with ENOSPC */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit r;
    getrlimit(RLIMIT_FSIZE, &r);
    r.rlim_cur = 4096;
    setrlimit(RLIMIT_FSIZE, &r);
}

static void kill_mode(void) { mode("kill"); }

static void nobody(void)
{
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(99);
}

static void planted(const char *m)
{
    mode(m);
    char *victim = at("victim"), *out = at("out.bin"), *old_tmp = at("out.bin.tmp");
    fmt_write_all(victim, "victim", 6);
    unlink(out);
    CHECK(symlink(victim, old_tmp) == 0, "symlink: %s", strerror(errno));
    txlm_err err = {0, ""};
    int rc = txlm_atomic_write_file(out, "new", 3, &err);
    CHECK(rc == 0, "%s: write beside a planted link: %s", m ? m : "O_TMPFILE", err.msg);
    CHECK(holds(victim, "victim"), "%s: the link's target was written", m ? m : "O_TMPFILE");
    CHECK(is_regular(out) && holds(out, "new"), "%s: the output is not the new regular file", m ? m : "O_TMPFILE");
    struct stat st;
    CHECK(lstat(old_tmp, &st) == 0 && S_ISLNK(st.st_mode), "the planted link was touched");
    CHECK(test_count_entries(dir) == 3, "%s: %d files, expected victim, link and output", m ? m : "O_TMPFILE", test_count_entries(dir));

    /* A link at the output itself is replaced by the new file. */
    unlink(out);
    CHECK(symlink(victim, out) == 0, "symlink: %s", strerror(errno));
    rc = txlm_atomic_write_file(out, "newer", 5, &err);
    CHECK(rc == 0 && is_regular(out) && holds(out, "newer") && holds(victim, "victim"), "a link at the output: %s", err.msg);
    unlink(out), unlink(old_tmp), unlink(victim);
    mode(NULL);
}

/* One failure: status `want`, message holding `needle`, the old output intact, no new file. */
static void expect_kept(const char *what, int rc, int want, const char *msg, const char *needle, const char *keep, int n)
{
    CHECK(rc == want, "%s: status %d, expected %d (%s)", what, rc, want, msg ? msg : "");
    if (msg && needle) CHECK(strstr(msg, needle) != NULL, "%s: message '%s' lacks '%s'", what, msg, needle);
    CHECK(holds(keep, "old"), "%s: the old output changed", what);
    CHECK(test_count_entries(dir) == n, "%s: %d files in the directory, expected %d", what, test_count_entries(dir), n);
}

static void failures(const char *m)
{
    const char *name = m ? m : "O_TMPFILE";
    char what[128];
    mode(m);
    char *keep = at("keep.bin");
    fmt_write_all(keep, "old", 3);
    txlm_err err = {0, ""};

    txlm_atomic_fault("fail");
    int rc = txlm_atomic_write_file(keep, "new", 3, &err);
    mode(m);
    snprintf(what, sizeof what, "%s, injected failure", name);
    expect_kept(what, rc, TXLM_ERR_IO, err.msg, "TXLM_FAULT_OUTPUT", keep, 1);

    snprintf(what, sizeof what, "%s, disk full", name);
    expect_kept(what, in_child(keep, small_disk), TXLM_ERR_IO, NULL, NULL, keep, 1);

    if (!m) { /* with a named temporary, a killed process leaves it: docs/reliability.md */
        expect_kept("killed before the rename", in_child(keep, kill_mode), 128 + SIGKILL, NULL, NULL, keep, 1);
    }

    /* Not allowed to write in the directory (as root, a child drops to nobody). */
    char *ro = at("ro"), ro_keep[4200];
    snprintf(ro_keep, sizeof ro_keep, "%s/keep.bin", ro);
    mkdir(ro, 0755);
    chmod(dir, 0755);
    fmt_write_all(ro_keep, "old", 3);
    if (geteuid() != 0) chmod(ro, 0555);
    rc = in_child(ro_keep, nobody);
    chmod(ro, 0755);
    snprintf(what, sizeof what, "%s, unwritable directory", name);
    CHECK(rc == TXLM_ERR_IO && holds(ro_keep, "old") && test_count_entries(ro) == 1, "%s: status %d, %d files", what, rc, test_count_entries(ro));
    unlink(ro_keep), rmdir(ro);

    /* A directory, a FIFO: refused before anything is written (a FIFO is never opened). */
    char *sub = at("sub"), *fifo = at("fifo");
    mkdir(sub, 0755);
    CHECK(mkfifo(fifo, 0644) == 0, "mkfifo: %s", strerror(errno));
    rc = txlm_atomic_write_file(sub, "new", 3, &err);
    snprintf(what, sizeof what, "%s, a directory as output", name);
    expect_kept(what, rc, TXLM_ERR_IO, err.msg, "is a directory", keep, 3);
    rc = txlm_atomic_write_file(fifo, "new", 3, &err);
    snprintf(what, sizeof what, "%s, a FIFO as output", name);
    expect_kept(what, rc, TXLM_ERR_IO, err.msg, "is a FIFO", keep, 3);
    rmdir(sub), unlink(fifo);
    rc = txlm_atomic_write_file(at("none/x.bin"), "new", 3, &err);
    expect_kept("no such directory", rc, TXLM_ERR_IO, err.msg, "none", keep, 1);
    rc = txlm_atomic_write_file(at("x/"), "new", 3, &err);
    expect_kept("a path ending in /", rc, TXLM_ERR_INVALID_ARGUMENT, err.msg, "x/", keep, 1);

    /* Opened, written, abandoned. */
    txlm_atomic a;
    CHECK(txlm_atomic_open(&a, keep, &err) == 0, "open: %s", err.msg);
    CHECK(txlm_atomic_write(&a, "new", 3, &err) == 0, "write: %s", err.msg);
    txlm_atomic_abort(&a);
    txlm_atomic_abort(&a); /* twice is harmless */
    snprintf(what, sizeof what, "%s, abort", name);
    expect_kept(what, 0, 0, NULL, NULL, keep, 1);

    /* And success replaces it. */
    CHECK(txlm_atomic_write_file(keep, "new", 3, &err) == 0 && holds(keep, "new") && test_count_entries(dir) == 1, "%s: replace: %s",
          name, err.msg);
    unlink(keep);
    mode(NULL);
}

/* The .txlm writer beside a link at its old temporary name. */
static void writer(void)
{
    fmt_model m;
    fmt_model_build(&m, 3, TXLM_TOK_CHAR_BYTE);
    char *victim = at("victim"), *out = at("m.txlm"), *old_tmp = at("m.txlm.tmp");
    fmt_write_all(victim, "victim", 6);
    CHECK(symlink(victim, old_tmp) == 0, "symlink: %s", strerror(errno));
    txlm_err err = {0, ""};
    CHECK(fmt_model_write(&m, out, &err) == 0, "writer: %s", err.msg);
    txlm_file *f = NULL;
    CHECK(holds(victim, "victim") && is_regular(out) && txlm_file_open(out, 0, &f, &err) == 0, "writer beside a link: %s",
          err.msg);
    txlm_file_close(f);
    CHECK(test_count_entries(dir) == 3, "writer: %d files", test_count_entries(dir));
    unlink(victim), unlink(out), unlink(old_tmp);
    fmt_model_free(&m);
}

int main(void)
{
    dir = fmt_mkdtemp();
    if (!dir) return 1;
    /* O_TMPFILE where the filesystem has it, else the named fallback (say which). */
    txlm_atomic a;
    txlm_err err = {0, ""};
    if (txlm_atomic_open(&a, at("probe"), &err) == 0) {
        printf("temporary files here: %s\n", a.named ? "named (no O_TMPFILE)" : "unnamed (O_TMPFILE)");
        txlm_atomic_abort(&a);
    }
    planted(NULL);
    planted("named");
    failures(NULL);
    failures("named");
    writer();
    fmt_rmdir(dir);
    if (fmt_failures) fprintf(stderr, "%d checks failed\n", fmt_failures);
    else printf("outputs: all checks passed\n");
    return fmt_failures != 0;
}
