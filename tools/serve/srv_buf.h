/* A growable byte buffer for answers and streamed events: appends never
 * fail loudly; a failed allocation marks the buffer (oom) and the answer
 * becomes a 500. */
#ifndef TXLM_SRV_BUF_H
#define TXLM_SRV_BUF_H

#include <stddef.h>

typedef struct srv_buf {
    char *p;
    size_t len, cap;
    int oom;
} srv_buf;

void srv_buf_add(srv_buf *b, const void *data, size_t n);
/* Room for n more bytes at once (a body of a known length grows without copies). */
void srv_buf_reserve(srv_buf *b, size_t n);
void srv_buf_str(srv_buf *b, const char *s);
void srv_buf_printf(srv_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Drops the first n bytes. */
void srv_buf_consume(srv_buf *b, size_t n);
void srv_buf_free(srv_buf *b);

/* The length of the longest prefix of s[0..n) that is whole, valid UTF-8
 * (a sequence cut at the end is left out, to be completed later). */
size_t srv_utf8_whole(const char *s, size_t n);
/* s[0..n) with every byte that is not part of valid UTF-8 replaced by
 * U+FFFD, NUL-terminated (malloc'd), or NULL when out of memory: JSON
 * strings must be UTF-8, and a byte model's tokens need not be. */
char *srv_utf8_clean(const char *s, size_t n);

#endif
