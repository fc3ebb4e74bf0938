/* Opening an input file without ever blocking on it (open_input.c). */
#ifndef TXLM_OPEN_INPUT_H
#define TXLM_OPEN_INPUT_H

#include <stdio.h>

#include "errmsg.h"

/* Opens path read-only and returns its descriptor in *fd, or an error
 * naming path when it is not a regular file (a FIFO, a device, a socket,
 * a directory): such a file could block the open or the reads forever, or
 * never end. */
int txlm_open_input(const char *path, int *fd, txlm_err *err);
/* The same as a stdio stream ("rb") in *f. */
int txlm_fopen_input(const char *path, FILE **f, txlm_err *err);
/* "a FIFO", "a directory", ... for a struct stat st_mode, in messages. */
const char *txlm_file_kind(unsigned mode);

#endif
