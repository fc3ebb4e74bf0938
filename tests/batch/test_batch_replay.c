/* Kept recordings of batched passes (engine/replay.c, txlm_replay_pass_slot):
 * two batches of four sessions each fed the same tokens, one submitting
 * its kept recordings again, one recording every pass afresh. After every
 * pass each session's saved state (its memory, last row, sampler) must be
 * the other's to the byte, through rings that wrap many times, a stream
 * of two tokens beside single ones, a stream left out of some passes, one
 * reset midway (its memory refilling), one freed and replaced by a new
 * session (its buffers elsewhere: the old recordings must not serve it),
 * and passes asking for log-probabilities (recorded, never kept; equal to
 * the bit too). The replaying batch must have replayed, the other never.
 *
 * usage: test_batch_replay TXLM_PACK GOLDEN_DIR CASE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "golden_model.h"
#include "../common/test_context.h"
#include "text_util.h"

#define K 4
#define STEPS 90
#define MEM 6

static uint32_t V;

static uint32_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*x >> 33);
}

/* Stream i's tokens at step t (0: left out of the pass). */
static uint32_t seg_len(uint32_t i, uint32_t t)
{
    if (i == 2) return t % 3 ? 1 : 2;
    if (i == 3 && t >= 20 && t < 26) return 0;
    return 1;
}

static int same_state(txlm_session *a, txlm_session *b)
{
    size_t na = txlm_session_state_size(a), nb = txlm_session_state_size(b), wa = 0, wb = 0;
    char *x = malloc(na), *y = malloc(nb);
    int same = na == nb && txlm_session_save(a, x, na, &wa) == TXLM_OK && txlm_session_save(b, y, nb, &wb) == TXLM_OK &&
               wa == wb && memcmp(x, y, wa) == 0;
    free(x), free(y);
    return same;
}

/* Batch b records every pass afresh: the context's no_replay, on around
 * its calls only (engine/vk/debug.h, as TXLM_NO_REPLAY=1 does). The
 * replays of each are tallied from the context's count. */
static txlm_debug *dbg;
static uint32_t replays[2];

static txlm_status feed_as(int is_b, txlm_batch *bt, const txlm_stream_feed *f, uint32_t n)
{
    uint32_t r = dbg->replays;
    dbg->no_replay = is_b;
    txlm_status st = txlm_batch_feed(bt, f, n);
    dbg->no_replay = 0;
    replays[is_b] += dbg->replays - r;
    return st;
}

/* One pass of each batch; stream 0 asks for its log-probabilities every seventh. */
static void step(txlm_batch *ba, txlm_session **a, txlm_batch *bb, txlm_session **b, uint32_t t, uint64_t *rng)
{
    txlm_stream_feed fa[K], fb[K];
    int32_t tok[K][2];
    float *lpa = malloc(2 * (size_t)V * 4), *lpb = malloc(2 * (size_t)V * 4);
    uint32_t n = 0;
    for (uint32_t i = 0; i < K; i++) {
        uint32_t len = seg_len(i, t);
        if (!len) continue;
        for (uint32_t j = 0; j < len; j++) tok[i][j] = (int32_t)(lcg(rng) % V);
        fa[n] = (txlm_stream_feed){.session = a[i], .tokens = tok[i], .n = len};
        fb[n] = (txlm_stream_feed){.session = b[i], .tokens = tok[i], .n = len};
        if (i == 0 && t % 7 == 6) fa[n].logprobs = lpa, fb[n].logprobs = lpb;
        n++;
    }
    TCHECK(feed_as(0, ba, fa, n) == TXLM_OK && feed_as(1, bb, fb, n) == TXLM_OK);
    if (t % 7 == 6) TCHECK(memcmp(lpa, lpb, (size_t)V * 4) == 0);
    for (uint32_t i = 0; i < K; i++)
        if (!same_state(a[i], b[i])) {
            fprintf(stderr, "step %u: stream %u's state differs between the replaying batch and the other\n", t, i);
            text_failures++;
        }
    free(lpa), free(lpb);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s TXLM_PACK GOLDEN_DIR CASE\n", argv[0]);
        return 2;
    }
    char *dir = NULL;
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    if (open_golden_model(argv[1], argv[2], argv[3], &dir, &ctx, &m)) return 1;
    V = txlm_vocab_size(m);
    txlm_session_options so = {.same_length = -1, .mem_len = MEM, .max_segment = 2};
    txlm_session *a[K], *b[K];
    txlm_batch *ba = NULL, *bb = NULL;
    for (uint32_t i = 0; i < K; i++)
        if (txlm_session_create(m, &so, &a[i]) || txlm_session_create(m, &so, &b[i])) return 1;
    if (txlm_batch_create(m, K, &so, &ba) || txlm_batch_create(m, K, &so, &bb))
        return fprintf(stderr, "batch: %s\n", txlm_last_error()), 1;
    dbg = ctx->vk.debug;
    dbg->count = 1;
    uint64_t rng = 11;
    for (uint32_t t = 0; t < STEPS; t++) {
        if (t == 35) txlm_session_reset(a[1]), txlm_session_reset(b[1]);
        if (t == 50) { /* a new session where stream 3 was: its rings are other buffers */
            txlm_session_free(a[3]), txlm_session_free(b[3]);
            TCHECK(txlm_session_create(m, &so, &a[3]) == TXLM_OK && txlm_session_create(m, &so, &b[3]) == TXLM_OK);
        }
        step(ba, a, bb, b, t, &rng);
    }
    printf("replays: %u (kept) and %u (recorded afresh)\n", replays[0], replays[1]);
    TCHECK(replays[0] > STEPS / 2 && replays[1] == 0);
    TCHECK(txlm_context_validation_messages(ctx) == 0);
    txlm_batch_free(ba), txlm_batch_free(bb);
    for (uint32_t i = 0; i < K; i++) txlm_session_free(a[i]), txlm_session_free(b[i]);
    txlm_model_free(m);
    test_context_destroy(ctx);
    rm_tree(dir);
    free(dir);
    printf("%d failures\n", text_failures);
    return text_failures != 0;
}
