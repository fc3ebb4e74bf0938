/* Tokenizers on fixed vocabularies of every kind. The first input byte
 * picks the vocabulary (kind, flags, with or without <unk>/<eos>); the rest
 * is text to encode (also with spans: the same ids, spans and words inside
 * the text) and, read as little-endian int32, ids to decode, whole and
 * through the streaming detokenizer (the pieces must be the whole). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "detok_stream.h"
#include "token_spans.h"
#include "tokenizer.h"
#include "txlm_layout.h"

#define N_VOCABS 7

static txlm_vocab vocabs[N_VOCABS];
static uint32_t offsets[N_VOCABS][300];
static char blobs[N_VOCABS][2048];

static void add(int k, const char *sym, uint32_t len)
{
    txlm_vocab *v = &vocabs[k];
    memcpy(blobs[k] + v->blob_size, sym, len);
    v->blob_size += len;
    offsets[k][++v->n] = v->blob_size;
}

static void build(void)
{
    static const char *words[] = {"<eos>", "<unk>", "the", "The", "a", "cat", "sat", "on", "mat", ".", ",", "@-@", "caf\xc3\xa9",
                                  "\xe2\x82\xac", "'s", "n't", "=", "1", "2", "<formula>"};
    const int nw = (int)(sizeof words / sizeof words[0]);
    for (int k = 0; k < N_VOCABS; k++) {
        vocabs[k].offsets = offsets[k];
        vocabs[k].blob = blobs[k];
        vocabs[k].eos_id = vocabs[k].unk_id = -1;
    }
    /* 0: words with <eos>/<unk>, lower-casing; 1: words, wt103 flag, no <unk>. */
    for (int i = 0; i < nw; i++) add(0, words[i], (uint32_t)strlen(words[i]));
    vocabs[0].eos_id = 0, vocabs[0].unk_id = 1, vocabs[0].flags = TXLM_VOCAB_LOWER_CASE;
    for (int i = 2; i < nw; i++) add(1, words[i], (uint32_t)strlen(words[i]));
    vocabs[1].flags = TXLM_VOCAB_WT103_NORM;
    /* 2: every byte; 3: enwik8-style decimal symbols for some bytes, with <eos>. */
    for (int b = 0; b < 256; b++) {
        char c = (char)b;
        add(2, &c, 1);
    }
    vocabs[2].kind = TXLM_TOK_CHAR_BYTE;
    add(3, "<eos>", 5);
    for (int b = 32; b < 127; b++) {
        char s[4];
        int len = 0;
        if (b % 3 == 0) s[len++] = (char)('0' + b / 100), s[len++] = (char)('0' + b / 10 % 10), s[len++] = (char)('0' + b % 10);
        else s[len++] = (char)b;
        add(3, s, (uint32_t)len);
    }
    vocabs[3].kind = TXLM_TOK_CHAR_BYTE, vocabs[3].eos_id = 0;
    /* 4: text8 letters and '_' with <unk>; 5: text8 without <unk>. */
    for (int k = 4; k < 6; k++) {
        if (k == 4) add(k, "<unk>", 5);
        add(k, "_", 1);
        for (char c = 'a'; c <= 'z'; c++) add(k, &c, 1);
        vocabs[k].kind = TXLM_TOK_CHAR_TEXT8;
    }
    vocabs[4].unk_id = 0;
    /* 6: lm1b's words, <S> at both ends of every line, <UNK> */
    static const char *lm1b[] = {"<S>", "</S>", "<UNK>", "the", "cat", "sat", ".", "1"};
    for (size_t i = 0; i < sizeof lm1b / sizeof *lm1b; i++) add(6, lm1b[i], (uint32_t)strlen(lm1b[i]));
    vocabs[6].eos_id = 0, vocabs[6].unk_id = 2, vocabs[6].flags = TXLM_VOCAB_LINE_START_EOS;
}

/* The streaming detokenizer's pieces put together are the whole decode. */
static void streamed_equals(const txlm_tokenizer *t, const int32_t *ids, size_t n, const char *whole)
{
    txlm_detok *d = NULL;
    txlm_err e = {0, ""};
    fuzz_require(txlm_detok_create(t, &d, &e) == 0, "detokenizer built");
    size_t at = 0, want = strlen(whole);
    int nul = 0;
    for (size_t i = 0; i <= n; i++) {
        const char *p;
        size_t len;
        fuzz_require((i < n ? txlm_detok_push(d, ids[i], &p, &len, &e) : txlm_detok_flush(d, &p, &len, &e)) == 0,
                     "in-range ids stream");
        nul |= memchr(p, 0, len) != NULL; /* a byte vocabulary's byte 0 ends the whole decode's C string */
        fuzz_require(nul || (at + len <= want && !memcmp(whole + at, p, len)), "streamed pieces are the whole decode");
        at += len;
    }
    fuzz_require(nul || at == want, "streamed pieces are the whole decode");
    txlm_detok_free(d);
}

/* The same ids as encoding, every span and word inside the text, words in order. */
static void spans_agree(txlm_tokenizer *t, const char *text, size_t len, const int32_t *ids, size_t n)
{
    txlm_token_spans o;
    txlm_err e = {0, ""};
    fuzz_require(txlm_tok_spans(t, text, len, &o, &e) == 0, "text that encodes has spans");
    fuzz_require(o.n == n && (n == 0 || !memcmp(o.ids, ids, n * sizeof *ids)), "spans keep the ids");
    for (size_t k = 0; k < o.n; k++) {
        /* only lm1b's opening <S> spans no bytes */
        int opening = (txlm_tok_vocab(t)->flags & TXLM_VOCAB_LINE_START_EOS) && o.ids[k] == txlm_tok_vocab(t)->eos_id;
        fuzz_require((o.spans[k].begin < o.spans[k].end || (opening && o.spans[k].begin == o.spans[k].end)) &&
                         o.spans[k].end <= len, "a span inside the text");
        fuzz_require(o.word[k] == TXLM_NO_WORD || o.word[k] < o.n_words, "a token's word exists");
    }
    for (size_t w = 0; w < o.n_words; w++)
        fuzz_require(o.words[w].begin < o.words[w].end && o.words[w].end <= len && (w == 0 || o.words[w - 1].end <= o.words[w].begin),
                     "words inside the text, in order");
    txlm_tok_spans_free(&o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int built;
    if (!built) build(), built = 1;
    if (size < 1) return 0;
    const txlm_vocab *v = &vocabs[data[0] % N_VOCABS];
    txlm_tokenizer *t = NULL;
    txlm_err err = {0, ""};
    fuzz_require(txlm_tok_create(v, &t, &err) == 0, "tokenizer built");
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    int32_t *ids = NULL;
    size_t n = 0;
    int rc = txlm_tok_encode(t, text, len, &ids, &n, &err);
    if (rc == 0) {
        for (size_t i = 0; i < n; i++) fuzz_require(ids[i] >= 0 && (uint32_t)ids[i] < v->n, "ids inside the vocabulary");
        spans_agree(t, text, len, ids, n);
        char *back = NULL;
        fuzz_require(txlm_tok_decode(t, ids, n, &back, &err) == 0, "encoded ids decode");
        free(back);
    } else {
        fuzz_require(err.code == rc && err.msg[0], "a status and a message on failure");
    }
    free(ids);
    size_t m = len / 4;
    int32_t *raw = malloc((m ? m : 1) * sizeof *raw);
    if (raw) {
        memcpy(raw, text, m * 4);
        char *out = NULL;
        txlm_err e2 = {0, ""};
        if (txlm_tok_decode(t, raw, m, &out, &e2) == 0) {
            fuzz_require(out != NULL, "decoded text");
            streamed_equals(t, raw, m, out);
        } else fuzz_require(e2.code && e2.msg[0], "a status and a message on failure");
        free(out);
        free(raw);
    }
    txlm_tok_free(t);
    return 0;
}
