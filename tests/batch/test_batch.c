/* Several streams in one pass (txlm_batch_*) against each session fed
 * alone, on a packed golden case:
 *   three streams with ragged segment lengths (8s, single tokens, 5/3/7/2),
 *   at different memory fills (one full and wrapping its ring, one empty
 *   that joins late and is reset midway), asking for all rows, later rows
 *   only, targets, or nothing: every log-probability within 1e-5 of the
 *   lone session's, and a batch of one stream identical to the bit
 *   (allocating nothing for the session);
 *   sampling each stream's next token in one call equals sampling each
 *   session alone with the same seed (exact tree, tempered top-k, penalty);
 *   each stream's next-token distribution in one call equals the lone
 *   session's within 1e-5, allocating nothing for the sessions and moving
 *   neither memory nor sampler;
 *   refusals: the same session twice, another model's session, too many
 *   streams, a capturing session, a bad token (no memory moved), a session
 *   never fed, each naming its stream (txlm_batch_failed_stream), and a
 *   session inside another thread's call (batched or alone);
 *   the plan against what a batch allocates, and a budget too small
 *   refused before anything is allocated;
 *   sessions of other mem_len and clamp_len in one batch (position-key
 *   tables of other lengths: each stream reads its own rows) against each
 *   alone.
 * With "three-pass", only the three-pass attention kernels: the streams
 * attend one by one, each in dispatches of its own over the batch's rows. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm.h>

#include "../common/kernel_switches.h"
#include "golden_model.h"
#include "../common/test_context.h"
#include "text_util.h"

enum { K = 3, SEG = 8, STEPS = 9 };

static uint32_t V;
static double worst;

static uint32_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*x >> 33);
}

/* Stream i's segment length at step t (0: not fed this step). */
static uint32_t seg_len(uint32_t i, uint32_t t)
{
    static const uint32_t third[] = {0, 0, 5, 3, 7, 2, 6, 1, 8};
    return i == 0 ? SEG : i == 1 ? 1 : third[t];
}

static void compare(const float *a, const float *b, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        double d = fabs((double)a[j] - b[j]);
        if (!(d <= worst)) worst = d; /* NaN propagates */
    }
}

/* One step: each stream's feed in the batch and alone. What is asked
 * for changes with the step: all rows, the rows from 2, targets, nothing. */
static void step(txlm_batch *b, txlm_session **bs, txlm_session **ref, uint32_t t, uint64_t *rng)
{
    txlm_stream_feed f[K];
    int32_t tok[K][SEG], tgt[K][SEG];
    float *lp[K], tlp[K][SEG], rlp[SEG];
    float *want = malloc((size_t)SEG * V * sizeof *want);
    uint32_t n = 0, idx[K];
    for (uint32_t i = 0; i < K; i++) {
        uint32_t len = seg_len(i, t);
        lp[i] = NULL;
        if (!len) continue;
        for (uint32_t j = 0; j < len; j++) tok[i][j] = (int32_t)(lcg(rng) % V), tgt[i][j] = (int32_t)(lcg(rng) % V);
        uint32_t mode = (t + i) % 4, first = mode == 1 && len > 2 ? 2 : 0;
        f[n] = (txlm_stream_feed){.session = bs[i], .tokens = tok[i], .n = len, .first_row = first};
        if (mode <= 1) f[n].logprobs = lp[i] = malloc((size_t)len * V * sizeof *lp[i]);
        if (mode == 2) f[n].targets = tgt[i], f[n].target_logprobs = tlp[i];
        idx[n++] = i;
    }
    TCHECK(txlm_batch_feed(b, f, n) == TXLM_OK);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = idx[k], len = f[k].n, first = f[k].first_row;
        if (f[k].targets) {
            TCHECK(txlm_session_score(ref[i], tok[i], tgt[i], len, rlp) == TXLM_OK);
            compare(tlp[i], rlp, len);
        } else {
            TCHECK(txlm_session_feed_rows(ref[i], tok[i], len, f[k].logprobs ? first : len, want) == TXLM_OK);
            if (lp[i]) compare(lp[i], want, (size_t)(len - first) * V);
        }
        TCHECK(txlm_session_memory_len(bs[i]) == txlm_session_memory_len(ref[i]));
        free(lp[i]);
    }
    free(want);
}

/* Next tokens drawn in one call against each session alone, same seeds. */
static void check_sampling(txlm_batch *b, txlm_session **bs, txlm_session **ref)
{
    const int32_t window[3] = {1, 2, 3};
    txlm_repeat_penalty pen = {.penalty = 1.3f, .tokens = window, .n = 3};
    const txlm_repeat_penalty *pens[K] = {NULL, &pen, NULL};
    txlm_sampling how[3] = {{.temperature = 1.0f}, {.temperature = 0.8f, .top_k = 50}, {.temperature = 0.0f}};
    for (uint32_t h = 0; h < 3; h++)
        for (uint32_t r = 0; r < 4; r++) {
            int32_t got[K], alone[K];
            for (uint32_t i = 0; i < K; i++) txlm_session_set_seed(bs[i], 100 * h + 10 * r + i),
                                             txlm_session_set_seed(ref[i], 100 * h + 10 * r + i);
            TCHECK(txlm_batch_sample(b, bs, K, &how[h], r % 2 ? pens : NULL, got) == TXLM_OK);
            for (uint32_t i = 0; i < K; i++) {
                TCHECK(txlm_session_sample_penalized(ref[i], &how[h], r % 2 ? pens[i] : NULL, &alone[i]) == TXLM_OK);
                TCHECK(got[i] == alone[i]);
            }
        }
}

/* Every stream's next-token distribution in one call, against each
 * session's own txlm_session_next_logprobs: within 1e-5, nothing allocated
 * for the batch's sessions, their memory and samplers where they were. */
static void check_next_rows(txlm_batch *b, txlm_model *m, txlm_session **bs, txlm_session **ref)
{
    float *got = malloc((size_t)K * V * sizeof *got), *want = malloc((size_t)V * sizeof *want);
    txlm_memory_use before[K], after;
    uint32_t mem[K];
    for (uint32_t i = 0; i < K; i++) {
        TCHECK(txlm_session_memory(bs[i], &before[i]) == TXLM_OK);
        mem[i] = txlm_session_memory_len(bs[i]);
    }
    for (uint32_t i = 0; i < K; i++) txlm_session_set_seed(bs[i], 70 + i), txlm_session_set_seed(ref[i], 70 + i);
    worst = 0;
    TCHECK(txlm_batch_next_logprobs(b, bs, K, got) == TXLM_OK && txlm_batch_failed_stream(b) == -1);
    for (uint32_t i = 0; i < K; i++) {
        TCHECK(txlm_session_next_logprobs(ref[i], want) == TXLM_OK);
        compare(got + (size_t)i * V, want, V);
        TCHECK(txlm_session_memory(bs[i], &after) == TXLM_OK && after.device_bytes == before[i].device_bytes);
        TCHECK(txlm_session_memory_len(bs[i]) == mem[i]);
        int32_t a = -1, r = -2;
        txlm_sampling how = {.temperature = 1.0f};
        TCHECK(txlm_session_sample(bs[i], &how, &a) == TXLM_OK && txlm_session_sample(ref[i], &how, &r) == TXLM_OK && a == r);
    }
    printf("next-token rows, batched vs alone: max |diff| %.3g\n", worst);
    TCHECK(worst <= 1e-5);
    /* a session never fed has no next token: refused, naming it, before any work */
    txlm_session *fresh = NULL;
    TCHECK(txlm_session_create(m, NULL, &fresh) == TXLM_OK);
    txlm_session *pair[2] = {bs[0], fresh};
    TCHECK(txlm_batch_next_logprobs(b, pair, 2, got) == TXLM_ERR_INVALID_ARGUMENT && txlm_batch_failed_stream(b) == 1 &&
           strstr(txlm_last_error(), "stream 1: no next token"));
    TCHECK(txlm_batch_next_logprobs(b, pair, 1, got) == TXLM_OK && txlm_batch_failed_stream(b) == -1);
    txlm_session_free(fresh);
    free(got), free(want);
}

static void check_refusals(txlm_batch *b, txlm_session **bs, txlm_model *other)
{
    int32_t tok[2] = {1, 2}, bad[1] = {(int32_t)V};
    txlm_session *o = NULL;
    TCHECK(txlm_session_create(other, NULL, &o) == TXLM_OK);
    uint32_t before = txlm_session_memory_len(bs[0]);
    txlm_stream_feed twice[2] = {{.session = bs[0], .tokens = tok, .n = 2}, {.session = bs[0], .tokens = tok, .n = 2}};
    TCHECK(txlm_batch_feed(b, twice, 2) == TXLM_ERR_INVALID_ARGUMENT && strstr(txlm_last_error(), "same session"));
    TCHECK(txlm_batch_failed_stream(b) == -1); /* two streams, no one's fault */
    txlm_stream_feed mixed[2] = {{.session = bs[0], .tokens = tok, .n = 2}, {.session = o, .tokens = tok, .n = 2}};
    TCHECK(txlm_batch_feed(b, mixed, 2) == TXLM_ERR_INVALID_ARGUMENT && strstr(txlm_last_error(), "stream 1: its session is of another model"));
    TCHECK(txlm_batch_failed_stream(b) == 1);
    txlm_stream_feed many[K + 1];
    for (uint32_t i = 0; i <= K; i++) many[i] = (txlm_stream_feed){.session = bs[i % K], .tokens = tok, .n = 2};
    TCHECK(txlm_batch_feed(b, many, K + 1) == TXLM_ERR_INVALID_ARGUMENT);
    txlm_stream_feed badtok[2] = {{.session = bs[0], .tokens = tok, .n = 2}, {.session = bs[1], .tokens = bad, .n = 1}};
    TCHECK(txlm_batch_feed(b, badtok, 2) == TXLM_ERR_INVALID_ARGUMENT && strstr(txlm_last_error(), "stream 1"));
    TCHECK(txlm_batch_failed_stream(b) == 1);
    txlm_session *pair[2] = {bs[0], o};
    int32_t t2[2];
    TCHECK(txlm_batch_sample(b, pair, 2, NULL, NULL, t2) == TXLM_ERR_INVALID_ARGUMENT);
    TCHECK(txlm_session_capture_attention(bs[1], TXLM_CAPTURE_PROBS) == TXLM_OK);
    txlm_stream_feed cap[2] = {{.session = bs[0], .tokens = tok, .n = 2}, {.session = bs[1], .tokens = tok, .n = 2}};
    TCHECK(txlm_batch_feed(b, cap, 2) == TXLM_ERR_INVALID_ARGUMENT && strstr(txlm_last_error(), "stream 1: its session captures"));
    TCHECK(txlm_batch_failed_stream(b) == 1);
    TCHECK(txlm_session_capture_attention(bs[1], TXLM_CAPTURE_OFF) == TXLM_OK);
    TCHECK(txlm_session_memory_len(bs[0]) == before);
    txlm_session_free(o);
}

/* Two threads on one session: whichever call comes second while the
 * first runs is refused with its own message; every other call succeeds. */
struct racer {
    txlm_batch *b;
    txlm_session **bs;
    int conflicts, other;
};

static int busy_refusal(txlm_status st, int *conflicts, int *other)
{
    if (st == TXLM_OK) return 0;
    if (st == TXLM_ERR_INVALID_ARGUMENT && strstr(txlm_last_error(), "inside another call"))
        return __atomic_add_fetch(conflicts, 1, __ATOMIC_RELAXED), 1;
    return ++*other, 1;
}

static void *batch_side(void *arg)
{
    struct racer *r = arg;
    int32_t tok[2] = {4, 5};
    txlm_stream_feed f[2] = {{.session = r->bs[0], .tokens = tok, .n = 2}, {.session = r->bs[1], .tokens = tok, .n = 1}};
    for (int i = 0; i < 400 && __atomic_load_n(&r->conflicts, __ATOMIC_RELAXED) < 3; i++) busy_refusal(txlm_batch_feed(r->b, f, 2), &r->conflicts, &r->other);
    return NULL;
}

static void check_busy(txlm_batch *b, txlm_session **bs)
{
    struct racer r = {b, bs, 0, 0};
    int conflicts = 0, other = 0;
    int32_t tok[3] = {7, 8, 9};
    pthread_t t;
    TCHECK(pthread_create(&t, NULL, batch_side, &r) == 0);
    for (int i = 0; i < 400 && conflicts + __atomic_load_n(&r.conflicts, __ATOMIC_RELAXED) < 3; i++) busy_refusal(txlm_session_feed_rows(bs[0], tok, 3, 3, NULL), &conflicts, &other);
    pthread_join(t, NULL);
    printf("busy sessions refused: %d batched, %d alone\n", r.conflicts, conflicts);
    TCHECK(r.other == 0 && other == 0 && r.conflicts + conflicts > 0);
}

/* The plan is what a batch allocates; a budget below it is refused first. */
static void check_plan(txlm_context *ctx, txlm_model *m, const char *dir, const char *name)
{
    txlm_session_options so = {.same_length = -1, .max_segment = SEG};
    txlm_batch_sizes z;
    txlm_batch *b = NULL;
    txlm_memory_use u;
    txlm_session *s = NULL;
    TCHECK(txlm_batch_plan(m, 4, &so, &z) == TXLM_OK);
    TCHECK(txlm_batch_create(m, 4, &so, &b) == TXLM_OK && txlm_batch_memory(b, &u) == TXLM_OK);
    TCHECK(u.device_bytes == z.batch_bytes);
    TCHECK(txlm_session_create(m, &so, &s) == TXLM_OK && txlm_session_memory(s, &u) == TXLM_OK);
    TCHECK(u.device_bytes >= z.stream_ring_bytes + z.stream_scratch_bytes - 4096 &&
           u.device_bytes <= z.stream_ring_bytes + z.stream_scratch_bytes + 4096);
    TCHECK(z.total_bytes == 4 * (z.stream_ring_bytes + z.stream_scratch_bytes) + z.batch_bytes && z.available_bytes > 0);
    txlm_session_free(s);
    txlm_batch_free(b);
    (void)ctx;
    /* a context whose budget holds the model but not a batch's rows */
    txlm_context *small = NULL;
    txlm_model *m2 = NULL;
    txlm_memory_use mu;
    TCHECK(txlm_model_memory(m, &mu) == TXLM_OK);
    txlm_context_options co = {.memory_budget = mu.device_bytes + z.batch_bytes / 2};
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.txlm", dir, name);
    TCHECK(txlm_context_create(&co, &small) == TXLM_OK && txlm_model_load(small, path, NULL, &m2) == TXLM_OK);
    if (!m2) return;
    TCHECK(txlm_batch_plan(m2, 4, &so, &z) == TXLM_OK && z.total_bytes > z.available_bytes);
    TCHECK(txlm_batch_create(m2, 4, &so, &b) == TXLM_ERR_OUT_OF_MEMORY && b == NULL);
    TCHECK(strstr(txlm_last_error(), "free") != NULL);
    txlm_model_free(m2);
    txlm_context_destroy(small);
}

/* Sessions whose position-key tables differ in one batch: clamped at 8
 * with a memory of 30 (9 rows, all computed after two steps), a memory of
 * 2 (a table of 10 rows, 3 computed), the model's clamp with a memory of
 * 12; each against a session of its settings fed alone. A stream reading
 * another's table would read rows that table lacks or that hold another
 * distance. */
static void check_mixed(txlm_model *m, uint64_t *rng)
{
    enum { MIXED = 3 };
    const txlm_session_options so[MIXED] = {{.same_length = -1, .mem_len = 30, .clamp_len = 8, .max_segment = SEG},
                                            {.same_length = -1, .mem_len = 2, .max_segment = SEG},
                                            {.same_length = -1, .mem_len = 12, .max_segment = SEG}};
    txlm_session *bs[MIXED], *ref[MIXED];
    txlm_batch *b = NULL;
    for (uint32_t i = 0; i < MIXED; i++)
        TCHECK(txlm_session_create(m, &so[i], &bs[i]) == TXLM_OK && txlm_session_create(m, &so[i], &ref[i]) == TXLM_OK);
    TCHECK(txlm_batch_create(m, MIXED, &so[1], &b) == TXLM_OK);
    worst = 0;
    float *lp = malloc((size_t)MIXED * SEG * V * sizeof *lp), *want = malloc((size_t)SEG * V * sizeof *want);
    for (uint32_t t = 0; t < 6; t++) {
        int32_t tok[MIXED][SEG];
        txlm_stream_feed f[MIXED];
        for (uint32_t i = 0; i < MIXED; i++) {
            uint32_t len = i == 0 ? SEG : i == 1 ? 1 : 1 + t % 5;
            for (uint32_t j = 0; j < len; j++) tok[i][j] = (int32_t)(lcg(rng) % V);
            f[i] = (txlm_stream_feed){.session = bs[i], .tokens = tok[i], .n = len, .logprobs = lp + (size_t)i * SEG * V};
        }
        TCHECK(txlm_batch_feed(b, f, MIXED) == TXLM_OK);
        for (uint32_t i = 0; i < MIXED; i++) {
            TCHECK(txlm_session_feed(ref[i], tok[i], f[i].n, want) == TXLM_OK);
            compare(f[i].logprobs, want, (size_t)f[i].n * V);
        }
    }
    printf("mixed settings, batched vs alone: max |diff| %.3g\n", worst);
    TCHECK(worst <= 1e-5);
    free(lp), free(want);
    txlm_batch_free(b);
    for (uint32_t i = 0; i < MIXED; i++) txlm_session_free(bs[i]), txlm_session_free(ref[i]);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s TXLM_PACK GOLDEN_DIR CASE [three-pass]\n", argv[0]);
        return 2;
    }
    char *dir = NULL, *dir2 = NULL;
    txlm_context *ctx = NULL, *ctx2 = NULL;
    txlm_model *m = NULL, *other = NULL;
    if (open_golden_model(argv[1], argv[2], argv[3], &dir, &ctx, &m)) return 1;
    /* the attention kernels of one pass only: no stream can share a
     * dispatch, so each attends alone over the batch's rows */
    if (argc > 4 && !strcmp(argv[4], "three-pass")) kernel_switch(ctx, NO_FUSED_ATTENTION, 1);
    if (open_golden_model(argv[1], argv[2], strcmp(argv[3], "char_preln") ? "char_preln" : "adaptive_word", &dir2, &ctx2,
                          &other))
        return 1;
    V = txlm_vocab_size(m);
    txlm_session_options so = {.same_length = -1, .max_segment = SEG};
    txlm_session *bs[K], *ref[K];
    txlm_batch *b = NULL;
    for (uint32_t i = 0; i < K; i++)
        if (txlm_session_create(m, &so, &bs[i]) || txlm_session_create(m, &so, &ref[i])) return 1;
    if (txlm_batch_create(m, K, &so, &b)) return fprintf(stderr, "batch: %s\n", txlm_last_error()), 1;
    uint64_t rng = 7;
    for (uint32_t t = 0; t < STEPS; t++) {
        if (t == 5) txlm_session_reset(bs[2]), txlm_session_reset(ref[2]); /* empty again beside full ones */
        step(b, bs, ref, t, &rng);
    }
    printf("batched vs alone: max |diff| %.3g\n", worst);
    TCHECK(worst <= 1e-5);
    check_sampling(b, bs, ref);
    check_next_rows(b, m, bs, ref);
    /* a batch of one gives the lone pass's bits (test_batch_commands: its
     * commands too), from the same memory: the two sessions start empty
     * (batched and alone, their memories may differ in the last bits:
     * on GPUs a batch's products of 2-15 rows take another kernel) */
    worst = 0;
    int32_t tok[SEG];
    float *a = malloc((size_t)SEG * V * 4), *r = malloc((size_t)SEG * V * 4);
    txlm_stream_feed one = {.session = bs[0], .tokens = tok, .n = SEG, .logprobs = a};
    txlm_memory_use before, after;
    txlm_session_reset(bs[0]), txlm_session_reset(ref[0]);
    TCHECK(txlm_session_memory(bs[0], &before) == TXLM_OK);
    for (int round = 0; round < 2; round++) { /* the second with the first's memory */
        for (uint32_t j = 0; j < SEG; j++) tok[j] = (int32_t)(lcg(&rng) % V);
        TCHECK(txlm_batch_feed(b, &one, 1) == TXLM_OK && txlm_session_feed(ref[0], tok, SEG, r) == TXLM_OK);
        TCHECK(memcmp(a, r, (size_t)SEG * V * 4) == 0);
    }
    /* and, fed only through batches, the session holds no workspace of its own */
    TCHECK(txlm_session_memory(bs[0], &after) == TXLM_OK && after.device_bytes == before.device_bytes);
    /* one stream's draw through the batch's rows: the lone session's token, nothing allocated */
    for (uint32_t r0 = 0; r0 < 3; r0++) {
        int32_t got = -1, alone = -2;
        txlm_sampling how = {.temperature = r0 == 2 ? 0.7f : 1.0f, .top_k = r0 == 2 ? 20 : 0};
        txlm_session_set_seed(bs[0], 40 + r0), txlm_session_set_seed(ref[0], 40 + r0);
        TCHECK(txlm_batch_sample(b, bs, 1, &how, NULL, &got) == TXLM_OK);
        TCHECK(txlm_session_sample(ref[0], &how, &alone) == TXLM_OK && got == alone);
    }
    TCHECK(txlm_session_memory(bs[0], &after) == TXLM_OK && after.device_bytes == before.device_bytes);
    free(a), free(r);
    check_mixed(m, &rng);
    check_refusals(b, bs, other);
    check_busy(b, bs);
    check_plan(ctx, m, dir, argv[3]);
    TCHECK(txlm_context_validation_messages(ctx) == 0);
    txlm_batch_free(b);
    for (uint32_t i = 0; i < K; i++) txlm_session_free(bs[i]), txlm_session_free(ref[i]);
    txlm_model_free(m), txlm_model_free(other);
    test_context_destroy(ctx), test_context_destroy(ctx2);
    rm_tree(dir), rm_tree(dir2);
    free(dir), free(dir2);
    printf("%d failures\n", text_failures);
    return text_failures != 0;
}
