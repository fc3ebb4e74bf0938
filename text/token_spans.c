/* Tokens with the bytes of the text they came from, and the text's words
 * (txlm_tokenize_spans, for txlm score --words). The ids are the
 * tokenizer's own (txlm_tok_encode); the spans follow the same cuts: a
 * character model's bytes, a word model's runs of non-blank bytes, a
 * wt103 model's lines traced through the rules (wt103_spans.c). */
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"
#include "token_spans.h"
#include "wt103.h"

/* isspace() of the C locale: where a word model cuts (tokenizer.c). */
static int blank(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* Appends a span, or counts it past the end (the caller then reports the mismatch). */
static void put(txlm_token_spans *o, size_t *k, size_t b, size_t e)
{
    if (*k < o->n) o->spans[*k] = (txlm_span){b, e};
    ++*k;
}

static size_t word_model_spans(const txlm_vocab *v, const char *s, size_t len, txlm_token_spans *o)
{
    size_t k = 0;
    int opens = (v->flags & TXLM_VOCAB_LINE_START_EOS) && v->eos_id >= 0;
    for (size_t i = 0; i < len;) {
        if (opens && (i == 0 || s[i - 1] == '\n')) put(o, &k, i, i); /* lm1b's opening <S>: no bytes */
        if (s[i] == '\n' || blank((unsigned char)s[i])) {
            if (s[i] == '\n' && v->eos_id >= 0) put(o, &k, i, i + 1);
            i++;
            continue;
        }
        size_t j = i;
        while (j < len && !blank((unsigned char)s[j])) j++;
        put(o, &k, i, j);
        i = j;
    }
    return k;
}

/* Each line's tokens traced through the wt103 rules; -1 when out of memory. */
static long wt103_model_spans(const txlm_vocab *v, const char *s, size_t len, txlm_token_spans *o, size_t *b, size_t *e)
{
    wt_buf toks = {0};
    size_t k = 0;
    int lower = (v->flags & TXLM_VOCAB_LOWER_CASE) != 0;
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(s + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - s) : len, cnt = 0;
        if (txlm_wt103_tokenize(s + i, end - i, lower, &toks)) return wt_buf_free(&toks), -1;
        for (size_t a = 0; a < toks.n; a++) cnt += a == 0 || toks.p[a - 1] == ' ';
        if (k + cnt > o->n) return wt_buf_free(&toks), (long)(k + cnt);
        long g = txlm_wt103_spans(s + i, end - i, lower, toks.p, toks.n, cnt, b + k, e + k);
        if (g < 0) return wt_buf_free(&toks), -1;
        o->guessed += (size_t)g;
        for (size_t q = 0; q < cnt; q++, k++) o->spans[k] = (txlm_span){i + b[k], i + e[k]};
        if (nl && v->eos_id >= 0) put(o, &k, end, end + 1);
        i = end + 1;
    }
    wt_buf_free(&toks);
    return (long)k;
}

/* Runs of characters that are not whitespace (str.isspace). */
static int find_words(const char *s, size_t len, txlm_token_spans *o)
{
    size_t cap = 16, l;
    o->words = malloc(cap * sizeof *o->words);
    for (size_t i = 0; o->words && i < len;) {
        if (wt_is_space(wt_utf8(s + i, len - i, &l))) {
            i += l;
            continue;
        }
        size_t b = i;
        while (i < len && !wt_is_space(wt_utf8(s + i, len - i, &l))) i += l;
        if (o->n_words == cap) {
            txlm_span *w = realloc(o->words, (cap *= 2) * sizeof *w);
            if (!w) return -1;
            o->words = w;
        }
        o->words[o->n_words++] = (txlm_span){b, i};
    }
    return o->words ? 0 : -1;
}

/* The first word ending after byte b. */
static size_t word_after(const txlm_token_spans *o, size_t b)
{
    size_t lo = 0, hi = o->n_words;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->words[mid].end > b) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* Which word each token belongs to; join[w] when word w and w + 1 are one. */
static void assign_words(const txlm_vocab *v, const char *s, txlm_token_spans *o, unsigned char *join)
{
    for (size_t k = 0; k < o->n; k++) {
        txlm_span sp = o->spans[k];
        size_t w = word_after(o, sp.begin), last = w;
        o->word[k] = TXLM_NO_WORD;
        if (w < o->n_words && o->words[w].begin < sp.end) {
            while (last + 1 < o->n_words && o->words[last + 1].begin < sp.end) join[last++] = 1;
            o->word[k] = w;
            continue;
        }
        /* only whitespace: a line break (or lm1b's opening <S>, no bytes),
         * a character model's blank, or a token the rules made from
         * whitespace between two words */
        int line_break = o->ids[k] == v->eos_id && ((sp.end == sp.begin + 1 && s[sp.begin] == '\n') || sp.end == sp.begin);
        if (v->kind != TXLM_TOK_WORD || line_break) continue;
        if (w > 0 && w < o->n_words) join[w - 1] = 1;
        o->word[k] = w > 0 ? w - 1 : w < o->n_words ? w : TXLM_NO_WORD;
    }
}

/* Words joined by a token become one; tokens are renumbered to match. */
static void merge_words(txlm_token_spans *o, const unsigned char *join, size_t *renum)
{
    size_t n = 0;
    for (size_t w = 0; w < o->n_words; w++) {
        if (w == 0 || !join[w - 1]) o->words[n++] = o->words[w];
        else o->words[n - 1].end = o->words[w].end;
        renum[w] = n - 1;
    }
    o->n_words = n;
    for (size_t k = 0; k < o->n; k++)
        if (o->word[k] != TXLM_NO_WORD) o->word[k] = renum[o->word[k]];
}

static int words_of_tokens(const txlm_vocab *v, const char *s, size_t len, txlm_token_spans *o)
{
    if (find_words(s, len, o)) return -1;
    unsigned char *join = calloc(o->n_words + 1, 1);
    size_t *renum = malloc((o->n_words + 1) * sizeof *renum);
    int rc = join && renum ? 0 : -1;
    if (!rc) {
        assign_words(v, s, o, join);
        merge_words(o, join, renum);
    }
    free(join);
    free(renum);
    return rc;
}

static int fill_spans(txlm_tokenizer *t, const char *text, size_t len, txlm_token_spans *o, txlm_err *err)
{
    const txlm_vocab *v = txlm_tok_vocab(t);
    size_t *b = NULL, *e = NULL, got = len;
    o->spans = malloc((o->n ? o->n : 1) * sizeof *o->spans);
    o->word = malloc((o->n ? o->n : 1) * sizeof *o->word);
    if (!o->spans || !o->word) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "tokenizer: out of memory");
    if (v->kind != TXLM_TOK_WORD)
        for (size_t i = 0; i < len && i < o->n; i++) o->spans[i] = (txlm_span){i, i + 1};
    else if (!(v->flags & TXLM_VOCAB_WT103_NORM)) got = word_model_spans(v, text, len, o);
    else {
        b = malloc((o->n ? o->n : 1) * sizeof *b);
        e = malloc((o->n ? o->n : 1) * sizeof *e);
        long r = b && e ? wt103_model_spans(v, text, len, o, b, e) : -1;
        free(b);
        free(e);
        if (r < 0) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "tokenizer: out of memory");
        got = (size_t)r;
    }
    if (got != o->n)
        return txlm_fail(err, TXLM_ERR_FORMAT, "tokenizer: %zu tokens traced back to the text, but it has %zu", got, o->n);
    if (words_of_tokens(v, text, len, o)) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "tokenizer: out of memory");
    return 0;
}

void txlm_tok_spans_free(txlm_token_spans *o)
{
    free(o->ids);
    free(o->spans);
    free(o->word);
    free(o->words);
    memset(o, 0, sizeof *o);
}

int txlm_tok_spans(txlm_tokenizer *t, const char *text, size_t len, txlm_token_spans *out, txlm_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = txlm_tok_encode(t, text, len, &out->ids, &out->n, err);
    if (!rc) rc = fill_spans(t, text, len, out, err);
    if (rc) txlm_tok_spans_free(out);
    return rc;
}
