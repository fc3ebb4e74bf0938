/* The calls an application needs beside feeding and sampling, each
 * against a direct computation on a packed golden model:
 *   the version, symbol -> id, the vocabulary size;
 *   the next token's log-probabilities and top-k without feeding again
 *   (against the row the feed returned, and a sort of it);
 *   memory of a model and a session (a capture adds at least its buffers);
 *   sampling options refused (NaN or infinite temperature, top_p outside
 *   [0, 1], a negative top_k, a bad penalty), leaving the session as it was;
 *   the repetition penalty: greedy draws against the argmax of the
 *   penalised row, each distinct token penalised once;
 *   txlm_session_generate against a loop of sample and feed, its
 *   penalty window sliding, progress and cancelling;
 *   txlm_session_score_long against txlm_session_score per segment, cancelling. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm.h>

#include "golden_model.h"
#include "../common/test_context.h"
#include "text_util.h"

enum { V = 1000, SEG = 8 };

static const int32_t fed[6] = {3, 17, 250, 41, 777, 9};

static int fresh(txlm_model *m, txlm_session **s)
{
    txlm_session_options so = {.same_length = -1, .max_segment = SEG};
    txlm_session_free(*s);
    *s = NULL;
    return txlm_session_create(m, &so, s) || txlm_session_feed_rows(*s, fed, 6, 6, NULL);
}

static void check_vocab(txlm_model *m)
{
    TCHECK(strcmp(txlm_version(), "0.1.0") == 0 || TXLM_VERSION_MAJOR != 0);
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", TXLM_VERSION_MAJOR, TXLM_VERSION_MINOR, TXLM_VERSION_PATCH);
    TCHECK(strcmp(txlm_version(), want) == 0);
    TCHECK(txlm_version_number() == TXLM_VERSION_MAJOR * 10000u + TXLM_VERSION_MINOR * 100u + TXLM_VERSION_PATCH);
    TCHECK(txlm_vocab_size(m) == V && txlm_vocab_size(NULL) == 0);
    int bad = 0;
    for (int32_t i = 0; i < V; i++) {
        size_t len;
        const char *sym = txlm_token_symbol(m, i, &len);
        int32_t id = -2, first = i;
        for (int32_t j = 0; j < i; j++) { /* the first of equal symbols */
            size_t l2;
            const char *s2 = txlm_token_symbol(m, j, &l2);
            if (l2 == len && !memcmp(s2, sym, len)) { first = j; break; }
        }
        bad += txlm_token_id(m, sym, len, &id) != TXLM_OK || id != first;
    }
    TCHECK(bad == 0);
    int32_t id = 5;
    TCHECK(txlm_token_id(m, "no such symbol", 14, &id) == TXLM_OK && id == -1);
    TCHECK(txlm_token_id(m, NULL, 3, &id) == TXLM_ERR_INVALID_ARGUMENT);
    txlm_model_params p;
    txlm_model_get_params(m, &p);
    size_t l = 0;
    const char *eos = p.eos_id >= 0 ? txlm_token_symbol(m, p.eos_id, &l) : NULL;
    if (eos) TCHECK(txlm_token_id(m, eos, l, &id) == TXLM_OK && id == p.eos_id);
}

static void check_next(txlm_model *m, txlm_session **s)
{
    static float lp[6 * V], next[V], again[V];
    txlm_session_options so = {.same_length = -1, .max_segment = SEG};
    txlm_session *t = NULL;
    TCHECK(txlm_session_create(m, &so, &t) == TXLM_OK);
    TCHECK(txlm_session_next_logprobs(t, next) == TXLM_ERR_INVALID_ARGUMENT); /* nothing fed */
    TCHECK(txlm_session_feed(t, fed, 6, lp) == TXLM_OK);
    TCHECK(txlm_session_next_logprobs(t, next) == TXLM_OK);
    double diff = 0;
    for (int i = 0; i < V; i++) diff = fmax(diff, fabs(next[i] - lp[5 * V + i]));
    printf("next log-probabilities against the fed row: max difference %g\n", diff);
    TCHECK(diff <= 1e-6);
    /* a draw moves nothing: the same row again */
    int32_t tok;
    TCHECK(txlm_session_sample(t, NULL, &tok) == TXLM_OK);
    TCHECK(txlm_session_next_logprobs(t, again) == TXLM_OK && !memcmp(next, again, sizeof next));
    TCHECK(txlm_session_memory_len(t) == 6);
    /* top-k against a selection sort of the row */
    enum { K = 12 };
    int32_t ids[K];
    float top[K];
    TCHECK(txlm_session_next_top_k(t, K, ids, top) == TXLM_OK);
    static unsigned char taken[V];
    memset(taken, 0, sizeof taken);
    int bad = 0;
    for (int k = 0; k < K; k++) {
        int best = -1;
        for (int i = 0; i < V; i++)
            if (!taken[i] && (best < 0 || next[i] > next[best])) best = i;
        taken[best] = 1;
        bad += ids[k] != best || top[k] != next[best];
    }
    TCHECK(bad == 0);
    TCHECK(txlm_session_next_top_k(t, 0, ids, top) == TXLM_ERR_INVALID_ARGUMENT);
    TCHECK(txlm_session_next_top_k(t, V + 1, ids, top) == TXLM_ERR_INVALID_ARGUMENT);
    static int32_t all_ids[V];
    static float all_lp[V];
    TCHECK(txlm_session_next_top_k(t, V, all_ids, all_lp) == TXLM_OK);
    bad = 0;
    for (int i = 1; i < V; i++) bad += all_lp[i] > all_lp[i - 1] || (all_lp[i] == all_lp[i - 1] && all_ids[i] < all_ids[i - 1]);
    TCHECK(bad == 0);
    txlm_session_free(t);
    (void)s;
}

static void check_memory(txlm_model *m, txlm_session *s)
{
    txlm_memory_use mu = {0}, su = {0}, cu = {0};
    TCHECK(txlm_model_memory(m, &mu) == TXLM_OK);
    txlm_model_params p;
    txlm_model_get_params(m, &p);
    /* the embedding and output layer alone hold more than n_token x d_embed / 4 floats (div_val 2, 3 clusters) */
    uint64_t at_least = (uint64_t)p.n_layer * 4 * p.d_model * p.d_model * 4;
    printf("model: %llu device bytes, %llu host bytes\n", (unsigned long long)mu.device_bytes, (unsigned long long)mu.host_bytes);
    TCHECK(mu.device_bytes >= at_least && mu.host_bytes > V * 4);
    TCHECK(txlm_session_memory(s, &su) == TXLM_OK);
    printf("session: %llu device bytes, %llu host bytes\n", (unsigned long long)su.device_bytes, (unsigned long long)su.host_bytes);
    /* every layer's memory ring: (mem_len + segment) rows of keys and values */
    uint64_t ring = (uint64_t)p.n_layer * (p.mem_len + SEG) * 2 * p.n_head * p.d_head * 4;
    TCHECK(su.device_bytes > ring && su.host_bytes >= V * 4);
    TCHECK(txlm_session_capture_attention(s, TXLM_CAPTURE_PROBS) == TXLM_OK);
    TCHECK(txlm_session_memory(s, &cu) == TXLM_OK);
    uint64_t cap = (uint64_t)p.n_layer * p.n_head * SEG * (p.mem_len + SEG) * 4;
    TCHECK(cu.device_bytes >= su.device_bytes + cap);
    TCHECK(txlm_session_capture_attention(s, TXLM_CAPTURE_OFF) == TXLM_OK);
    TCHECK(txlm_session_memory(s, &cu) == TXLM_OK && cu.device_bytes == su.device_bytes);
    TCHECK(txlm_model_memory(NULL, &mu) == TXLM_ERR_INVALID_ARGUMENT && txlm_session_memory(s, NULL) == TXLM_ERR_INVALID_ARGUMENT);
}

static void check_refused(txlm_session *s)
{
    float nan = NAN, inf = INFINITY;
    int32_t bad_tok[1] = {V};
    txlm_sampling bad[] = {
        {.temperature = nan}, {.temperature = inf}, {.temperature = -inf}, {.temperature = 1, .top_p = 2},
        {.temperature = 1, .top_p = -0.5f}, {.temperature = 1, .top_p = nan}, {.temperature = 1, .top_k = (uint32_t)-1},
    };
    txlm_repeat_penalty bad_pen[] = {{.penalty = -1}, {.penalty = nan}, {.penalty = inf}, {.penalty = 1.5f, .n = 1},
                                     {.penalty = 1.5f, .tokens = bad_tok, .n = 1}};
    int32_t tok = -7, first = -1, again = -2;
    txlm_sampling greedy = {.temperature = 0};
    TCHECK(txlm_session_sample(s, &greedy, &first) == TXLM_OK);
    size_t n_bad = sizeof bad / sizeof *bad, n_pen = sizeof bad_pen / sizeof *bad_pen;
    for (size_t i = 0; i < n_bad + n_pen; i++) {
        const txlm_sampling *o = i < n_bad ? &bad[i] : &greedy;
        const txlm_repeat_penalty *p = i < n_bad ? NULL : &bad_pen[i - n_bad];
        txlm_status st = txlm_session_sample_penalized(s, o, p, &tok);
        if (st != TXLM_ERR_INVALID_ARGUMENT) fprintf(stderr, "options %zu: status %d\n", i, st);
        TCHECK(st == TXLM_ERR_INVALID_ARGUMENT);
        printf("  refused: %s\n", txlm_last_error());
        if (i < n_bad) TCHECK(txlm_session_sample(s, o, &tok) == TXLM_ERR_INVALID_ARGUMENT);
        size_t made = 9;
        int32_t out[2];
        TCHECK(txlm_session_generate(s, o, p, 2, out, NULL, NULL, &made) == TXLM_ERR_INVALID_ARGUMENT && made == 0);
    }
    TCHECK(txlm_session_memory_len(s) == 6);
    TCHECK(txlm_session_sample(s, &greedy, &again) == TXLM_OK && again == first);
    /* still accepted: negative temperature (greedy), top_p 0 and 1 (off), penalty 0 and 1 (off) */
    txlm_sampling ok[] = {{.temperature = -1}, {.temperature = 1, .top_p = 0}, {.temperature = 1, .top_p = 1}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) TCHECK(txlm_session_sample(s, &ok[i], &tok) == TXLM_OK);
    txlm_repeat_penalty off[] = {{.penalty = 1, .tokens = bad_tok, .n = 1}, {.penalty = 0, .tokens = bad_tok, .n = 1}};
    for (int i = 0; i < 2; i++) TCHECK(txlm_session_sample_penalized(s, &greedy, &off[i], &tok) == TXLM_OK && tok == first);
    TCHECK(txlm_session_sample(s, &ok[0], &tok) == TXLM_OK && tok == first);
}

/* The argmax of the row with llama.cpp's penalty applied to each distinct token of w once. */
static int32_t penalised_argmax(const float *row, const int32_t *w, uint32_t n, float penalty)
{
    static float x[V];
    memcpy(x, row, sizeof x);
    for (uint32_t i = 0; i < n; i++) {
        int dup = 0;
        for (uint32_t j = 0; j < i; j++) dup |= w[j] == w[i];
        if (!dup) x[w[i]] = x[w[i]] > 0 ? x[w[i]] / penalty : x[w[i]] * penalty;
    }
    int32_t best = 0;
    for (int i = 1; i < V; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

static void check_penalty(txlm_session *s)
{
    static float row[V];
    TCHECK(txlm_session_next_logprobs(s, row) == TXLM_OK);
    int32_t order[2] = {0, -1};
    for (int i = 1; i < V; i++)
        if (row[i] > row[order[0]]) order[0] = i;
    for (int i = 0; i < V; i++)
        if (i != order[0] && (order[1] < 0 || row[i] > row[order[1]])) order[1] = i;
    /* windows: the best alone, the best and second, the best three times
     * (penalised once: sqrt(gap) cubed would move it, once does not) */
    float gap = row[order[1]] / row[order[0]]; /* > 1: the penalty that makes the second best win */
    float pens[] = {1.01f, gap * 1.001f, gap * 0.999f, sqrtf(gap), 3.0f, 0.5f};
    int32_t windows[][3] = {{order[0], 0, 0}, {order[0], order[1], 0}, {order[0], order[0], order[0]}};
    uint32_t lens[] = {1, 2, 3};
    int bad = 0, changed = 0;
    for (size_t p = 0; p < sizeof pens / sizeof *pens; p++)
        for (int w = 0; w < 3; w++) {
            txlm_sampling o = {.temperature = 0};
            txlm_repeat_penalty pen = {.penalty = pens[p], .tokens = windows[w], .n = lens[w]};
            int32_t tok = -1, want = penalised_argmax(row, windows[w], lens[w], pens[p]);
            TCHECK(txlm_session_sample_penalized(s, &o, &pen, &tok) == TXLM_OK);
            bad += tok != want;
            changed += want != order[0];
        }
    printf("repetition penalty: %d greedy draws differ from the direct computation, %d moved off the argmax\n", bad, changed);
    TCHECK(bad == 0 && changed >= 3);
}

static int cancel_at(void *user, double f)
{
    (void)f;
    int *left = user;
    return --*left <= 0;
}

static void check_generate(txlm_model *m, txlm_session **s)
{
    enum { N = 12 };
    int32_t got[N], want[N], pen[4] = {5, 6, 7, 8};
    txlm_sampling o = {.temperature = 0.8f, .top_k = 40};
    txlm_repeat_penalty rp = {.penalty = 1.3f, .tokens = pen, .n = 4};
    TCHECK(fresh(m, s) == 0);
    txlm_session_set_seed(*s, 11);
    size_t made = 0;
    TCHECK(txlm_session_generate(*s, &o, &rp, N, got, NULL, NULL, &made) == TXLM_OK && made == N);
    /* the same by hand: the window slides over what is drawn */
    TCHECK(fresh(m, s) == 0);
    txlm_session_set_seed(*s, 11);
    int32_t window[4];
    memcpy(window, pen, sizeof window);
    for (int i = 0; i < N; i++) {
        txlm_repeat_penalty w = rp;
        w.tokens = window;
        TCHECK(txlm_session_sample_penalized(*s, &o, &w, &want[i]) == TXLM_OK);
        TCHECK(txlm_session_feed_rows(*s, &want[i], 1, 1, NULL) == TXLM_OK);
        memmove(window, window + 1, 3 * sizeof *window);
        window[3] = want[i];
    }
    TCHECK(!memcmp(got, want, sizeof got));
    /* cancelled after 3 tokens: 3 drawn and fed */
    TCHECK(fresh(m, s) == 0);
    txlm_session_set_seed(*s, 11);
    int left = 3;
    TCHECK(txlm_session_generate(*s, &o, &rp, N, got, cancel_at, &left, &made) == TXLM_ERR_CANCELLED && made == 3);
    TCHECK(!memcmp(got, want, 3 * sizeof *got));
    TCHECK(txlm_session_memory_len(*s) == 9);
}

/* docs/api.md's recipe, as printed there */
/* log p(cont[0..n) | all fed so far); the session is left where it was. */
static txlm_status continuation_logprob(txlm_session *s, uint32_t n_token, const int32_t *cont, uint32_t n, double *out)
{
    size_t size = txlm_session_state_size(s), written = 0;
    void *state = malloc(size);
    float *row = malloc(sizeof(float) * (n_token > n ? n_token : n));
    txlm_status st = !state || !row ? TXLM_ERR_OUT_OF_MEMORY : txlm_session_save(s, state, size, &written);
    if (!st) st = txlm_session_next_logprobs(s, row);
    if (!st) *out = row[cont[0]];
    /* positions 1..n-1: feed cont[0..n-1), score cont[1..n) (segments of max_segment: score_long) */
    if (!st && n > 1) st = txlm_session_score_long(s, cont, cont + 1, n - 1, row, NULL, NULL, NULL);
    for (uint32_t i = 0; !st && i + 1 < n; i++) *out += row[i];
    txlm_status back = state ? txlm_session_restore(s, state, written) : TXLM_OK;
    free(state);
    free(row);
    return st ? st : back;
}

/* The recipe against one feed of the whole text: after 6 tokens fed and 2 drawn, a continuation of 11. */
static void check_recipe(txlm_model *m, txlm_session **s)
{
    enum { C = 11 };
    int32_t drawn[2], cont[C], all[6 + 2 + C];
    for (int i = 0; i < C; i++) cont[i] = (i * 91 + 17) % V;
    TCHECK(fresh(m, s) == 0);
    TCHECK(txlm_session_generate(*s, NULL, NULL, 2, drawn, NULL, NULL, NULL) == TXLM_OK);
    uint32_t before = txlm_session_memory_len(*s);
    static float row0[V], row1[V];
    double got = 0, want = 0;
    TCHECK(txlm_session_next_logprobs(*s, row0) == TXLM_OK);
    TCHECK(continuation_logprob(*s, V, cont, C, &got) == TXLM_OK);
    /* the session is where it was */
    TCHECK(txlm_session_memory_len(*s) == before && txlm_session_next_logprobs(*s, row1) == TXLM_OK && !memcmp(row0, row1, sizeof row0));
    memcpy(all, fed, sizeof fed), memcpy(all + 6, drawn, sizeof drawn), memcpy(all + 8, cont, sizeof cont);
    txlm_session_options so = {.same_length = -1, .max_segment = 6 + 2 + C};
    txlm_session *t = NULL;
    static float lp[(6 + 2 + C) * V];
    TCHECK(txlm_session_create(m, &so, &t) == TXLM_OK);
    /* the same segments as the session saw: 6, then one token at a time for the two drawn, then the rest */
    TCHECK(txlm_session_feed(t, all, 6, NULL) == TXLM_OK);
    TCHECK(txlm_session_feed(t, all + 6, 1, NULL) == TXLM_OK);
    TCHECK(txlm_session_feed(t, all + 7, 1, lp) == TXLM_OK);
    want = lp[cont[0]];
    for (int at = 0; at + 1 < C; at += SEG) {
        int len = C - 1 - at < SEG ? C - 1 - at : SEG;
        TCHECK(txlm_session_feed(t, cont + at, (uint32_t)len, lp) == TXLM_OK);
        for (int i = 0; i < len; i++) want += lp[(size_t)i * V + cont[at + i + 1]];
    }
    printf("continuation: %.6f by the recipe, %.6f directly\n", got, want);
    TCHECK(fabs(got - want) < 1e-4);
    txlm_session_free(t);
}

static void check_score_long(txlm_model *m, txlm_session **s)
{
    enum { N = 21 };
    int32_t tok[N + 1];
    for (int i = 0; i <= N; i++) tok[i] = (i * 37 + 5) % V;
    float got[N], want[N];
    size_t done = 0;
    TCHECK(fresh(m, s) == 0);
    TCHECK(txlm_session_score_long(*s, tok, tok + 1, N, got, NULL, NULL, &done) == TXLM_OK && done == N);
    TCHECK(fresh(m, s) == 0);
    for (int at = 0; at < N; at += SEG) {
        uint32_t len = N - at < SEG ? N - at : SEG;
        TCHECK(txlm_session_score(*s, tok + at, tok + at + 1, len, want + at) == TXLM_OK);
    }
    TCHECK(!memcmp(got, want, sizeof got));
    TCHECK(fresh(m, s) == 0);
    int left = 1;
    TCHECK(txlm_session_score_long(*s, tok, tok + 1, N, got, cancel_at, &left, &done) == TXLM_ERR_CANCELLED && done == SEG);
    TCHECK(txlm_session_memory_len(*s) == 6 + SEG);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s TXLM_PACK GOLDEN_DIR\n", argv[0]);
        return 2;
    }
    char *dir = NULL;
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    if (open_golden_model(argv[1], argv[2], "adaptive_word", &dir, &ctx, &m)) return 1;
    if (fresh(m, &s)) {
        fprintf(stderr, "setup: %s\n", txlm_last_error());
        rm_tree(dir);
        return 1;
    }
    check_vocab(m);
    check_next(m, &s);
    check_memory(m, s);
    check_refused(s);
    check_penalty(s);
    check_generate(m, &s);
    check_score_long(m, &s);
    check_recipe(m, &s);
    TCHECK(txlm_context_validation_messages(ctx) == 0);
    txlm_session_free(s);
    txlm_model_free(m);
    test_context_destroy(ctx);
    rm_tree(dir);
    free(dir);
    printf("%d failures\n", text_failures);
    return text_failures != 0;
}
