/* Whole-file read-only mappings (file_map.c). */
#ifndef TXLM_FILE_MAP_H
#define TXLM_FILE_MAP_H

#include <stdint.h>

#include "errmsg.h"

/* A read-only mapping of a whole file; an empty file maps to len 0. */
typedef struct txlm_file_map {
    const uint8_t *data;
    uint64_t len;
} txlm_file_map;

/* Opens, checks it is a regular file, maps; returns 0 or the error code. */
int txlm_file_map_open(const char *path, txlm_file_map *m, txlm_err *err);
void txlm_file_map_close(txlm_file_map *m);

#endif
