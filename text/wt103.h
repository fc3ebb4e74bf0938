/* The WikiText-103 text convention (vocabulary flag TXLM_VOCAB_WT103_NORM):
 * raw text -> the pre-tokenised form the wt103 vocabulary was built from,
 * and back. docs/tokenizers.md lists every rule. */
#ifndef TXLM_WT103_H
#define TXLM_WT103_H

#include <stddef.h>
#include <stdint.h>

#include "wt103_class_bits.h"

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

/* c as UTF-8 into u; returns its length (1..4). */
size_t wt_utf8_encode(uint32_t c, char u[4]);

/* Character classes, as sacremoses defines them (docs/tokenizers.md). */
static inline unsigned wt_class(uint32_t c)
{
    return c < WT_CLASS_LIMIT ? txlm_wt_class_blocks[txlm_wt_class_index[c >> 7]][c & 127] : 0;
}
static inline int wt_is_space(uint32_t c) { return (wt_class(c) & WT_SPACE) != 0; }        /* str.isspace */
static inline int wt_is_alpha(uint32_t c) { return (wt_class(c) & WT_T_ALPHA) != 0; }      /* tokenizer IsAlpha */
static inline int wt_is_alnum(uint32_t c) { return (wt_class(c) & WT_T_ALNUM) != 0; }      /* tokenizer IsAlnum */
static inline int wt_is_detok_alpha(uint32_t c) { return (wt_class(c) & WT_D_ALPHA) != 0; } /* detokenizer IsAlpha */
static inline int wt_is_digit(uint32_t c) { return (wt_class(c) & WT_DIGIT) != 0; }        /* re's \d */
static inline int wt_is_number(uint32_t c) { return (wt_class(c) & WT_NUMBER) != 0; }      /* IsN */
static inline int wt_is_lower(uint32_t c) { return (wt_class(c) & WT_LOWER) != 0; }        /* IsLower */
static inline int wt_is_currency(uint32_t c) { return (wt_class(c) & WT_CURRENCY) != 0; }  /* IsSc */
int wt_is_cjk(uint32_t c); /* the detokenizer's CJK ranges */
uint32_t wt_to_lower(uint32_t c);

/* One line of raw text (no '\n') -> its tokens, separated by single spaces,
 * in *out (replacing its contents). lower_case lower-cases first. Returns 0,
 * or -1 when out of memory. */
int txlm_wt103_tokenize(const char *line, size_t len, int lower_case, wt_buf *out);

/* Where each token of one line came from: toks[0..tn) is what
 * txlm_wt103_tokenize gave for line[0..len) (n tokens); token k receives
 * the bytes [begin[k], end[k]) of the line whose characters it holds
 * (wt103_spans.c says how each rule is traced). Returns the number of
 * tokens whose span is a guess (0 unless the rules did something the
 * tracing cannot follow, as malformed UTF-8 that a removed character
 * completes), or -1 when out of memory. */
long txlm_wt103_spans(const char *line, size_t len, int lower_case, const char *toks, size_t tn, size_t n, size_t *begin,
                      size_t *end);

/* The tokens of one line -> text (the reverse), appended to *out. */
int txlm_wt103_detokenize(const char *const *tok, const size_t *tok_len, size_t n, wt_buf *out);

/* What the detokenizer replaces first, in this order, each everywhere in
 * the line: the dash joins and the XML entities (no two occurrences of
 * these overlap, and no replacement makes a later pattern appear). */
#define WT_UNESCAPE_N 12
extern const char *const wt_unescape[WT_UNESCAPE_N][2];

/* The Moses detokenizer's pass over the whitespace-separated tokens of one
 * line (after the @-@ joins and XML unescaping), one token at a time: each
 * token's spacing depends only on the tokens before it. */
typedef struct wt_quotes {
    char key[8][16];
    int count[8];
    int n;
} wt_quotes; /* quote counts per spelling of the quote token */
typedef struct wt_moses {
    wt_quotes q;
    size_t i;           /* tokens so far */
    uint32_t prev_last; /* the previous token's last code point */
    char prev_byte;     /* and last byte */
    const char *pre;    /* what goes before the next token unless it glues left */
} wt_moses;
void wt_moses_init(wt_moses *m);
/* Appends the space before token p[0..n) (n > 0, no whitespace), if any, and the token. */
int wt_moses_token(wt_moses *m, const char *p, size_t n, wt_buf *out);

#endif
