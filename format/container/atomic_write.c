/* Writing an output file so that it cannot be redirected and is never torn.
 *
 * A fixed temporary name such as "<path>.tmp" lets anyone who can write to
 * the directory plant a symbolic link there and have the output written
 * through it onto a file of their choice. So the temporary file is either
 * unnamed (O_TMPFILE: nothing to plant, and a process killed while writing
 * leaves nothing) and linked under a random name only once complete, or,
 * where the filesystem lacks O_TMPFILE, created under a random name with
 * O_CREAT | O_EXCL | O_NOFOLLOW, which fails on anything already there,
 * symbolic links included. Either way the data is fsynced before the
 * rename onto the output, and the directory after it.
 *
 * Fault injection (docs/reliability.md): TXLM_FAULT_OUTPUT=fail fails
 * once the data is complete, before it is named; =kill kills the process
 * (SIGKILL) at that point; =named skips O_TMPFILE, as on a filesystem
 * without it. The variable is read once, at the first write; tests in one
 * process switch it with txlm_atomic_fault. */
/* O_TMPFILE, getrandom and linkat's AT_SYMLINK_FOLLOW on /proc links are Linux (GNU) extensions. */
#define _GNU_SOURCE
#include "atomic_write.h"
#include "open_input.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <txlm_status.h>

#define NAME_TRIES 64 /* random names tried before giving up (a collision is 1 in 2^48) */
#define BASE_KEEP 200 /* bytes of the output's name kept in the temporary's, within NAME_MAX */

static pthread_once_t fault_once = PTHREAD_ONCE_INIT;
static char fault_point[16]; /* TXLM_FAULT_OUTPUT, or what a test set; "" none */

static void read_fault(void)
{
    const char *v = getenv("TXLM_FAULT_OUTPUT");
    snprintf(fault_point, sizeof fault_point, "%s", v ? v : "");
}

void txlm_atomic_fault(const char *point)
{
    pthread_once(&fault_once, read_fault);
    snprintf(fault_point, sizeof fault_point, "%s", point ? point : "");
}

static int fault(const char *what)
{
    pthread_once(&fault_once, read_fault);
    return strcmp(fault_point, what) == 0;
}

static uint64_t random_bits(void)
{
    uint64_t r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r) return r;
    /* No entropy yet (early boot): names need only be unpredictable enough
     * that O_EXCL retries are rare; O_EXCL itself is what keeps them safe. */
    static _Atomic uint64_t counter;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    r = (uint64_t)t.tv_nsec ^ ((uint64_t)t.tv_sec << 30) ^ ((uint64_t)getpid() << 40) ^ (counter++ * 0x9e3779b97f4a7c15ull);
    r ^= r >> 29;
    return r * 0xbf58476d1ce4e5b9ull;
}

/* "<dir>/<name>.<12 hex digits>.tmp" into a->tmp. */
static void random_name(txlm_atomic *a)
{
    const char *slash = strrchr(a->path, '/');
    size_t dir_len = slash ? (size_t)(slash - a->path) + 1 : 0;
    const char *base = a->path + dir_len;
    size_t base_len = strlen(base);
    snprintf(a->tmp, strlen(a->path) + 32, "%.*s%.*s.%012llx.tmp", (int)dir_len, a->path,
             (int)(base_len < BASE_KEEP ? base_len : BASE_KEEP), base,
             (unsigned long long)(random_bits() & 0xffffffffffffull));
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* Refuses what a rename must not replace (or cannot): directories, devices,
 * FIFOs, sockets. A symbolic link is fine: rename replaces the link. */
static int check_target(const char *path, txlm_err *err)
{
    const char *slash = strrchr(path, '/');
    if (!*path || (slash && !slash[1]))
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: not a file name (ends with '/')", path);
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
        return txlm_fail(err, TXLM_ERR_IO, "%s: is %s; only a regular file is replaced", path, txlm_file_kind(st.st_mode));
    return 0;
}

/* An unnamed file in the directory, usable only if /proc can name it later. */
static int open_unnamed(txlm_atomic *a)
{
#ifdef O_TMPFILE
    int fd = open(a->dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (fd < 0) return -1;
    char proc[64];
    struct stat st;
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    if (stat(proc, &st) == 0) return fd;
    close(fd);
    errno = EOPNOTSUPP;
    return -1;
#else
    (void)a;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

static int open_named(txlm_atomic *a)
{
    for (int i = 0; i < NAME_TRIES; i++) {
        random_name(a);
        int fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1;
}

static void release(txlm_atomic *a)
{
    if (a->live && a->fd >= 0) close(a->fd);
    free(a->path);
    free(a->dir);
    free(a->tmp);
    memset(a, 0, sizeof *a);
    a->fd = -1;
}

int txlm_atomic_open(txlm_atomic *a, const char *path, txlm_err *err)
{
    memset(a, 0, sizeof *a);
    a->fd = -1;
    if (!path) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "no output path");
    int rc = check_target(path, err);
    if (rc) return rc;
    a->path = strdup(path);
    a->dir = dir_of(path);
    a->tmp = malloc(strlen(path) + 32);
    if (!a->path || !a->dir || !a->tmp) {
        release(a);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    a->live = 1;
    int named = fault("named");
    if (!named) a->fd = open_unnamed(a);
    /* Without O_TMPFILE: old kernels say EISDIR (O_TMPFILE includes O_DIRECTORY), filesystems EOPNOTSUPP. */
    if (named || (a->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL))) {
        a->fd = open_named(a);
        a->named = a->fd >= 0;
    }
    if (a->fd < 0) {
        int e = errno;
        txlm_fail(err, TXLM_ERR_IO, "%s: cannot create a file in %s: %s", path, a->dir, strerror(e));
        release(a);
        return TXLM_ERR_IO;
    }
    return 0;
}

int txlm_atomic_write(txlm_atomic *a, const void *data, size_t n, txlm_err *err)
{
    const char *p = data;
    while (n) {
        ssize_t w = write(a->fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return txlm_fail(err, TXLM_ERR_IO, "%s: write failed: %s", a->path, w < 0 ? strerror(errno) : "no progress");
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Gives the unnamed file a random name in its directory. linkat never
 * replaces what is there, so a planted name is an EEXIST and another try. */
static int link_unnamed(txlm_atomic *a)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", a->fd);
    for (int i = 0; i < NAME_TRIES; i++) {
        random_name(a);
        if (linkat(AT_FDCWD, proc, AT_FDCWD, a->tmp, AT_SYMLINK_FOLLOW) == 0) return a->named = 1, 0;
        if (errno != EEXIST) return -1;
    }
    return -1;
}

static int sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

int txlm_atomic_commit(txlm_atomic *a, txlm_err *err)
{
    if (!a->live || a->fd < 0) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "output file not open");
    if (fault("kill")) raise(SIGKILL);
    const char *step = NULL;
    if (fsync(a->fd) != 0) step = "fsync failed";
    else if (fault("fail")) errno = EIO, step = "failed (TXLM_FAULT_OUTPUT=fail)";
    else if (!a->named && link_unnamed(a) != 0) step = "cannot name the temporary file";
    int fd = a->fd;
    a->fd = -1;
    if (close(fd) != 0 && !step) step = "close failed";
    if (!step && check_target(a->path, err)) step = "";
    if (!step && rename(a->tmp, a->path) != 0) step = "cannot rename the temporary file onto it";
    if (step) {
        int e = errno;
        if (*step) txlm_fail(err, TXLM_ERR_IO, "%s: %s: %s", a->path, step, strerror(e));
        txlm_atomic_abort(a);
        return TXLM_ERR_IO;
    }
    /* The rename must reach the disk too. Past it the new file is in place
     * and complete; a failure here is reported but cannot bring the old one back. */
    int rc = sync_dir(a->dir) ? txlm_fail(err, TXLM_ERR_IO, "%s: written, but syncing %s failed: %s", a->path, a->dir,
                                          strerror(errno))
                              : 0;
    a->named = 0;
    release(a);
    return rc;
}

void txlm_atomic_abort(txlm_atomic *a)
{
    if (!a) return;
    if (a->named && a->tmp) unlink(a->tmp);
    a->named = 0;
    release(a);
}

int txlm_atomic_write_file(const char *path, const void *data, size_t n, txlm_err *err)
{
    return txlm_atomic_write_files(1, &path, &data, &n, err);
}

int txlm_atomic_write_files(int n, const char *const *paths, const void *const *data, const size_t *sizes, txlm_err *err)
{
    txlm_atomic *a = calloc((size_t)n, sizeof *a);
    if (!a) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    int rc = 0;
    for (int k = 0; k < n && !rc; k++)
        if (paths[k] && !(rc = txlm_atomic_open(&a[k], paths[k], err))) rc = txlm_atomic_write(&a[k], data[k], sizes[k], err);
    for (int k = 0; k < n && !rc; k++)
        if (paths[k]) rc = txlm_atomic_commit(&a[k], err);
    for (int k = 0; k < n; k++) txlm_atomic_abort(&a[k]);
    free(a);
    return rc;
}
