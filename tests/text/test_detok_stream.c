/* Streaming detokenization against the whole-sequence form: for random
 * token sequences of every tokenizer kind (words, words with the wt103
 * rules, bytes, enwik8 decimal symbols, text8), the pieces txlm_detok_push
 * and txlm_detok_flush return put together are exactly what
 * txlm_tok_decode gives for the sequence, and a stream twice as long
 * costs twice the work (bytes examined, counted; never timed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detok_stream.h"
#include "tok_test.h"
#include "tokenizer.h"
#include "txlm.h"

/* Symbols that exercise every rule of the wt103 detokenizer: joins across
 * tokens, entities, quotes of each spelling, openers, closers, CJK,
 * currency, contractions, whitespace inside symbols, an empty symbol. */
static const char *const wt_syms[] = {
    "<eos>", "<unk>", "the", "dog", "s", "Joneses", "1", "000", "5", "@-@", "@,@", "@.@", "&amp;", "&quot;", "&apos;",
    "&lt;", "&gt;", "&#124;", "&bar;", "&#91;", "&#93;", "&bra;", "&ket;", "&", "amp;", "&am", "p;", "'", "\"", "``", "`",
    "''", "\xE2\x80\x9E", "\xE2\x80\x9C", "\xE2\x80\x9D", "'s", "'re", "'", "(", "[", "{", "\xC2\xBF", "\xC2\xA1", "$",
    "\xE2\x82\xAC", ",", ".", "?", "!", ":", ";", ")", "]", "}", "%", "\\", "(,", "$(", ").", "\xE6\x97\xA5", "\xE6\x9C\xAC",
    "\xE3\x82\xAB", "\xE1\x84\x80", "a b", "q @-@", "@-@ z", "x &quot", "; y", "a\xC2\xA0" "b", "", "-", "@", "@,", ",@",
    " ", "'\xE3\x82\xAB", "'1", "caf\xC3\xA9", "\xD0\xB4", "@.@ @,@", "&amp;quot;", "@-@@-@",
};

static uint32_t rng = 12345;
static uint32_t next_rand(void)
{
    rng = rng * 1664525u + 1013904223u;
    return rng >> 8;
}

/* Streams ids through d; returns the pieces put together (malloc'd), *n bytes. */
static char *streamed(txlm_detok *d, const int32_t *ids, size_t n, size_t *len)
{
    size_t cap = 64, w = 0;
    char *out = malloc(cap);
    txlm_err e = {0};
    for (size_t i = 0; i <= n; i++) {
        const char *p;
        size_t l;
        int rc = i < n ? txlm_detok_push(d, ids[i], &p, &l, &e) : txlm_detok_flush(d, &p, &l, &e);
        CHECK(rc == 0 && p && p[l] == 0);
        if (rc) break;
        while (w + l + 1 > cap) out = realloc(out, cap *= 2);
        memcpy(out + w, p, l);
        w += l;
    }
    out[w] = 0;
    *len = w;
    return out;
}

/* rounds random sequences of 0..max ids drawn from [lo, v->n), each
 * streamed and decoded whole; one detokenizer serves them all. */
static void compare(const char *what, const txlm_vocab *v, int32_t lo, int rounds, size_t max)
{
    txlm_tokenizer *t;
    txlm_detok *d;
    txlm_err e = {0};
    if (txlm_tok_create(v, &t, &e) || txlm_detok_create(t, &d, &e)) {
        fprintf(stderr, "%s: %s\n", what, e.msg);
        failures++;
        return;
    }
    int32_t ids[64];
    int bad = 0;
    for (int r = 0; r < rounds && bad < 5; r++) {
        size_t n = next_rand() % (max + 1);
        for (size_t i = 0; i < n; i++) ids[i] = lo + (int32_t)(next_rand() % (v->n - (uint32_t)lo));
        char *whole = NULL, *got;
        size_t len;
        if (txlm_tok_decode(t, ids, n, &whole, &e)) break;
        got = streamed(d, ids, n, &len);
        if (len != strlen(whole) || memcmp(got, whole, len)) {
            if (bad++ < 3) {
                fprintf(stderr, "%s: streamed \"%s\"\n  whole    \"%s\"\n  ids", what, got, whole);
                for (size_t i = 0; i < n; i++) fprintf(stderr, " %d", ids[i]);
                fputc('\n', stderr);
            }
        }
        free(whole);
        free(got);
    }
    if (bad) fprintf(stderr, "%s: %d sequences differ\n", what, bad);
    failures += bad != 0;
    /* an id outside the vocabulary is refused and changes nothing */
    const char *p;
    size_t l;
    CHECK(txlm_detok_push(d, (int32_t)v->n, &p, &l, &e) == TXLM_ERR_INVALID_ARGUMENT && strstr(e.msg, "outside"));
    CHECK(txlm_detok_push(d, -1, &p, &l, &e) == TXLM_ERR_INVALID_ARGUMENT);
    txlm_detok_free(d);
    txlm_tok_free(t);
}

/* n tokens of one line with no <eos> through d: the bytes its stages
 * examined, and the most its buffers held at any point. */
static uint64_t stream_work(txlm_detok *d, const int32_t *pattern, size_t np, size_t n, size_t *held)
{
    const char *p;
    size_t l;
    txlm_err e = {0};
    uint64_t w0 = txlm_detok_work(d);
    *held = 0;
    for (size_t i = 0; i < n; i++) {
        txlm_detok_push(d, pattern[i % np], &p, &l, &e);
        if (txlm_detok_held(d) > *held) *held = txlm_detok_held(d);
    }
    txlm_detok_flush(d, &p, &l, &e);
    return txlm_detok_work(d) - w0;
}

/* Doubling a single-line stream doubles the work (bytes examined), and the
 * buffers do not grow with the line: the cost per token does not grow
 * with the stream. Counted, not timed: a loaded machine cannot fail it. */
static void linear_work(const txlm_vocab *v)
{
    txlm_tokenizer *t;
    txlm_detok *d;
    txlm_err e = {0};
    if (txlm_tok_create(v, &t, &e) || txlm_detok_create(t, &d, &e)) {
        failures++;
        return;
    }
    static const char *const words[] = {"the", "dog", ",", "1", "@,@", "000", "\"", "the", "\"", "(", "dog", ")", "'s", "@-@"};
    enum { NP = sizeof words / sizeof *words };
    int32_t pattern[NP];
    for (size_t i = 0; i < NP; i++) {
        pattern[i] = 0;
        for (uint32_t k = 0; k < v->n; k++) {
            uint32_t len;
            const char *s = txlm_vocab_sym(v, k, &len);
            if (len == strlen(words[i]) && !memcmp(s, words[i], len)) pattern[i] = (int32_t)k;
        }
        CHECK(pattern[i] != 0);
    }
    size_t n = 50000 / NP * NP, h1 = 0, h2 = 0; /* whole patterns: both streams end alike */
    uint64_t w1 = stream_work(d, pattern, NP, n, &h1), w2 = stream_work(d, pattern, NP, 2 * n, &h2);
    printf("wt103 stream: %zu tokens %llu bytes examined, %zu tokens %llu (ratio %.4f); buffers at most %zu and %zu bytes\n",
           n, (unsigned long long)w1, 2 * n, (unsigned long long)w2, (double)w2 / (double)w1, h1, h2);
    CHECK(w1 > n && w2 <= 2 * w1 + 64 && w2 + 64 >= 2 * w1);
    CHECK(h2 == h1 && h1 <= 1024);
    txlm_detok_free(d);
    txlm_tok_free(t);
}

int main(void)
{
    static vocab_store wt, word, bytes, dec, text8;
    uint32_t nwt = sizeof wt_syms / sizeof *wt_syms;
    make_vocab(&wt, wt_syms, nwt, TXLM_TOK_WORD, TXLM_VOCAB_WT103_NORM);
    compare("wt103", &wt.v, 0, 20000, 40);
    make_vocab(&word, wt_syms, nwt, TXLM_TOK_WORD, 0);
    compare("word", &word.v, 0, 5000, 40);
    make_vocab(&word, wt_syms, nwt, TXLM_TOK_WORD, TXLM_VOCAB_LOWER_CASE);
    compare("word, lower-case", &word.v, 0, 1000, 40);

    /* bytes: every byte as itself (but 0, which a C string cannot carry), plus <eos> and a symbol of no byte */
    static char one[256][2];
    const char *bsyms[258];
    for (int b = 0; b < 256; b++) one[b][0] = (char)b, bsyms[b] = one[b];
    bsyms[0] = "<eos>", bsyms[256] = "<unk>", bsyms[257] = "xyz";
    make_vocab(&bytes, bsyms, 258, TXLM_TOK_CHAR_BYTE, 0);
    compare("bytes", &bytes.v, 1, 2000, 40);
    /* enwik8: decimal symbols */
    static char num[300][8];
    const char *dsyms[300];
    for (int i = 0; i < 300; i++) snprintf(num[i], sizeof num[i], "%d", i + 1), dsyms[i] = num[i];
    dsyms[299] = "<eos>";
    make_vocab(&dec, dsyms, 300, TXLM_TOK_CHAR_BYTE, 0);
    compare("enwik8 decimal", &dec.v, 0, 2000, 40);
    static const char *const t8[] = {"<eos>", "_", "a", "b", "c", " ", "<unk>", "\xC3\xA9"};
    make_vocab(&text8, t8, 8, TXLM_TOK_CHAR_TEXT8, 0);
    compare("text8", &text8.v, 0, 2000, 40);

    linear_work(&wt.v);
    printf("%d failures\n", failures);
    return failures != 0;
}
