/* Byte buffers and UTF-8 (srv_buf.h). */
#include "srv_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for `bytes` (and the closing NUL): exactly that much when `exact`, else doubling. 0, or -1 (marked oom). */
static int room(srv_buf *b, size_t bytes, int exact)
{
    if (bytes + 1 <= b->cap) return 0;
    size_t cap = exact ? bytes + 1 : b->cap ? b->cap : 256;
    while (cap < bytes + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) return b->oom = 1, -1;
    b->p = p, b->cap = cap;
    return 0;
}

void srv_buf_reserve(srv_buf *b, size_t n)
{
    if (!b->oom) room(b, b->len + n, 1);
}

void srv_buf_add(srv_buf *b, const void *data, size_t n)
{
    if (b->oom || n == 0 || room(b, b->len + n, 0)) return;
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = 0;
}

void srv_buf_str(srv_buf *b, const char *s) { srv_buf_add(b, s, strlen(s)); }

void srv_buf_printf(srv_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) return srv_buf_add(b, small, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    srv_buf_add(b, big, (size_t)n);
    free(big);
}

void srv_buf_consume(srv_buf *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
    } else {
        memmove(b->p, b->p + n, b->len - n);
        b->len -= n;
    }
    if (b->p) b->p[b->len] = 0;
}

void srv_buf_free(srv_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* The length of the valid sequence starting at s (n bytes left): 1..4, 0
 * when it is invalid, -1 when it is valid so far but cut off. */
static int utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    int len = c < 0x80 ? 1 : (c >= 0xc2 && c <= 0xdf) ? 2 : (c >= 0xe0 && c <= 0xef) ? 3 : (c >= 0xf0 && c <= 0xf4) ? 4 : 0;
    if (len <= 1) return len;
    /* the second byte's range excludes overlong forms, surrogates and code points above U+10FFFF */
    unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80, hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    for (int k = 1; k < len; k++) {
        if ((size_t)k >= n) return -1;
        unsigned d = s[k];
        if (k == 1 ? (d < lo || d > hi) : (d < 0x80 || d > 0xbf)) return 0;
    }
    return len;
}

size_t srv_utf8_whole(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        int k = utf8_seq(u + i, n - i);
        if (k < 0) return i;
        i += k ? (size_t)k : 1; /* an invalid byte is whole: it is replaced, not waited on */
    }
    return n;
}

char *srv_utf8_clean(const char *s, size_t n)
{
    char *out = malloc(3 * n + 1), *o = out;
    if (!out) return NULL;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        int k = utf8_seq(u + i, n - i);
        if (k > 0 && !(k == 1 && u[i] == 0)) {
            memcpy(o, s + i, (size_t)k);
            o += k, i += (size_t)k;
        } else {
            memcpy(o, "\xef\xbf\xbd", 3); /* U+FFFD; a NUL byte too, which would end a C string */
            o += 3, i++;
        }
    }
    *o = 0;
    return out;
}
