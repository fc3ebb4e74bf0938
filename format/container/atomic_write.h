/* Every file txlm writes goes through here (atomic_write.c): the data goes
 * to a temporary file that nothing planted in the directory can redirect,
 * is synced, and replaces the output by rename only once complete. */
#ifndef TXLM_ATOMIC_WRITE_H
#define TXLM_ATOMIC_WRITE_H

#include <stddef.h>

#include "errmsg.h"

typedef struct txlm_atomic {
    int fd;     /* the temporary file: write, pwrite or ftruncate it */
    int live;   /* between a successful open and commit or abort */
    int named;  /* the temporary has a name on disk (tmp) that abort must remove */
    char *path; /* the output */
    char *dir;  /* the output's directory */
    char *tmp;  /* the temporary's name: random, created exclusively (see atomic_write.c) */
} txlm_atomic;

/* Creates the temporary file for `path` in path's directory. Refuses a
 * path that names a directory, a device, a FIFO or a socket (a symbolic
 * link at path is replaced, never followed). */
int txlm_atomic_open(txlm_atomic *a, const char *path, txlm_err *err);
/* Appends n bytes (the caller may also pwrite a->fd). */
int txlm_atomic_write(txlm_atomic *a, const void *data, size_t n, txlm_err *err);
/* fsyncs the data, names it, renames it onto the output and fsyncs the
 * directory. On failure the output is as it was and no temporary remains;
 * either way `a` is released. */
int txlm_atomic_commit(txlm_atomic *a, txlm_err *err);
/* Drops the temporary file and releases `a` (safe on a zeroed or released one). */
void txlm_atomic_abort(txlm_atomic *a);
/* open + write + commit of one buffer. */
int txlm_atomic_write_file(const char *path, const void *data, size_t n, txlm_err *err);
/* The same for n outputs (NULL paths skipped): all are written in full
 * before the first replaces anything, so a failure while writing leaves
 * every old output as it was. */
int txlm_atomic_write_files(int n, const char *const *paths, const void *const *data, const size_t *sizes, txlm_err *err);

/* Tests: the fault point of every later write in this process ("fail",
 * "kill", "named"; NULL: none), in place of TXLM_FAULT_OUTPUT's. Set it
 * while no other thread writes. */
void txlm_atomic_fault(const char *point);

#endif
