/* The wt103 rules on hand-written sentences: the tokens each must give (as
 * HuggingFace's TransfoXLTokenizer gives them, which is sacremoses'
 * English normaliser and tokenizer, aggressive dash splits, no escaping,
 * then number splits) and the text the reverse gives back. */
#include <stdio.h>
#include <string.h>

#include "wt103.h"
#include "wt103_cases.h"

static int failures;

static void check_case(const wt_case *c)
{
    wt_buf tok = {0}, back = {0};
    if (txlm_wt103_tokenize(c->in, strlen(c->in), 0, &tok) || wt_buf_cstr(&tok)) {
        fprintf(stderr, "out of memory\n");
        failures++;
        return;
    }
    if (strcmp(tok.p, c->tokens)) {
        fprintf(stderr, "tokens of [%s]:\n  got  [%s]\n  want [%s]\n", c->in, tok.p, c->tokens);
        failures++;
    }
    /* the reverse, from the expected tokens */
    const char *sym[256];
    size_t len[256], n = 0;
    for (const char *p = c->tokens; *p && n < 256;) {
        const char *e = strchr(p, ' ');
        if (!e) e = p + strlen(p);
        sym[n] = p;
        len[n++] = (size_t)(e - p);
        p = *e ? e + 1 : e;
    }
    const char *want = c->back ? c->back : c->in;
    if (txlm_wt103_detokenize(sym, len, n, &back) || wt_buf_cstr(&back)) failures++;
    else if (strcmp(back.p, want)) {
        fprintf(stderr, "detokenized [%s]:\n  got  [%s]\n  want [%s]\n", c->tokens, back.p, want);
        failures++;
    }
    wt_buf_free(&tok);
    wt_buf_free(&back);
}

/* Round trips that hold for text already in the convention's normal form. */
static void check_round_trip(void)
{
    static const char *const normal[] = {
        "The cat sat on the mat.",
        "Costs rose 12.5% in 2001-2002, to $3,400.",
        "\"Why?\" she asked. \"Because I can't.\"",
        "It's a well-known fact (see [3]).",
        "They're here; we'll go: now!",
    };
    for (size_t i = 0; i < sizeof normal / sizeof *normal; i++) {
        wt_buf tok = {0}, back = {0};
        const char *sym[128];
        size_t len[128], n = 0;
        if (txlm_wt103_tokenize(normal[i], strlen(normal[i]), 0, &tok) || wt_buf_cstr(&tok)) {
            failures++;
            continue;
        }
        for (char *p = tok.p; *p && n < 128;) {
            char *e = strchr(p, ' ');
            if (!e) e = p + strlen(p);
            sym[n] = p;
            len[n++] = (size_t)(e - p);
            p = *e ? e + 1 : e;
        }
        if (txlm_wt103_detokenize(sym, len, n, &back) || wt_buf_cstr(&back) || strcmp(back.p, normal[i])) {
            fprintf(stderr, "round trip of [%s] via [%s] gave [%s]\n", normal[i], tok.p, back.p ? back.p : "");
            failures++;
        }
        wt_buf_free(&tok);
        wt_buf_free(&back);
    }
}

static void check_lower_case(void)
{
    wt_buf tok = {0};
    const char *in = "Hello \xC3\x89" "COLE, Mr. X.";
    if (txlm_wt103_tokenize(in, strlen(in), 1, &tok) || wt_buf_cstr(&tok) ||
        strcmp(tok.p, "hello \xC3\xA9" "cole , mr. x .")) {
        fprintf(stderr, "lower-cased tokens: [%s]\n", tok.p ? tok.p : "");
        failures++;
    }
    wt_buf_free(&tok);
}

int main(void)
{
    size_t n = sizeof cases / sizeof *cases;
    for (size_t i = 0; i < n; i++) check_case(&cases[i]);
    check_round_trip();
    check_lower_case();
    printf("%zu sentences, %d failures\n", n, failures);
    return failures != 0;
}
