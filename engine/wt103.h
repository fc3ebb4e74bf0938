/* The WikiText-103 text convention (vocabulary flag TXLM_VOCAB_WT103_NORM):
 * raw text -> the pre-tokenised form the wt103 vocabulary was built from,
 * and back. docs/tokenizers.md lists every rule. */
#ifndef TXLM_WT103_H
#define TXLM_WT103_H

#include <stddef.h>
#include <stdint.h>

/* A growable byte string (not NUL-terminated unless wt_buf_cstr is called). */
typedef struct wt_buf {
    char *p;
    size_t n, cap;
} wt_buf;

int wt_buf_put(wt_buf *b, const char *s, size_t n);
/* One byte; the common case (room left) inline, as the rules add bytes one at a time. */
static inline int wt_buf_putc(wt_buf *b, char c)
{
    if (b->n + 2 <= b->cap) {
        b->p[b->n++] = c;
        return 0;
    }
    return wt_buf_put(b, &c, 1);
}
/* NUL-terminates (not counted in n); -1 when out of memory. */
int wt_buf_cstr(wt_buf *b);
void wt_buf_free(wt_buf *b);

/* One UTF-8 code point at s[0..n): the value (U+FFFD for a malformed
 * sequence) and its byte length (>= 1). */
uint32_t wt_utf8_slow(const char *s, size_t n, size_t *len);
static inline uint32_t wt_utf8(const char *s, size_t n, size_t *len)
{
    if ((unsigned char)s[0] < 0x80) {
        *len = 1;
        return (unsigned char)s[0];
    }
    return wt_utf8_slow(s, n, len);
}

/* Character classes, as the Moses scripts' Perl properties define them. */
int wt_is_space(uint32_t c);    /* Python's str.isspace */
int wt_is_alpha(uint32_t c);    /* \p{Alphabetic} */
int wt_is_alnum(uint32_t c);    /* \p{Alphabetic} or \p{Nd} */
int wt_is_digit(uint32_t c);    /* \p{Nd} */
int wt_is_number(uint32_t c);   /* \p{N} */
int wt_is_lower(uint32_t c);    /* \p{Lowercase} */
int wt_is_currency(uint32_t c); /* \p{Sc} */
int wt_is_cjk(uint32_t c);      /* the Moses detokenizer's CJK ranges */
uint32_t wt_to_lower(uint32_t c);

/* One line of raw text (no '\n') -> its tokens, separated by single spaces,
 * in *out (replacing its contents). lower_case lower-cases first. Returns 0,
 * or -1 when out of memory. */
int txlm_wt103_tokenize(const char *line, size_t len, int lower_case, wt_buf *out);

/* The tokens of one line -> text (the reverse), appended to *out. */
int txlm_wt103_detokenize(const char *const *tok, const size_t *tok_len, size_t n, wt_buf *out);

#endif
