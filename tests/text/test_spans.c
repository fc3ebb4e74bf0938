/* Tokens traced back to the text (txlm_tokenize_spans, txlm score --words):
 * every token of the 60 wt103 sentences gets the exact bytes it came from
 * (hand-written spans for the rules that respell, pair or move
 * characters; for all of them, each span's characters spelt as the rules
 * spell them are the token, the spans never overlap and cover every
 * character the rules keep), the words are the sentence's whitespace-
 * delimited words; random lines of every rule's characters trace with no
 * guess; word models and character models with multi-byte UTF-8. */
#include <stdlib.h>
#include <string.h>

#include "tok_test.h"
#include "token_spans.h"
#include "tokenizer.h"
#include "wt103.h"
#include "wt103_cases.h"

#define MAX_TOK 256

/* ---- an oracle of its own: what the rules spell a span's characters as -- */

static int blank_cp(uint32_t c) { return wt_is_space(c) || c < 0x20; }

static const char *respelt(uint32_t c)
{
    switch (c) {
    case '`': case 0xB4: case 0x2018: case 0x201A: case 0x2019: return "'";
    case 0x201E: case 0x201C: case 0x201D: case 0xAB: case 0xBB: return "\"";
    case 0x2013: case 0x2014: return "-";
    case 0x2026: return "...";
    default: return NULL;
    }
}

/* The characters of line[b, e) that token k owns, as the rules write
 * them, blanks dropped. */
static size_t spell(const char *line, size_t b, size_t e, const int *owner, int k, char *out, size_t cap, int *nbsp)
{
    size_t n = 0, l;
    *nbsp = 0;
    for (size_t i = b; i < e; i += l) {
        uint32_t c = wt_utf8(line + i, e - i, &l);
        if (owner[i] != k) continue;
        *nbsp |= c == 0xA0;
        if (blank_cp(c)) continue;
        const char *r = respelt(c);
        size_t rl = r ? strlen(r) : l;
        if (n + rl < cap) memcpy(out + n, r ? r : line + i, rl);
        n += rl;
    }
    if (n < cap) out[n] = 0;
    return n;
}

/* The token's text as its bytes spell it: itself, two apostrophes for ",
 * the middle of a split, or a no-break space for @.@. */
static int spells_token(const char *s, size_t n, int nbsp, const char *tok, size_t tl)
{
    if (tl == 3 && tok[0] == '@' && tok[2] == '@') {
        if (n == 0 && tok[1] == '.' && nbsp) return 1;
        return n == 1 && s[0] == tok[1];
    }
    if (n == tl && !memcmp(s, tok, tl)) return 1;
    return tl == 1 && tok[0] == '"' && n == 2 && !strcmp(s, "''");
}

typedef struct traced {
    size_t n, begin[MAX_TOK], end[MAX_TOK];
    const char *tok[MAX_TOK];
    size_t tl[MAX_TOK];
    long guessed;
    wt_buf toks;
} traced;

static int trace(const char *line, size_t len, int lower, traced *t)
{
    memset(t, 0, sizeof *t);
    if (txlm_wt103_tokenize(line, len, lower, &t->toks)) return -1;
    for (size_t a = 0; a < t->toks.n && t->n < MAX_TOK;) {
        size_t b = a;
        while (b < t->toks.n && t->toks.p[b] != ' ') b++;
        t->tok[t->n] = t->toks.p + a;
        t->tl[t->n++] = b - a;
        a = b + 1;
    }
    t->guessed = txlm_wt103_spans(line, len, lower, t->toks.p, t->toks.n, t->n, t->begin, t->end);
    return 0;
}

/* Two spans are apart, or one holds the other (a quote the rules moved
 * past the commas and dots after it: "... -> ... " makes the dots' token
 * span the quote). Each byte belongs to the innermost span holding it. */
static int owners(const traced *t, size_t len, int *owner)
{
    int bad = 0;
    for (size_t i = 0; i < len; i++) owner[i] = -1;
    for (size_t k = 0; k < t->n; k++)
        for (size_t j = 0; j < t->n; j++) {
            int apart = t->end[j] <= t->begin[k] || t->end[k] <= t->begin[j];
            int inside = t->begin[j] >= t->begin[k] && t->end[j] <= t->end[k];
            bad += j != k && !apart && !inside && !(t->begin[k] >= t->begin[j] && t->end[k] <= t->end[j]);
        }
    for (size_t k = 0; k < t->n; k++)
        for (size_t i = t->begin[k]; i < t->end[k] && i < len; i++)
            if (owner[i] < 0 || t->end[k] - t->begin[k] < t->end[owner[i]] - t->begin[owner[i]]) owner[i] = (int)k;
    return bad;
}

/* Each token's bytes spell it; spans are apart or nested; every character
 * the rules keep lies in one. Returns the number of violations. */
static int check_trace(const char *line, size_t len, const traced *t, int verbose)
{
    int *owner = malloc((len + 1) * sizeof *owner);
    int bad = (t->guessed != 0) + owners(t, len, owner);
    for (size_t k = 0; k < t->n; k++) {
        char s[1024];
        int nbsp = 0, ok = t->begin[k] < t->end[k] && t->end[k] <= len;
        if (ok) {
            size_t n = spell(line, t->begin[k], t->end[k], owner, (int)k, s, sizeof s, &nbsp);
            ok = spells_token(s, n, nbsp, t->tok[k], t->tl[k]);
        }
        if (!ok && verbose)
            fprintf(stderr, "token %zu \"%.*s\" of [%s]: span [%zu, %zu) \"%.*s\"\n", k, (int)t->tl[k], t->tok[k], line,
                    t->begin[k], t->end[k], (int)(t->end[k] - t->begin[k]), line + t->begin[k]);
        bad += !ok;
    }
    size_t l;
    for (size_t i = 0; i < len; i += l) {
        uint32_t c = wt_utf8(line + i, len - i, &l);
        if (!blank_cp(c) && owner[i] < 0) {
            if (verbose) fprintf(stderr, "[%s]: byte %zu is in no token\n", line, i);
            bad++;
        }
    }
    free(owner);
    return bad;
}

static void test_sentences(void)
{
    for (size_t c = 0; c < WT103_N_CASES; c++) {
        traced t;
        CHECK(trace(cases[c].in, strlen(cases[c].in), 0, &t) == 0);
        CHECK(check_trace(cases[c].in, strlen(cases[c].in), &t, 1) == 0);
        wt_buf_free(&t.toks);
    }
}

/* The rules that respell, pair, move or make characters, span by span. */
static void test_exact_spans(void)
{
    static const struct {
        const char *in;
        size_t spans[16][2];
    } want[] = {
        {"She said \"no\".", {{0, 3}, {4, 8}, {9, 10}, {10, 12}, {13, 14}, {12, 13}}},
        {"\xE2\x80\x9CSmart quotes,\xE2\x80\x9D she said.", {{0, 3}, {3, 8}, {9, 15}, {15, 16}, {16, 19}, {20, 23}, {24, 28}, {28, 29}}},
        {"1\xC2\xA0" "000 people", {{0, 1}, {1, 3}, {3, 6}, {7, 13}}},
        {"Don't", {{0, 3}, {3, 5}}},
        {"``Penn quotes''", {{0, 2}, {2, 6}, {7, 13}, {13, 15}}},
        {"It was good\xE2\x80\xA6really.", {{0, 2}, {3, 6}, {7, 11}, {11, 14}, {14, 20}, {20, 21}}},
        {"A well-known", {{0, 1}, {2, 6}, {6, 7}, {7, 12}}},
        {"\xC2\xAB" "Bonjour\xC2\xBB dit-il.", {{0, 2}, {2, 9}, {9, 11}, {12, 15}, {15, 16}, {16, 18}, {18, 19}}},
        {"'Hello.'", {{0, 6}, {6, 7}, {7, 8}}},
        {"\xC2\xAB\xC2\xA0" ",x", {{4, 5}, {0, 2}, {5, 6}}},          /* « , moved after the comma */
        {"a '\r' b", {{0, 1}, {2, 5}, {6, 7}}},                        /* a pair across a removed \r */
        {"5\xC2\xA0" "6\xC2\xA0" "7", {{0, 1}, {1, 3}, {3, 4}, {6, 7}}}, /* one match of D NBSP D consumes the 6 */
        {"  Tabs\tand \x01  spaces  ", {{2, 6}, {7, 10}, {14, 20}}},
    };
    for (size_t c = 0; c < sizeof want / sizeof *want; c++) {
        traced t;
        CHECK(trace(want[c].in, strlen(want[c].in), 0, &t) == 0);
        CHECK(t.guessed == 0);
        size_t n = 0;
        while (n < 16 && want[c].spans[n][1]) n++;
        if (t.n != n) fprintf(stderr, "[%s]: %zu tokens (%s), want %zu\n", want[c].in, t.n, t.toks.p, n);
        CHECK(t.n == n);
        for (size_t k = 0; k < n && k < t.n; k++) {
            if (t.begin[k] != want[c].spans[k][0] || t.end[k] != want[c].spans[k][1])
                fprintf(stderr, "[%s] token %zu: [%zu, %zu), want [%zu, %zu)\n", want[c].in, k, t.begin[k], t.end[k],
                        want[c].spans[k][0], want[c].spans[k][1]);
            CHECK(t.begin[k] == want[c].spans[k][0] && t.end[k] == want[c].spans[k][1]);
        }
        wt_buf_free(&t.toks);
    }
}

/* ---- through the tokenizer: ids, words ------------------------------- */

static const char *const word_syms[] = {"<eos>", "<unk>", "the", "well", "@-@", "known", "1", "@.@", "000", ".", "\""};

/* Words are the text's runs of non-blanks, but for the ones a token joins. */
static void check_words(const char *text, const txlm_token_spans *o, int joined_by_nbsp)
{
    size_t l, n = 0;
    for (size_t i = 0; i < strlen(text);) {
        if (wt_is_space(wt_utf8(text + i, strlen(text) - i, &l))) {
            i += l;
            continue;
        }
        size_t b = i;
        while (i < strlen(text) && !wt_is_space(wt_utf8(text + i, strlen(text) - i, &l))) i += l;
        if (!joined_by_nbsp && n < o->n_words) CHECK(o->words[n].begin == b && o->words[n].end == i);
        n++;
    }
    if (!joined_by_nbsp) CHECK(o->n_words == n);
    for (size_t k = 0; k < o->n; k++) {
        size_t w = o->word[k];
        if (w == TXLM_NO_WORD) continue;
        int in = w < o->n_words && o->spans[k].begin >= o->words[w].begin && o->spans[k].end <= o->words[w].end;
        if (!in) fprintf(stderr, "[%s]: token %zu [%zu, %zu) is not in its word %zu\n", text, k, o->spans[k].begin, o->spans[k].end, w);
        CHECK(in);
    }
}

static void test_word_model_words(void)
{
    vocab_store vs;
    make_vocab(&vs, word_syms, sizeof word_syms / sizeof *word_syms, TXLM_TOK_WORD, TXLM_VOCAB_WT103_NORM);
    txlm_tokenizer *t = NULL;
    txlm_err e = {0};
    CHECK(txlm_tok_create(&vs.v, &t, &e) == 0);
    for (size_t c = 0; t && c < WT103_N_CASES; c++) {
        /* two lines: offsets run on across the line break, which is <eos> */
        char text[1024];
        snprintf(text, sizeof text, "%s\n%s", cases[c].in, cases[c].in);
        txlm_token_spans o;
        int32_t *ids = NULL;
        size_t n = 0;
        CHECK(txlm_tok_spans(t, text, strlen(text), &o, &e) == 0);
        CHECK(txlm_tok_encode(t, text, strlen(text), &ids, &n, &e) == 0);
        CHECK(o.n == n && (n == 0 || !memcmp(ids, o.ids, n * sizeof *ids)));
        CHECK(o.guessed == 0);
        check_words(text, &o, strstr(text, "\xC2\xA0") != NULL);
        size_t line_breaks = 0; /* a literal "<eos>" in the text is a word's token */
        for (size_t k = 0; k < o.n; k++)
            if (text[o.spans[k].begin] == '\n') {
                line_breaks++;
                CHECK(o.ids[k] == 0 && o.word[k] == TXLM_NO_WORD);
            } else CHECK(o.word[k] != TXLM_NO_WORD);
        CHECK(line_breaks == 1);
        free(ids);
        txlm_tok_spans_free(&o);
    }
    /* a no-break space between digits is a number's @.@: one word */
    txlm_token_spans o;
    const char *num = "the 1\xC2\xA0" "000 well-known";
    CHECK(t && txlm_tok_spans(t, num, strlen(num), &o, &e) == 0);
    CHECK(o.n == 7 && o.n_words == 3);
    if (o.n == 7 && o.n_words == 3) {
        size_t want_word[] = {0, 1, 1, 1, 2, 2, 2};
        for (size_t k = 0; k < 7; k++) CHECK(o.word[k] == want_word[k]);
        CHECK(o.words[1].begin == 4 && o.words[1].end == 10 && o.spans[2].begin == 5 && o.spans[2].end == 7);
    }
    txlm_tok_spans_free(&o);
    txlm_tok_free(t);
}

/* Byte models: each byte its own token, words of multi-byte characters
 * whole; the no-break space separates words and belongs to none. */
static void test_char_model_words(void)
{
    const char *syms[100];
    char store[100][2];
    int n = 0;
    syms[n++] = "<eos>";
    syms[n++] = "<unk>";
    for (int c = 0x20; c < 0x7F; c++, n++) store[n][0] = (char)c, store[n][1] = 0, syms[n] = store[n];
    vocab_store vs;
    make_vocab(&vs, syms, (uint32_t)n, TXLM_TOK_CHAR_BYTE, 0);
    txlm_tokenizer *t = NULL;
    txlm_err e = {0};
    CHECK(txlm_tok_create(&vs.v, &t, &e) == 0);
    const char *text = "na\xC3\xAFve caf\xC3\xA9\xC2\xA0\xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80!\nz";
    txlm_token_spans o;
    CHECK(t && txlm_tok_spans(t, text, strlen(text), &o, &e) == 0);
    CHECK(o.n == strlen(text) && o.guessed == 0);
    static const char *const words[] = {"na\xC3\xAFve", "caf\xC3\xA9", "\xE6\x97\xA5\xE6\x9C\xAC", "\xF0\x9F\x98\x80!", "z"};
    CHECK(o.n_words == 5);
    for (size_t w = 0; w < o.n_words && w < 5; w++)
        CHECK(o.words[w].end - o.words[w].begin == strlen(words[w]) && !memcmp(text + o.words[w].begin, words[w], strlen(words[w])));
    size_t per_word[5] = {0};
    for (size_t k = 0; k < o.n; k++) {
        CHECK(o.spans[k].begin == k && o.spans[k].end == k + 1);
        if (o.word[k] == TXLM_NO_WORD) CHECK(strchr(" \n\xC2\xA0", text[k]) != NULL);
        else if (o.word[k] < 5) per_word[o.word[k]]++;
    }
    for (size_t w = 0; w < 5; w++) CHECK(per_word[w] == strlen(words[w])); /* the bytes, summed into whole characters */
    txlm_tok_spans_free(&o);
    txlm_tok_free(t);
}

/* ---- random lines of every rule's characters --------------------------- */

static uint64_t rng = 88172645463325252ull;
static uint32_t next_rand(uint32_t n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static const char *const pieces[] = {
    "a", "b", "Z", "n", "c", "m", "s", "C", "1", "2", "0", " ", " ", "  ", "\t", "\r", "\x01", "\xC2\xA0", "'", "'",
    "`", "\"", "\xC2\xB4", "\xE2\x80\x98", "\xE2\x80\x99", "\xE2\x80\x9A", "\xE2\x80\x9C", "\xE2\x80\x9D", "\xE2\x80\x9E",
    "\xC2\xAB", "\xC2\xBB", "\xE2\x80\x93", "\xE2\x80\x94", "\xE2\x80\xA6", ",", ".", ".", "-", "(", ")", "%", ":", ";",
    "?", "!", "@", "$", "\xC2\xBA", "<unk>", "<EOS>", "\xC3\xA9", "\xC3\x89", "\xE6\x97\xA5", "&", "/", "Mr", "No",
    "U.S.", "I", "\xD9\xA3",
};

static void test_random_lines(void)
{
    char line[256];
    int bad_lines = 0;
    for (int r = 0; r < 20000; r++) {
        size_t n = 0, parts = 1 + next_rand(14);
        for (size_t p = 0; p < parts; p++) {
            const char *s = pieces[next_rand(sizeof pieces / sizeof *pieces)];
            if (n + strlen(s) < sizeof line) memcpy(line + n, s, strlen(s)), n += strlen(s);
        }
        line[n] = 0;
        traced t;
        int lower = r % 4 == 3;
        if (trace(line, n, lower, &t)) continue;
        /* the oracle spells without lower-casing: check spans only on the others */
        int bad = lower ? (t.guessed != 0) : check_trace(line, n, &t, bad_lines < 5);
        bad_lines += bad != 0;
        wt_buf_free(&t.toks);
    }
    if (bad_lines) fprintf(stderr, "%d random lines traced wrongly\n", bad_lines);
    CHECK(bad_lines == 0);
}

/* Malformed UTF-8 and bytes of every value: spans stay in the line,
 * whatever is guessed. */
static void test_random_bytes(void)
{
    char line[64];
    for (int r = 0; r < 20000; r++) {
        size_t n = next_rand(sizeof line);
        for (size_t i = 0; i < n; i++) line[i] = r % 2 ? (char)next_rand(256) : "\xC2\xA0\xE2\x80\x9C'\r ,.1a\xC3"[next_rand(13)];
        traced t;
        if (trace(line, n, r % 3 == 0, &t)) continue;
        CHECK(t.guessed >= 0 && (size_t)t.guessed <= t.n);
        for (size_t k = 0; k < t.n; k++) CHECK(t.begin[k] < t.end[k] && t.end[k] <= n);
        wt_buf_free(&t.toks);
    }
}

int main(void)
{
    test_sentences();
    test_exact_spans();
    test_word_model_words();
    test_char_model_words();
    test_random_lines();
    test_random_bytes();
    if (failures) fprintf(stderr, "%d failures\n", failures);
    return failures ? 1 : 0;
}
