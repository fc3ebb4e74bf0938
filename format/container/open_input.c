/* Inputs are opened with O_NONBLOCK: opening a FIFO for reading otherwise
 * waits for a writer, possibly forever, before anything can look at what
 * the path names. Once fstat says it is a regular file, the flag is
 * cleared (it means nothing for regular files, but stdio need not know). */
#include "open_input.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <txlm_status.h>

const char *txlm_file_kind(unsigned mode)
{
    switch ((mode_t)mode & S_IFMT) {
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    case S_IFREG: return "a regular file";
    default: return "of an unknown kind";
    }
}

int txlm_open_input(const char *path, int *fd, txlm_err *err)
{
    *fd = -1;
    if (!path || !*path) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "no input path");
    int f = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (f < 0) return txlm_fail(err, TXLM_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(f, &st) != 0) rc = txlm_fail(err, TXLM_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = txlm_fail(err, TXLM_ERR_IO, "%s: not a regular file (%s); inputs must be regular files", path, txlm_file_kind(st.st_mode));
    else if (fcntl(f, F_SETFL, fcntl(f, F_GETFL) & ~O_NONBLOCK) != 0)
        rc = txlm_fail(err, TXLM_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (rc) {
        close(f);
        return rc;
    }
    *fd = f;
    return 0;
}

int txlm_fopen_input(const char *path, FILE **f, txlm_err *err)
{
    int fd;
    *f = NULL;
    int rc = txlm_open_input(path, &fd, err);
    if (rc) return rc;
    if (!(*f = fdopen(fd, "rb"))) {
        rc = txlm_fail(err, TXLM_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
    }
    return rc;
}
