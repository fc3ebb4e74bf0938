/* Each layer's keys and values are a ring: the memory slides by moving
 * its first row, wrapping past the ring's end, and no row ever moves. A
 * session fed many segments must match the CPU reference at every step,
 * through wraps of the memory and of a segment's own rows, and a state
 * saved while the memory wraps must continue in a fresh session (whose
 * ring wraps elsewhere) to the same bits. Two rings: one of generation-
 * like single tokens (the one-query kernels), one of longer segments (the
 * paired kernel). Then generation with the memory full, where a step's
 * recording is submitted again for later steps with the ring elsewhere
 * (engine/forward.c, kept_slot): it must leave the memory bit for bit as
 * recording every step afresh does, and end where the reference does.
 *
 * usage: test_memory_slide GOLDEN_DIR WORK_DIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "context.h"
#include "ref_pack.h"
#include "ref_model.h"
#include "session.h"
#include "../common/check.h"

#define TOLERANCE 1e-4

static double max_abs_diff(const float *a, const float *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs((double)a[i] - b[i]));
    return m;
}

/* Feeds the segments of lens to a session keeping mem_len rows, with
 * segments of at most max_seg, next to the reference. */
static void run(txlm_model *m, ref_model *rm, uint32_t mem_len, uint32_t max_seg, const uint32_t *lens, uint32_t n_lens)
{
    txlm_err err = {0, ""};
    ref_session *rs = NULL;
    ref_session_options ro = {.mem_len = mem_len, .same_length = -1};
    txlm_session *s = NULL, *s2 = NULL;
    txlm_session_options so = {.mem_len = mem_len, .same_length = -1, .max_segment = max_seg};
    if (ref_session_new(rm, &ro, &rs, &err) || txlm_session_create(m, &so, &s)) {
        CHECK(0, "sessions: %s %s", err.msg, txlm_last_error());
        return;
    }
    uint32_t V = ref_model_hparams(rm)->n_token, n_tok = 0;
    for (uint32_t i = 0; i < n_lens; i++) n_tok += lens[i];
    float *want = malloc((size_t)max_seg * V * 4), *got = malloc((size_t)max_seg * V * 4),
          *got2 = malloc((size_t)max_seg * V * 4);
    int32_t *tokens = malloc(n_tok * sizeof *tokens);
    uint64_t x = 12345 + max_seg;
    for (uint32_t i = 0; i < n_tok; i++) tokens[i] = (int32_t)((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 33) % (int32_t)V;

    uint32_t max_base = 0, wraps = 0, split_segments = 0, at = 0, step = 0;
    void *state = NULL;
    for (; step < n_lens; at += lens[step], step++) {
        uint32_t n = lens[step], base_before = s->kv_base;
        split_segments += (s->kv_base + s->mlen) % s->kv_rows + n > s->kv_rows;
        if (ref_forward(rs, tokens + at, n, want, &err)) {
            CHECK(0, "reference: %s", err.msg);
            break;
        }
        CHECK(txlm_session_feed(s, tokens + at, n, got) == TXLM_OK, "feed: %s", txlm_last_error());
        double d = max_abs_diff(got, want, (size_t)n * V);
        CHECK(d < TOLERANCE, "ring of %u, step %u (%u tokens, memory from row %u): max diff %g", s->kv_rows, step, n,
              base_before, d);
        if (s2) {
            CHECK(txlm_session_feed(s2, tokens + at, n, got2) == TXLM_OK, "feed (restored): %s", txlm_last_error());
            CHECK(!memcmp(got, got2, (size_t)n * V * sizeof *got),
                  "ring of %u, step %u: the restored session (memory from row %u) differs from the saving one (row %u) by %g",
                  s->kv_rows, step, s2->kv_base, s->kv_base, max_abs_diff(got, got2, (size_t)n * V));
        }
        if (s->kv_base > max_base) max_base = s->kv_base;
        wraps += s->kv_base < base_before;
        CHECK(txlm_session_memory_len(s) == ref_session_memory_len(rs), "step %u: memory %u rows, reference %u", step,
              txlm_session_memory_len(s), ref_session_memory_len(rs));
        if (!s2 && s->kv_base + s->mlen > s->kv_rows) {
            /* saved while the memory runs past the ring's end; restored at row 0 */
            size_t cap = txlm_session_state_size(s), written = 0;
            state = malloc(cap);
            CHECK(txlm_session_save(s, state, cap, &written) == TXLM_OK, "save: %s", txlm_last_error());
            CHECK(txlm_session_create(m, &so, &s2) == TXLM_OK, "session: %s", txlm_last_error());
            CHECK(txlm_session_restore(s2, state, written) == TXLM_OK, "restore: %s", txlm_last_error());
        }
    }
    CHECK(s->kv_rows == mem_len + max_seg, "ring of %u rows, not mem_len + longest segment", s->kv_rows);
    CHECK(max_base > 0 && wraps >= 2 && split_segments >= 3,
          "ring of %u: the memory never slid (first row at most %u), wrapped %u times, or a segment wrapped %u times",
          s->kv_rows, max_base, wraps, split_segments);
    CHECK(s2 != NULL, "ring of %u: no state was saved while the memory wrapped", s->kv_rows);
    printf("ring of %u rows: %u segments match the reference (%u wraps of the memory, %u segments wrapping)\n", s->kv_rows,
           step, wraps, split_segments);
    free(state), free(want), free(got), free(got2), free(tokens);
    txlm_session_free(s2);
    txlm_session_free(s);
    ref_session_free(rs);
}

/* Session a keeps recordings, b records every segment afresh (the
 * context's no_replay, on around b's calls only); each one's dispatches
 * and replays are tallied from the context's counts (engine/vk/debug.h). */
typedef struct tally {
    uint64_t uses;
    uint32_t replays;
} tally;
static txlm_debug *dbg;
static tally tallies[2];

/* Dispatches counted, but kv_put's: a segment's keys and values go into
 * the ring by the product itself, or by kv_put where they wrap past its
 * end, and a's ring turns otherwise than b's once a is restored. */
static uint64_t all_uses(void)
{
    uint64_t n = 0;
    for (uint32_t k = 0; k < TXLM_K_COUNT; k++) n += k == TXLM_K_KV_PUT || k == TXLM_K_KV_PUT_X8 ? 0 : dbg->kernel_uses[k];
    return n;
}

static txlm_status as(int is_b, txlm_status (*call)(txlm_session *, const int32_t *, uint32_t, uint32_t, float *),
                      txlm_session *s, const int32_t *t, uint32_t n)
{
    uint64_t u = all_uses();
    uint32_t r = dbg->replays;
    dbg->no_replay = is_b;
    txlm_status st = call(s, t, n, n, NULL);
    dbg->no_replay = 0;
    tallies[is_b].uses += all_uses() - u, tallies[is_b].replays += dbg->replays - r;
    return st;
}

/* A draw at temperature 1 into *t, called as `as` calls a feed. */
static txlm_status sample(txlm_session *s, const int32_t *t, uint32_t n, uint32_t first, float *lp)
{
    (void)n, (void)first, (void)lp;
    static const txlm_sampling plain = {.temperature = 1.0f};
    return txlm_session_sample(s, &plain, (int32_t *)t);
}

/* Generation after a prompt that fills the memory: sampled tokens and
 * forced ones from every embedding cluster, single, in pairs and in
 * segments of the longest length (more keys than kept recordings), in
 * session a (recordings kept) and session b (every segment recorded);
 * a captures one step's attention, and is reset and restored halfway. */
static void run_replayed(txlm_model *m, ref_model *rm, uint32_t mem_len, uint32_t max_seg, uint32_t n_steps)
{
    txlm_err err = {0, ""};
    ref_session *rs = NULL;
    ref_session_options ro = {.mem_len = mem_len, .same_length = -1};
    txlm_session *a = NULL, *b = NULL;
    txlm_session_options so = {.mem_len = mem_len, .same_length = -1, .max_segment = max_seg};
    if (ref_session_new(rm, &ro, &rs, &err) || txlm_session_create(m, &so, &a) || txlm_session_create(m, &so, &b)) {
        CHECK(0, "sessions: %s %s", err.msg, txlm_last_error());
        return;
    }
    dbg = m->ctx->vk.debug;
    dbg->count = 1;
    tallies[0] = tallies[1] = (tally){0, 0};
    uint32_t V = ref_model_hparams(rm)->n_token;
    float *want = malloc((size_t)max_seg * V * 4), *got = malloc((size_t)max_seg * V * 4);
    size_t cap = txlm_session_state_size(a) + (size_t)mem_len * 1024 * 1024;
    void *sa = malloc(cap), *sb = malloc(cap);
    static const int32_t prompt[] = {3, 250, 700, 1, 42, 999, 201, 17};
    /* forced tokens cycle through the clusters [0, 200), [200, 500), [500, 1000) */
    static const int32_t forced[] = {5, 300, 800, 450, 12, 600};
    for (uint32_t i = 0; i < 8; i += 4) {
        CHECK(as(0, txlm_session_feed_rows, a, prompt + i, 4) == TXLM_OK &&
                  as(1, txlm_session_feed_rows, b, prompt + i, 4) == TXLM_OK,
              "prompt: %s", txlm_last_error());
        CHECK(!ref_forward(rs, prompt + i, 4, want, &err), "reference: %s", err.msg);
    }
    txlm_session_set_seed(a, 7);
    txlm_session_set_seed(b, 7);
    uint32_t wraps = 0, pairs = 0, long_replays = 0;
    for (uint32_t step = 0; step < n_steps; step++) {
        int32_t t[4] = {0, 0, 0, 0}, tb = 0;
        uint32_t n = step % 5 == 4 ? 2 : step % 7 == 6 ? 4 : 1, base = a->kv_base;
        if (step % 2 == 0) {
            CHECK(as(0, sample, a, &t[0], 0) == TXLM_OK && as(1, sample, b, &tb, 0) == TXLM_OK,
                  "sample: %s", txlm_last_error());
            CHECK(t[0] == tb, "step %u: kept recordings drew %d, fresh ones %d", step, t[0], tb);
        } else {
            t[0] = forced[step / 2 % 6];
        }
        for (uint32_t i = 1; i < 4; i++) t[i] = forced[(step + 2 * i + 1) % 6];
        pairs += n == 2;
        /* one step with attention captured (recorded afresh, and through
         * the three-pass attention, so in both), the next ones not */
        txlm_capture_mode cm = step == 11 ? TXLM_CAPTURE_PROBS : TXLM_CAPTURE_OFF;
        CHECK(txlm_session_capture_attention(a, cm) == TXLM_OK && txlm_session_capture_attention(b, cm) == TXLM_OK,
              "capture: %s", txlm_last_error());
        uint32_t replays = tallies[0].replays;
        CHECK(as(0, txlm_session_feed_rows, a, t, n) == TXLM_OK && as(1, txlm_session_feed_rows, b, t, n) == TXLM_OK,
              "step %u: %s", step, txlm_last_error());
        long_replays += n == max_seg && tallies[0].replays > replays;
        CHECK(!ref_forward(rs, t, n, want, &err), "reference: %s", err.msg);
        wraps += a->kv_base < base;
        size_t wa = 0, wb = 0;
        CHECK(txlm_session_save(a, sa, cap, &wa) == TXLM_OK && txlm_session_save(b, sb, cap, &wb) == TXLM_OK, "save: %s",
              txlm_last_error());
        CHECK(wa == wb && !memcmp(sa, sb, wa), "step %u (memory from row %u): the state after a kept recording differs", step,
              a->kv_base);
        if (step == n_steps / 2) {
            /* a restored memory starts at row 0: the recordings kept before
             * serve it through the step buffer */
            txlm_session_reset(a);
            CHECK(txlm_session_restore(a, sa, wa) == TXLM_OK, "restore: %s", txlm_last_error());
            CHECK(a->kv_base != b->kv_base, "restored at ring row %u, as the other session", a->kv_base);
        }
    }
    uint64_t ua = tallies[0].uses, ub = tallies[1].uses;
    /* replays count their dispatches as recording them does */
    CHECK(ua == ub && ub > 0, "dispatches counted: %llu with kept recordings, %llu without",
          (unsigned long long)ua, (unsigned long long)ub);
    /* a last token with its log-probabilities, not kept, against the reference */
    int32_t last = 321;
    CHECK(txlm_session_feed(a, &last, 1, got) == TXLM_OK, "feed: %s", txlm_last_error());
    CHECK(!ref_forward(rs, &last, 1, want, &err), "reference: %s", err.msg);
    double d = max_abs_diff(got, want, V);
    CHECK(d < TOLERANCE, "after %u generated steps: max diff %g from the reference", n_steps, d);
    CHECK(tallies[0].replays >= n_steps / 3 && long_replays >= 1 && tallies[1].replays == 0 && wraps >= 2 && pairs >= 3,
          "%u of %u steps replayed (%u of the longest segments; session b: %u), the memory wrapped %u times, %u pairs",
          tallies[0].replays, n_steps, long_replays, tallies[1].replays, wraps, pairs);
    printf("generation in a ring of %u rows: %u of %u steps replayed a kept recording, %u wraps, memory identical\n",
           a->kv_rows, tallies[0].replays, n_steps, wraps);
    free(want), free(got), free(sa), free(sb);
    txlm_session_free(a);
    txlm_session_free(b);
    ref_session_free(rs);
}

int main(int argc, char **argv)
{
    if (argc != 3) return fprintf(stderr, "usage: test_memory_slide GOLDEN_DIR WORK_DIR\n"), 2;
    char dir[1024], model[1200];
    snprintf(dir, sizeof dir, "%s/decode_steps", argv[1]);
    mkdir(argv[2], 0777);
    snprintf(model, sizeof model, "%s/memory_slide.txlm", argv[2]);
    txlm_err err = {0, ""};
    if (ref_pack_dir(dir, model, &err)) return fprintf(stderr, "FAIL packing: %s\n", err.msg), 1;

    ref_model *rm = NULL;
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_context_options co = {0}; /* TXLM_VALIDATION in the environment turns the layer on */
    if (ref_model_open(model, &rm, &err)) return fprintf(stderr, "FAIL reference: %s\n", err.msg), 1;
    if (txlm_context_create(&co, &ctx) || txlm_model_load(ctx, model, NULL, &m))
        return fprintf(stderr, "FAIL opening: %s\n", txlm_last_error()), 1;
    unlink(model);

    /* mostly single tokens, with longer segments in between so that the
     * memory and the segments wrap at different fill levels (a ring of 9) */
    static const uint32_t steps[] = {4, 1, 1, 1, 1, 2, 1, 3, 1, 1, 3, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 4,
                                     4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1};
    run(m, rm, 5, 4, steps, sizeof steps / sizeof *steps);
    /* segments of 5-8 queries (two per invocation) in a ring of 15 */
    static const uint32_t segments[] = {8, 5, 7, 6, 8, 5, 8, 7, 6, 5, 8, 8};
    run(m, rm, 7, 8, segments, sizeof segments / sizeof *segments);
    run_replayed(m, rm, 5, 4, 40);

    uint64_t vmsgs = txlm_context_validation_messages(ctx);
    CHECK(vmsgs == 0, "%llu Vulkan validation messages", (unsigned long long)vmsgs);
    txlm_model_free(m);
    txlm_context_destroy(ctx);
    ref_model_free(rm);
    if (failures) return fprintf(stderr, "%d memory checks failed\n", failures), 1;
    return 0;
}
