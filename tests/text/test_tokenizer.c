/* The tokenizer's modes on small vocabularies built here: words (<unk>,
 * <eos> per line end, lower-casing), words with the wt103 rules, bytes
 * (enwik8: a symbol is the byte itself or its decimal value) and text8
 * ('_' for space), each with its decode. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tok_test.h"
#include "tokenizer.h"

/* Encodes text and compares with want (n ids); decodes want and compares
 * with back (NULL: no decode check). */
static void expect(const txlm_vocab *v, const char *text, size_t len, const int32_t *want, size_t n, const char *back)
{
    txlm_tokenizer *t;
    txlm_err e = {0};
    if (txlm_tok_create(v, &t, &e)) {
        failures++;
        return;
    }
    int32_t *ids = NULL;
    size_t got = 0;
    int rc = txlm_tok_encode(t, text, len, &ids, &got, &e);
    CHECK(rc == 0);
    int same = rc == 0 && got == n && (n == 0 || !memcmp(ids, want, n * sizeof *ids));
    if (!same) {
        fprintf(stderr, "encode [%.*s]: %s, got", (int)len, text, e.msg);
        for (size_t i = 0; i < got; i++) fprintf(stderr, " %d", ids[i]);
        fputc('\n', stderr);
        failures++;
    }
    free(ids);
    if (back) {
        char *s = NULL;
        rc = txlm_tok_decode(t, want, n, &s, &e);
        if (rc || strcmp(s, back)) {
            fprintf(stderr, "decode: got [%s], want [%s]\n", s ? s : e.msg, back);
            failures++;
        }
        free(s);
    }
    txlm_tok_free(t);
}

static void expect_error(const txlm_vocab *v, const char *text, const char *msg_part)
{
    txlm_tokenizer *t;
    txlm_err e = {0};
    if (txlm_tok_create(v, &t, &e)) {
        failures++;
        return;
    }
    int32_t *ids = NULL;
    size_t n = 0;
    int rc = txlm_tok_encode(t, text, strlen(text), &ids, &n, &e);
    if (rc == 0 || !strstr(e.msg, msg_part)) {
        fprintf(stderr, "encode [%s]: rc %d, message [%s], wanted [%s]\n", text, rc, e.msg, msg_part);
        failures++;
    }
    CHECK(ids == NULL);
    int32_t bad = (int32_t)v->n;
    char *s = NULL;
    CHECK(txlm_tok_decode(t, &bad, 1, &s, &e) != 0 && s == NULL && strstr(e.msg, "outside the vocabulary"));
    txlm_tok_free(t);
}

static void words(void)
{
    static const char *const sym[] = {"<eos>", "<unk>", "the", "cat", "sat", "The", "caf\xC3\xA9", "-"};
    vocab_store s;
    make_vocab(&s, sym, 8, TXLM_TOK_WORD, 0);
    const char *text = "the cat\nsat  on\tThe mat\n\ncaf\xC3\xA9 -";
    static const int32_t want[] = {2, 3, 0, 4, 1, 5, 1, 0, 0, 6, 7};
    expect(&s.v, text, strlen(text), want, 11, "the cat\nsat <unk> The <unk>\n\ncaf\xC3\xA9 -");
    /* lower-casing: "The" is looked up as "the" */
    make_vocab(&s, sym, 8, TXLM_TOK_WORD, TXLM_VOCAB_LOWER_CASE);
    static const int32_t low[] = {2, 3, 4};
    expect(&s.v, "The CAT Sat", 11, low, 3, "the cat sat");
    /* a word longer than any symbol buffer is unknown, not an overflow */
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    static const int32_t unk[] = {1};
    expect(&s.v, big, strlen(big), unk, 1, NULL);
    /* no <unk>: an unknown word is an error naming it */
    static const char *const no_unk[] = {"<eos>", "a", "b"};
    make_vocab(&s, no_unk, 3, TXLM_TOK_WORD, 0);
    expect_error(&s.v, "a b zebra", "\"zebra\" at byte 4");
    static const int32_t empty[1] = {0};
    expect(&s.v, "", 0, empty, 0, "");
}

static void wt103_words(void)
{
    static const char *const sym[] = {"<eos>", "<unk>", "Hello", ",", "world", "@-@", "wide", ".", "Bye", "'s",
                                      "It", "5", "@,@", "000"};
    vocab_store s;
    make_vocab(&s, sym, 14, TXLM_TOK_WORD, TXLM_VOCAB_WT103_NORM);
    const char *text = "Hello, world-wide.\nIt's 5,000 Bye\n";
    static const int32_t want[] = {2, 3, 4, 5, 6, 7, 0, 10, 9, 11, 12, 13, 8, 0};
    expect(&s.v, text, strlen(text), want, 14, "Hello, world-wide.\nIt's 5,000 Bye\n");
    /* without the flag the same vocabulary splits on spaces only */
    make_vocab(&s, sym, 14, TXLM_TOK_WORD, 0);
    static const int32_t plain[] = {1, 1};
    expect(&s.v, "Hello, world-wide.", 18, plain, 2, NULL);
}

static void bytes(void)
{
    /* enwik8: decimal byte values, and a symbol that is the byte itself */
    static const char *const sym[] = {"97", "98", "10", "32", "c", "195", "169", "<unk>"};
    vocab_store s;
    make_vocab(&s, sym, 8, TXLM_TOK_CHAR_BYTE, 0);
    const char *text = "ab\n c\xC3\xA9z";
    static const int32_t want[] = {0, 1, 2, 3, 4, 5, 6, 7};
    expect(&s.v, text, strlen(text), want, 8, NULL);
    static const int32_t back[] = {0, 1, 2, 3, 4, 5, 6};
    expect(&s.v, text, 7, back, 7, "ab\n c\xC3\xA9");
    /* a zero byte in the middle is a byte like any other */
    static const char *const with0[] = {"0", "120", "<unk>"};
    make_vocab(&s, with0, 3, TXLM_TOK_CHAR_BYTE, 0);
    static const int32_t zero[] = {1, 0, 1};
    expect(&s.v, "x\0x", 3, zero, 3, NULL);
    static const char *const no_unk[] = {"97"};
    make_vocab(&s, no_unk, 1, TXLM_TOK_CHAR_BYTE, 0);
    expect_error(&s.v, "aab", "byte 0x62 at offset 2");
}

static void text8(void)
{
    static const char *const sym[] = {"_", "a", "b", "<eos>"};
    vocab_store s;
    make_vocab(&s, sym, 4, TXLM_TOK_CHAR_TEXT8, 0);
    static const int32_t want[] = {1, 2, 0, 2, 1, 3, 1};
    expect(&s.v, "ab ba\na", 7, want, 7, "ab ba\na");
    expect_error(&s.v, "abc", "byte 0x63 at offset 2");
}

int main(void)
{
    words();
    wt103_words();
    bytes();
    text8();
    printf("%d failures\n", failures);
    return failures != 0;
}
