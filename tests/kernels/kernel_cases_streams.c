/* Several streams' attention in shared dispatches (engine/attn_streams.h)
 * against the CPU reference, and against each stream attending alone (the
 * same bits: a stream takes the kernel it takes alone); the segment's keys
 * and values put into each ring first (kv_put). Part of test_kernels
 * (kernel_harness.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_streams.h"
#include "kernel_harness.h"
#include "ref_ops.h"
#include "../common/check.h"

/* One stream: its segment of qlen queries after mlen memory rows, in a
 * ring of `ring` rows from row kv_row0, its masks' settings. */
typedef struct stream_case {
    uint32_t qlen, mlen, ring, kv_row0;
    int same_length;
    uint32_t mem_len;
    int32_t clamp;
} stream_case;

typedef struct stream_data {
    const stream_case *c;
    uint32_t row0, klen, max_dist;
    float *ring0;   /* the ring before the put: memory rows, stale ones */
    txlm_buf kvb;   /* the ring on the device */
    txlm_buf rkb;   /* its position keys: rk_off elements, then max_dist + 1 rows, nothing more */
    uint32_t rk_rows; /* the rows it reads for keys it sees (a session's computed rows) */
    txlm_attn_shape shape;
    float *want;    /* [qlen, H*dh] reference output */
} stream_data;

/* Its largest distance with a row of its own, as a session's
 * (txlm_stream_settle): its clamp, or `longest`, the longest distance of
 * any stream of the case (as if every session had the same mem_len and
 * segment length), so that unclamped streams share a table shape. */
static uint32_t max_dist_of(const stream_case *c, uint32_t longest)
{
    return c->clamp > 0 && (uint32_t)c->clamp < longest ? (uint32_t)c->clamp : longest;
}

/* The reference output of stream d: its keys from the ring (memory) and
 * the new rows (its segment's, src rows from row0 on). */
static void reference(stream_data *d, const float *q, const float *src, const float *rkd, uint32_t rk_off,
                      const float *rwb, const float *rrb, uint32_t H, uint32_t dh)
{
    const stream_case *c = d->c;
    uint32_t hd = H * dh, klen = d->klen;
    float *k = malloc((size_t)klen * hd * 4), *v = malloc((size_t)klen * hd * 4), *rk = malloc((size_t)klen * hd * 4);
    for (uint32_t j = 0; j < klen; j++) {
        const float *row = j < c->mlen ? d->ring0 + (size_t)((c->kv_row0 + j) % c->ring) * 2 * hd
                                       : src + (size_t)(d->row0 + j - c->mlen) * 2 * hd;
        memcpy(k + (size_t)j * hd, row, hd * 4);
        memcpy(v + (size_t)j * hd, row + hd, hd * 4);
        uint32_t pos = klen - 1 - j;
        if (pos > d->max_dist) pos = d->max_dist;
        memcpy(rk + (size_t)j * hd, rkd + rk_off + (size_t)pos * hd, hd * 4);
    }
    size_t plane = (size_t)H * c->qlen * klen;
    float *p = malloc(plane * 4), *t = malloc(4 * plane * 4);
    d->want = malloc((size_t)c->qlen * hd * 4);
    ref_rel_attention(q + (size_t)d->row0 * hd, k, v, rk, rwb, rrb, c->qlen, c->mlen, H, dh, c->same_length, c->mem_len,
                      p, t, d->want);
    free(k), free(v), free(rk), free(p), free(t);
}

/* The rings as each test run starts them (the put overwrites the segment's rows). */
static void reset_rings(stream_data *d, uint32_t n, uint32_t hd)
{
    for (uint32_t i = 0; i < n; i++) memcpy(d[i].kvb.map, d[i].ring0, (size_t)d[i].c->ring * 2 * hd * 4);
}

/* Every ring row as expected after the put: the segment's rows from src, the others as they were. */
static int rings_ok(const stream_data *d, uint32_t n, const float *src, uint32_t hd)
{
    for (uint32_t i = 0; i < n; i++) {
        const stream_case *c = d[i].c;
        for (uint32_t r = 0; r < c->ring; r++) {
            uint32_t j = (r + c->ring - c->kv_row0) % c->ring; /* key j sits at row r */
            const float *want = j >= c->mlen && j < d[i].klen ? src + (size_t)(d[i].row0 + j - c->mlen) * 2 * hd
                                                              : d[i].ring0 + (size_t)r * 2 * hd;
            if (memcmp((const float *)d[i].kvb.map + (size_t)r * 2 * hd, want, 2 * hd * 4)) return 0;
        }
    }
    return 1;
}

/* Each stream alone through txlm_op_attention, over its own position
 * keys: its output's bits must be those of the shared dispatch (out). */
static int alone_equal(stream_data *d, uint32_t n, const float *q, uint32_t rk_off, txlm_gpu_tensor *rwt,
                       txlm_gpu_tensor *rrt, uint32_t hd, const float *out, uint64_t own_scratch)
{
    int same = 1;
    for (uint32_t i = 0; i < n && same; i++) {
        uint32_t qlen = d[i].c->qlen;
        txlm_buf qb = host_buf(q + (size_t)d[i].row0 * hd, (size_t)qlen * hd), ob = host_buf(NULL, (size_t)qlen * hd);
        txlm_buf sb = host_buf(NULL, own_scratch / 4);
        begin();
        txlm_op_attention(&ops, &(txlm_attention_args){.shape = &d[i].shape, .q = txlm_view_of(&qb),
                                                       .kv = txlm_view_of(&d[i].kvb), .rk = txlm_view_of(&d[i].rkb),
                                                       .rk_off = rk_off,
                                                       .r_w_bias = rwt, .r_r_bias = rrt, .scratch = txlm_view_of(&sb),
                                                       .out = txlm_view_of(&ob)});
        run();
        same = !memcmp(ob.map, out + (size_t)d[i].row0 * hd, (size_t)qlen * hd * 4);
        txlm_buf_destroy(&ctx->vk, &qb), txlm_buf_destroy(&ctx->vk, &ob), txlm_buf_destroy(&ctx->vk, &sb);
    }
    return same;
}

/* The modes the shared dispatches run in: the device's default, texel
 * reads or not, without the subgroup kernels, one query per invocation,
 * the GPUs' tiles (their runs merged by the last to finish), one stream
 * per dispatch (no slots), the one-query kernel's runs merged by a
 * dispatch of their own, the tiles on the matrix units (streams of a
 * model that is not f32), the GPUs' tiles with their runs merged by a
 * dispatch of their own. */
enum { S_DEFAULT, S_STORAGE, S_TEXEL, S_NO_SG, S_NO_PAIR, S_TILE, S_ONE_SLOT, S_NO_MERGE, S_CM, S_TILE_AFTER, S_MODES };

static int streams_mode(int mode)
{
    ctx->vk.stream_slots = 1; /* on any device (CPU ones attend a stream a dispatch by default) */
    int tile = mode == S_TILE || mode == S_TILE_AFTER;
    ctx->vk.gpu_kernels = tile || mode == S_CM;
    ctx->vk.texel = mode == S_STORAGE || tile || mode == S_CM ? 0 : mode == S_DEFAULT ? ctx->vk.texel : have_texel;
    if (tile && !txlm_kernel_usable(&ctx->vk, TXLM_K_ATTN_TILE)) return 0;
    if (mode == S_CM && !txlm_kernel_usable(&ctx->vk, TXLM_K_ATTN_CM)) return 0;
    kernel_switch(ctx, NO_ATTN_SG | NO_SHUFFLE, mode == S_NO_SG);
    kernel_switch(ctx, NO_PAIRED_ATTENTION, mode == S_NO_PAIR);
    kernel_switch(ctx, NO_STREAM_SLOTS, mode == S_ONE_SLOT);
    kernel_switch(ctx, NO_FUSED_MERGE, mode == S_NO_MERGE || mode == S_TILE_AFTER);
    return 1;
}

/* The streams the plan left to attend alone (the three-pass path: a head
 * size or position-key offset the vector kernels do not take), each from
 * its entry in the step buffer and its rows of the pass, as
 * engine/attend.c dispatches them. */
static void attend_alone(const txlm_attn_plan *plan, const stream_data *d, uint32_t n, txlm_view q, const txlm_view *rk,
                         uint32_t rk_off, const txlm_gpu_tensor *rwt, const txlm_gpu_tensor *rrt, const txlm_view *kv,
                         txlm_view scratch, txlm_view out)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!plan->alone[i]) continue;
        txlm_attn_shape sh = d[i].shape;
        sh.kv_row0 = 0, sh.q0 = d[i].row0;
        sh.kv_dyn = 1 + TXLM_ENTRY_TABLE + plan->entry[i] * TXLM_ENTRY_WORDS + TXLM_ENTRY_KV_FIRST;
        txlm_attention_args a = {.shape = &sh, .q = q, .kv = kv[i], .rk = rk[i], .rk_off = rk_off, .r_w_bias = rwt,
                                 .r_r_bias = rrt, .scratch = scratch, .out = out};
        txlm_attn_dispatch(&ops, &a, &plan->choice[i]);
    }
}

/* Every group's streams read only rows its bound position keys hold:
 * the kernels clamp every position row they read (masked keys' included)
 * to the stream's clamp_max, so that row must lie in the bound buffer,
 * and every row a stream reads for a key it sees must be one the bound
 * stream computed. 1 when so. */
static int groups_in_bounds(const txlm_attn_plan *plan, const stream_data *d, const txlm_view *rk, uint32_t rk_off,
                            uint32_t hd)
{
    for (uint32_t g = 0; g < plan->n_groups; g++) {
        const txlm_attn_group *gr = &plan->groups[g];
        uint64_t rows = (rk[gr->rk_stream].size / 4 - rk_off) / hd;
        for (uint32_t e = gr->first; e < gr->first + gr->n; e++) {
            const stream_data *s = &d[plan->order[e]];
            if (s->max_dist + 1 > rows || s->rk_rows > d[gr->rk_stream].rk_rows) return 0;
        }
    }
    return 1;
}

void test_attention_streams(const stream_case *cases, uint32_t n, uint32_t H, uint32_t dh, uint32_t rk_off)
{
    uint32_t hd = H * dh, rows = 0, dist = 0, longest = 0;
    stream_data *d = calloc(n, sizeof *d);
    txlm_attn_stream *st = calloc(n, sizeof *st);
    uint64_t own = 0;
    for (uint32_t i = 0; i < n; i++) longest = longest > cases[i].mlen + cases[i].qlen - 1 ? longest : cases[i].mlen + cases[i].qlen - 1;
    for (uint32_t i = 0; i < n; i++) {
        const stream_case *c = &cases[i];
        d[i] = (stream_data){.c = c, .row0 = rows, .klen = c->mlen + c->qlen, .max_dist = max_dist_of(c, longest)};
        d[i].rk_rows = (d[i].klen - 1 < d[i].max_dist ? d[i].klen - 1 : d[i].max_dist) + 1;
        d[i].ring0 = rand_vec((size_t)c->ring * 2 * hd, 1);
        d[i].kvb = host_buf(d[i].ring0, (size_t)c->ring * 2 * hd);
        d[i].shape = (txlm_attn_shape){.qlen = c->qlen, .mlen = c->mlen, .H = H, .dh = dh, .clamp_max = d[i].max_dist,
                                       .same_length = (uint32_t)c->same_length, .mem_len = c->mem_len,
                                       .kv_row0 = c->kv_row0, .kv_rows = c->ring};
        txlm_attn_shape few = d[i].shape;
        uint64_t plane = (uint64_t)H * c->qlen * d[i].klen * 4, split = txlm_attn_split_bytes(&few);
        own = own > plane ? own : plane;
        own = own > split ? own : split;
        rows += c->qlen;
        dist = dist > d[i].max_dist + 1 ? dist : d[i].max_dist + 1;
    }
    /* every stream's position keys are the same rows, as every session's are (layers.c) */
    float *q = rand_vec((size_t)rows * hd, 1), *src = rand_vec((size_t)rows * 2 * hd, 1);
    float *rkd = rand_vec(rk_off + (size_t)dist * hd, 1), *rwb = rand_vec(hd, 0.5f), *rrb = rand_vec(hd, 0.5f);
    for (uint32_t i = 0; i < n; i++) reference(&d[i], q, src, rkd, rk_off, rwb, rrb, H, dh);
    txlm_buf qb = host_buf(q, (size_t)rows * hd), srcb = host_buf(src, (size_t)rows * 2 * hd);
    txlm_buf ob = host_buf(NULL, (size_t)rows * hd);
    txlm_buf sb = host_buf(NULL, (size_t)(own / 4) * TXLM_STREAM_SLOTS), syncb = host_buf(NULL, TXLM_SYNC_WORDS);
    txlm_buf stepb = host_buf(NULL, TXLM_ENTRY_TABLE + (size_t)n * TXLM_ENTRY_WORDS);
    txlm_gpu_tensor rwt = weight(rwb, H, dh, 0), rrt = weight(rrb, H, dh, 0);
    txlm_view *kv = calloc(n, sizeof *kv), *rk = calloc(n, sizeof *rk);
    for (uint32_t i = 0; i < n; i++) {
        d[i].rkb = host_buf(rkd, rk_off + (size_t)(d[i].max_dist + 1) * hd);
        kv[i] = txlm_view_of(&d[i].kvb), rk[i] = txlm_view_of(&d[i].rkb);
        st[i] = (txlm_attn_stream){.shape = d[i].shape, .row0 = d[i].row0, .own_scratch = own, .kv = kv[i], .rk = rk[i],
                                   .rk_rows = d[i].rk_rows};
    }
    int texel_default = ctx->vk.texel, gpu_default = ctx->vk.gpu_kernels, slots_default = ctx->vk.stream_slots;
    rec.step = txlm_view_of(&stepb);
    ops.sync = txlm_view_of(&syncb);
    for (int mode = 0; mode < S_MODES; mode++) {
        if (!streams_mode(mode)) continue;
        for (uint32_t i = 0; i < n; i++) st[i].shape.f16 = d[i].shape.f16 = mode == S_CM;
        txlm_attn_plan plan;
        int vec_ok = dh % 4 == 0 && rk_off % 4 == 0;
        int made = txlm_attn_plan_make(&ops, st, n, txlm_view_of(&qb), rk_off, txlm_tensor_view(&rwt),
                                       txlm_tensor_view(&rrt), sb.size, &plan);
        CHECK(made && (plan.n_alone == 0) == vec_ok && plan.n_alone + plan.n_groups > 0,
              "streams (mode %d, H=%u dh=%u rk_off=%u): %s", mode, H, dh, rk_off,
              !made ? "no plan" : vec_ok ? "streams alone that the vector kernels take" : "dispatches shared by the three-pass path");
        if (!made) continue;
        CHECK(groups_in_bounds(&plan, d, rk, rk_off, hd),
              "streams (mode %d, H=%u dh=%u rk_off=%u): a group binds position keys some stream of it reads past", mode, H,
              dh, rk_off);
        memcpy(stepb.map, plan.words, (TXLM_ENTRY_TABLE + n * TXLM_ENTRY_WORDS) * 4);
        reset_rings(d, n, hd);
        memset(ob.map, 0, ob.size);
        uint32_t dispatches = 0;
        for (uint32_t k = 0; k < TXLM_K_COUNT; k++) dispatches += ctx->vk.debug->kernel_uses[k];
        begin();
        txlm_op_kv_put_streams(&ops, &plan, txlm_view_of(&srcb), kv);
        txlm_rec_barrier(&rec);
        txlm_op_attention_streams(&ops, &(txlm_attention_streams_args){.plan = &plan, .q = txlm_view_of(&qb),
                                                                        .out = txlm_view_of(&ob), .scratch = txlm_view_of(&sb),
                                                                        .kv = kv, .rk = rk, .r_w_bias = &rwt, .r_r_bias = &rrt});
        attend_alone(&plan, d, n, txlm_view_of(&qb), rk, rk_off, &rwt, &rrt, kv, txlm_view_of(&sb), txlm_view_of(&ob));
        run();
        for (uint32_t k = 0; k < TXLM_K_COUNT; k++) dispatches -= ctx->vk.debug->kernel_uses[k];
        double worst = 0;
        for (uint32_t i = 0; i < n; i++) {
            double e = max_abs_diff((const float *)ob.map + (size_t)d[i].row0 * hd, d[i].want, (size_t)d[i].c->qlen * hd);
            worst = e > worst ? e : worst;
        }
        uint32_t left = 0;
        for (uint32_t w = 0; w < TXLM_SYNC_WORDS; w++) left |= ((uint32_t *)syncb.map)[w];
        int rings = rings_ok(d, n, src, hd);
        int alone = alone_equal(d, n, q, rk_off, &rwt, &rrt, hd, ob.map, own);
        /* groups of TXLM_STREAM_SLOTS streams (where the twins run) take fewer dispatches than streams */
        uint32_t used = 0u - dispatches;
        /* the matrix units multiply f16: within what that rounding gives (attention's own test bounds it tightly) */
        CHECK(worst < (mode == S_CM ? 5e-3 : 1e-4) && rings && alone && left == 0 &&
                  (mode == S_ONE_SLOT || plan.n_alone || n <= 2 || used < 2 * n),
              "streams (mode %d, %u streams, H=%u dh=%u rk_off=%u, %u groups, %u dispatches): out diff %g, rings %s, "
              "alone %s, counts left %u", mode, n, H, dh, rk_off, plan.n_groups, used, worst, rings ? "right" : "WRONG",
              alone ? "the same bits" : "DIFFERENT", left);
        txlm_attn_plan_free(&plan);
        case_done();
    }
    kernel_switch(ctx, NO_ATTN_SG | NO_SHUFFLE | NO_PAIRED_ATTENTION | NO_STREAM_SLOTS | NO_FUSED_MERGE, 0);
    ctx->vk.texel = texel_default, ctx->vk.gpu_kernels = gpu_default, ctx->vk.stream_slots = slots_default;
    rec.step = txlm_view_of(&ctx->dummy);
    ops.sync = (txlm_view){0};
    for (uint32_t i = 0; i < n; i++) {
        txlm_buf_destroy(&ctx->vk, &d[i].kvb), txlm_buf_destroy(&ctx->vk, &d[i].rkb);
        free(d[i].ring0), free(d[i].want);
    }
    txlm_buf_destroy(&ctx->vk, &qb), txlm_buf_destroy(&ctx->vk, &srcb);
    txlm_buf_destroy(&ctx->vk, &ob), txlm_buf_destroy(&ctx->vk, &sb), txlm_buf_destroy(&ctx->vk, &syncb);
    txlm_buf_destroy(&ctx->vk, &stepb);
    txlm_tensor_free(&ctx->vk, &rwt), txlm_tensor_free(&ctx->vk, &rrt);
    free(q), free(src), free(rkd), free(rwb), free(rrb), free(kv), free(rk), free(st), free(d);
}

int test_streams_mixed(void)
{
    /* sessions of other clamps in one pass: streams clamped at 8 (tables of
     * 9 rows, all computed) beside unclamped ones with fewer rows computed
     * but longer tables (32 rows), whose masked keys' rows (the tiles') lie
     * past 8: bound to a clamped stream's table, as the stream with the most
     * rows computed, they would read past it */
    static const stream_case mixed[] = {
        {1, 12, 16, 3, 0, 12, 8}, {1, 4, 8, 6, 0, 4, -1}, {1, 9, 12, 0, 1, 9, 8}, {1, 2, 4, 1, 0, 2, -1},
        {20, 12, 40, 30, 1, 10, 8}, {18, 4, 30, 2, 0, 4, 8},
    };
    test_attention_streams(mixed, 6, 4, 64, 0);
    test_attention_streams(mixed, 6, 2, 16, 0);
    return failures;
}

int test_streams_cases(void)
{
    /* qlen, mlen, ring, memory row 0, same_length, its bound, clamp */
    static const stream_case gen[] = {
        {1, 640, 1152, 1000, 1, 640, 1000}, /* generation's shape, wrapping */
        {1, 0, 8, 3, 1, 16, -1},            /* an empty memory */
        {3, 30, 40, 33, 1, 24, 12},         /* a few queries, the new keys wrapping */
        {4, 11, 16, 11, 0, 11, -1},
        {1, 150, 160, 100, 1, 140, 60},     /* the wrap mid-run */
        {2, 17, 19, 18, 1, 17, 5},
        {1, 11, 12, 11, 1, 11, 20},         /* memory row 0 at the ring's last row */
        {1, 11, 12, 1, 1, 11, 20},          /* the new key alone at row 0 */
        {4, 64, 70, 0, 0, 64, -1},          /* the ninth of a few queries */
        {23, 40, 70, 50, 1, 40, 20},        /* more queries: paired (or tiles), sharing with the next */
        {37, 50, 90, 60, 1, 45, 20},        /* a partial last workgroup */
        {5, 0, 5, 0, 0, 0, -1},             /* no memory kept */
    };
    uint32_t n_gen = sizeof gen / sizeof *gen;
    /* every variant in three cases: the dh = 64 and 48 ones more than once */
    test_attention_streams(gen, n_gen, 4, 64, 0);
    test_attention_streams(gen, 9, 8, 64, 0);          /* few queries only: nine streams in two groups */
    test_attention_streams(gen + 4, 8, 2, 64, 4);
    test_attention_streams(gen + 4, 8, 3, 48, 4);
    test_attention_streams(gen + 6, 6, 1, 48, 0);
    test_attention_streams(gen + 1, 6, 5, 48, 0);
    test_attention_streams(gen + 1, 10, 2, 20, 0);     /* a head of 5 vec4s: the generic kernels */
    test_attention_streams(gen + 9, 2, 16, 64, 0);     /* two streams of the paired kernel only */
    /* ten one-token streams of one setting: eight share a dispatch, the
     * others a second (the tiles' in runs of keys, merged by the last) */
    static const stream_case many[] = {
        {1, 140, 160, 7, 1, 140, -1}, {1, 70, 80, 1, 1, 64, -1},     {1, 97, 100, 98, 0, 97, -1},
        {1, 133, 134, 133, 1, 133, -1}, {1, 65, 69, 68, 0, 65, -1},  {1, 147, 148, 0, 1, 147, -1},
        {1, 112, 116, 115, 1, 112, -1}, {1, 128, 140, 139, 0, 128, -1}, {1, 83, 84, 82, 1, 83, -1},
        {1, 121, 124, 10, 0, 121, -1},
    };
    test_attention_streams(many, 10, 4, 64, 0);
    test_attention_streams(many, 10, 3, 16, 0);
    test_streams_mixed();
    /* same_length with no memory kept hides whole rows: the one-query kernel */
    static const stream_case masked[] = {{6, 0, 6, 0, 1, 0, -1}, {9, 0, 12, 5, 1, 0, 3}, {1, 0, 2, 1, 1, 0, -1}};
    test_attention_streams(masked, 3, 2, 16, 0);
    test_attention_streams(masked, 3, 1, 8, 0);
    test_attention_streams(gen, 3, 2, 16, 2);          /* misaligned position keys: no plan */
    return failures;
}
