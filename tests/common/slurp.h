/* Reading a whole file in a test. */
#ifndef TXLM_TEST_COMMON_SLURP_H
#define TXLM_TEST_COMMON_SLURP_H

#include <stdio.h>
#include <stdlib.h>

/* The file's bytes plus a NUL (malloc'd), or NULL; *len (when len is not
 * NULL) receives the byte count. */
static inline char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    char *b = n >= 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) free(b), b = NULL;
    fclose(f);
    if (b) {
        b[n] = 0;
        if (len) *len = (size_t)n;
    }
    return b;
}

#endif
