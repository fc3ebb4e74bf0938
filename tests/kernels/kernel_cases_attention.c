/* Relative attention (every path: three-pass, fused, paired, split of one
 * query, through texels and not) and the log-softmax against the CPU
 * reference; part of test_kernels (kernel_harness.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_harness.h"
#include "ref_ops.h"
#include "../common/check.h"

/* The attention as the matrix units compute it (attn_cm.comp): q + u,
 * q + v, the keys, values and position rows rounded to f16 first, the
 * rest in double. Position rows by distance from rkd (clamped to max_dist). */
static void ref_attention_f16(const float *q, const float *k, const float *v, const float *rkd, uint32_t max_dist,
                              const float *rwb, const float *rrb, uint32_t qlen, uint32_t mlen, uint32_t H, uint32_t dh,
                              int same_length, uint32_t mem_len, float *out)
{
    uint32_t klen = mlen + qlen, hd = H * dh;
    float *qw = malloc(dh * 4), *qr = malloc(dh * 4), *kr = malloc((size_t)klen * hd * 4), *vr = malloc((size_t)klen * hd * 4);
    float *rr = malloc((size_t)(max_dist + 1) * hd * 4);
    double *sc = malloc(klen * sizeof *sc);
    memcpy(kr, k, (size_t)klen * hd * 4), memcpy(vr, v, (size_t)klen * hd * 4), memcpy(rr, rkd, (size_t)(max_dist + 1) * hd * 4);
    round_f16(kr, (size_t)klen * hd), round_f16(vr, (size_t)klen * hd), round_f16(rr, (size_t)(max_dist + 1) * hd);
    for (uint32_t h = 0; h < H; h++)
        for (uint32_t i = 0; i < qlen; i++) {
            for (uint32_t e = 0; e < dh; e++) {
                qw[e] = q[(size_t)i * hd + h * dh + e] + rwb[h * dh + e];
                qr[e] = q[(size_t)i * hd + h * dh + e] + rrb[h * dh + e];
            }
            round_f16(qw, dh), round_f16(qr, dh);
            double m = -INFINITY, l = 0;
            for (uint32_t j = 0; j < klen; j++) {
                sc[j] = -INFINITY;
                if (ref_attn_masked((int)i, (int)j, (int)qlen, (int)mlen, same_length, (int)mem_len)) continue;
                uint32_t dist = mlen + i - j < max_dist ? mlen + i - j : max_dist;
                double s = 0;
                for (uint32_t e = 0; e < dh; e++)
                    s += (double)qw[e] * kr[(size_t)j * hd + h * dh + e] + (double)qr[e] * rr[(size_t)dist * hd + h * dh + e];
                sc[j] = s / sqrt((double)dh);
                m = sc[j] > m ? sc[j] : m;
            }
            for (uint32_t j = 0; j < klen; j++) l += exp(sc[j] - m);
            for (uint32_t e = 0; e < dh; e++) {
                double o = 0;
                for (uint32_t j = 0; j < klen; j++) o += exp(sc[j] - m) * vr[(size_t)j * hd + h * dh + e];
                out[(size_t)i * hd + h * dh + e] = (float)(o / l);
            }
        }
    free(qw), free(qr), free(kr), free(vr), free(rr), free(sc);
}

/* The GPU takes position keys by distance (rk_dist[p], p = 0..max_dist),
 * at element rk_off of their buffer; the reference takes them in R's order
 * (row j has pos klen-1-j, clamped). Runs the three-pass path with the
 * probabilities kept, the score terms, the default choice (fused where the
 * shape allows) and the three-pass path through scratch. */
void test_attention(uint32_t qlen, uint32_t mlen, uint32_t H, uint32_t dh, int same_length, uint32_t mem_len,
                    int32_t clamp_len, uint32_t rk_off, uint32_t kv_row0)
{
    test_attention_ring(qlen, mlen, H, dh, same_length, mem_len, clamp_len, rk_off, kv_row0, 0);
}

void test_attention_ring(uint32_t qlen, uint32_t mlen, uint32_t H, uint32_t dh, int same_length, uint32_t mem_len,
                         int32_t clamp_len, uint32_t rk_off, uint32_t kv_row0, uint32_t ring)
{
    uint32_t klen = mlen + qlen, hd = H * dh;
    if (!ring) ring = kv_row0 + klen;
    if (ring < klen || kv_row0 >= ring) {
        fprintf(stderr, "bad attention case: %u keys from row %u of a ring of %u\n", klen, kv_row0, ring);
        abort();
    }
    uint32_t max_dist = clamp_len > 0 && (uint32_t)clamp_len < klen - 1 ? (uint32_t)clamp_len : klen - 1;
    float *q = rand_vec((size_t)qlen * hd, 1), *kv = rand_vec((size_t)ring * 2 * hd, 1);
    float *rkd = rand_vec(rk_off + (size_t)(max_dist + 1) * hd, 1), *rwb = rand_vec(hd, 0.5f), *rrb = rand_vec(hd, 0.5f);
    float *k = malloc((size_t)klen * hd * 4), *v = malloc((size_t)klen * hd * 4), *rk = malloc((size_t)klen * hd * 4);
    for (uint32_t j = 0; j < klen; j++) {
        size_t row = (kv_row0 + j) % ring;
        memcpy(k + (size_t)j * hd, kv + row * 2 * hd, hd * 4);
        memcpy(v + (size_t)j * hd, kv + row * 2 * hd + hd, hd * 4);
        uint32_t pos = klen - 1 - j;
        if (pos > max_dist) pos = max_dist;
        memcpy(rk + (size_t)j * hd, rkd + rk_off + (size_t)pos * hd, hd * 4);
    }
    size_t plane = (size_t)H * qlen * klen;
    float *want_p = malloc(plane * 4), *want_o = malloc((size_t)qlen * hd * 4), *want_t = malloc(4 * plane * 4);
    ref_rel_attention(q, k, v, rk, rwb, rrb, qlen, mlen, H, dh, same_length, mem_len, want_p, want_t, want_o);

    txlm_buf qb = host_buf(q, (size_t)qlen * hd), kvb = host_buf(kv, (size_t)ring * 2 * hd);
    txlm_attn_shape s = {qlen, mlen, H, dh, max_dist, (uint32_t)same_length, mem_len, kv_row0, 0, ring, 0, 0, 0};
    /* the same ring with its first row in the step buffer (shaders/step.glsl),
     * as the forward pass gives it: every other case and path below */
    txlm_attn_shape sd = s;
    sd.kv_row0 = 0, sd.kv_dyn = 1;
    txlm_buf stepb = host_buf(NULL, 4);
    ((uint32_t *)stepb.map)[0] = kv_row0;
    int dyn = (qlen + mlen + kv_row0) % 2;
    size_t split = (size_t)txlm_attn_split_bytes(&s) / 4;
    txlm_buf sb = host_buf(NULL, plane > split ? plane : split), ob = host_buf(NULL, (size_t)qlen * hd), tb = host_buf(NULL, 4 * plane);
    txlm_buf rkb = host_buf(rkd, rk_off + (size_t)(max_dist + 1) * hd);
    txlm_gpu_tensor rwt = weight(rwb, H, dh, 0), rrt = weight(rrb, H, dh, 0);
    txlm_view qv = txlm_view_of(&qb), kvv = txlm_view_of(&kvb), rkv = txlm_view_of(&rkb), ov = txlm_view_of(&ob);
    rec.step = txlm_view_of(&stepb);
    begin();
    txlm_view probs = txlm_view_of(&sb);
    txlm_attention_args aa = {.shape = dyn ? &sd : &s, .q = qv, .kv = kvv, .rk = rkv, .rk_off = rk_off, .r_w_bias = &rwt,
                              .r_r_bias = &rrt, .probs = &probs, .scratch = probs, .out = ov};
    txlm_op_attention(&ops, &aa);
    aa.out = txlm_view_of(&tb);
    txlm_op_attention_terms(&ops, &aa);
    run();
    double dp = max_abs_diff(sb.map, want_p, plane);
    double dout = max_abs_diff(ob.map, want_o, (size_t)qlen * hd);
    double dt = max_abs_diff(tb.map, want_t, 4 * plane);
    int exact_zeros = 1;
    const float *p = sb.map;
    for (uint32_t h = 0; h < H; h++)
        for (uint32_t i = 0; i < qlen; i++) {
            double sum = 0;
            int visible = 0; /* a row with every key masked is uniform, as in the reference */
            for (uint32_t j = 0; j < klen; j++)
                visible |= !ref_attn_masked((int)i, (int)j, (int)qlen, (int)mlen, same_length, (int)mem_len);
            for (uint32_t j = 0; j < klen; j++) {
                float pv = p[((size_t)h * qlen + i) * klen + j];
                if (visible && ref_attn_masked((int)i, (int)j, (int)qlen, (int)mlen, same_length, (int)mem_len) && pv != 0.0f)
                    exact_zeros = 0;
                sum += pv;
            }
            CHECK(fabs(sum - 1) < 1e-5, "attention row h=%u i=%u sums to %g", h, i, sum);
        }
    CHECK(exact_zeros, "attention: masked entries are not exactly 0 (qlen=%u mlen=%u)", qlen, mlen);
    CHECK(dp < 1e-5 && dout < 1e-4 && dt < 1e-4 * dh, "attention qlen=%u mlen=%u H=%u dh=%u same_length=%d mem_len=%u clamp=%d "
          "kv_row0=%u%s ring=%u: prob diff %g, out diff %g, terms diff %g", qlen, mlen, H, dh, same_length, mem_len, clamp_len,
          kv_row0, dyn ? " (step buffer)" : "", ring, dp, dout, dt);

    /* without probabilities: the default choice (split for a few queries,
     * else two queries per invocation), then one query per invocation,
     * then forced three-pass */
    int texel_default = ctx->vk.texel, gpu_default = ctx->vk.gpu_kernels;
    ctx->vk.gpu_kernels = 0; /* the tiled kernel GPUs choose: after this loop */
    txlm_buf syncb = host_buf(NULL, TXLM_SYNC_WORDS);
    for (int mode = 0; mode < 8; mode++) {
        /* modes 3-5: the same choices reading through texel buffers; mode 6:
         * texel, default choice, without the subgroup kernels (the
         * lane-per-element split, the shuffling paired one); mode 7: texel,
         * default choice, with the counts that let the one-query kernel's
         * last run merge (recorded twice, the output zeroed between, so
         * the second relies on the first having reset its counts) */
        int texel = mode >= 3, choice = mode >= 6 ? 0 : mode % 3, no_sg = mode == 6, fused_merge = mode == 7;
        if (texel && !have_texel) continue;
        int h64 = dh == 64; /* texel variants built for dh = 64 */
        int sg64 = h64 && !no_sg && txlm_kernel_usable(&ctx->vk, TXLM_K_ATTN_SPLIT_SG64);
        int sg48 = dh == 48 && !no_sg && txlm_kernel_usable(&ctx->vk, TXLM_K_ATTN_SPLIT_SG48);
        int pair_sg = h64 && !no_sg && txlm_kernel_usable(&ctx->vk, TXLM_K_ATTN_PAIR_TEXSG64);
        if (no_sg && !h64 && dh != 48) continue;
        ctx->vk.texel = texel;
        kernel_switch(ctx, NO_ATTN_SG | NO_SHUFFLE, no_sg);
        const txlm_kernel_id watch[3] = {
            texel ? (sg64 ? (fused_merge ? TXLM_K_ATTN_SPLIT_SG64_MERGE : TXLM_K_ATTN_SPLIT_SG64)
                     : sg48 ? (fused_merge ? TXLM_K_ATTN_SPLIT_SG48_MERGE : TXLM_K_ATTN_SPLIT_SG48)
                     : h64 ? TXLM_K_ATTN_SPLIT_TEX64
                     : dh == 48 ? TXLM_K_ATTN_SPLIT_TEX48
                                : TXLM_K_ATTN_SPLIT_TEX)
                  : TXLM_K_ATTN_SPLIT,
            texel ? (pair_sg ? TXLM_K_ATTN_PAIR_TEXSG64
                     : h64   ? TXLM_K_ATTN_PAIR_TEX64
                     : dh == 48 ? TXLM_K_ATTN_PAIR_TEX48
                                : TXLM_K_ATTN_PAIR_TEX)
                  : TXLM_K_ATTN_PAIR,
            TXLM_K_ATTN_FUSED};
        static const char *names[4] = {"split", "paired", "fused", "three-pass"};
        uint32_t before[3];
        for (int k = 0; k < 3; k++) before[k] = ctx->vk.debug->kernel_uses[watch[k]];
        uint32_t merges = ctx->vk.debug->kernel_uses[TXLM_K_ATTN_MERGE];
        memset(ob.map, 0, (size_t)qlen * hd * 4);
        kernel_switch(ctx, NO_PAIRED_ATTENTION, choice == 1);
        kernel_switch(ctx, NO_FUSED_ATTENTION, choice == 2);
        if (fused_merge) ops.sync = txlm_view_of(&syncb);
        const txlm_attn_shape *sh = (dyn + mode) % 2 ? &sd : &s;
        begin();
        txlm_attention_args aa = {.shape = sh, .q = qv, .kv = kvv, .rk = rkv, .rk_off = rk_off, .r_w_bias = &rwt,
                                  .r_r_bias = &rrt, .scratch = probs, .out = ov};
        txlm_op_attention(&ops, &aa);
        if (fused_merge) {
            txlm_rec_fill_zero(&rec, ob.buf, 0, ob.size);
            txlm_rec_barrier(&rec);
            txlm_op_attention(&ops, &aa);
        }
        run();
        kernel_switch(ctx, NO_PAIRED_ATTENTION | NO_FUSED_ATTENTION | NO_ATTN_SG | NO_SHUFFLE, 0);
        ops.sync = (txlm_view){0};
        if (fused_merge && (sg64 || sg48) && qlen <= 4 && !(same_length && mem_len == 0) && dh % 4 == 0 && rk_off % 4 == 0) {
            uint32_t left = 0;
            for (uint32_t w = 0; w < TXLM_SYNC_WORDS; w++) left |= ((uint32_t *)syncb.map)[w];
            CHECK(ctx->vk.debug->kernel_uses[TXLM_K_ATTN_MERGE] == merges && left == 0,
                  "one-query attention with counts: %u merge dispatches, counts left %u", ctx->vk.debug->kernel_uses[TXLM_K_ATTN_MERGE] - merges,
                  left);
        }
        ctx->vk.texel = texel_default;
        int used = 3;
        for (int k = 0; k < 3; k++)
            if (ctx->vk.debug->kernel_uses[watch[k]] != before[k]) used = k;
        int vec_ok = choice < 2 && dh % 4 == 0 && rk_off % 4 == 0;
        int all_masked_rows = same_length && mem_len == 0; /* only the one-query kernel handles them */
        int expect = !vec_ok ? 3 : all_masked_rows ? 2 : qlen <= 4 ? 0 : choice == 0 ? 1 : 2;
        double d = max_abs_diff(ob.map, want_o, (size_t)qlen * hd);
        CHECK(d < 1e-4 && used == expect,
              "attention (%s, expected %s) qlen=%u mlen=%u H=%u dh=%u same_length=%d mem_len=%u clamp=%d rk_off=%u "
              "kv_row0=%u%s ring=%u texel=%d: out diff %g", names[used], names[expect], qlen, mlen, H, dh, same_length, mem_len,
              clamp_len, rk_off, kv_row0, sh == &sd ? " (step buffer)" : "", ring, texel, d);
    }
    /* the GPUs' tiled kernel, forced on any device: its keys in runs merged
     * after (the scratch as given), merged by the last run to finish (the
     * counts given too: recorded twice, the output zeroed between, so the
     * second relies on the first having reset its counts; the same bits as
     * merged after), then in one run (no scratch); then, where the device
     * has matrix units, the same tiles on them for a model that is not f32
     * (against the reference on f16-rounded inputs) */
    ctx->vk.gpu_kernels = 1;
    float *want16 = NULL, *after = malloc((size_t)qlen * hd * 4);
    for (int cm = 0; cm <= have_coopmat; cm++) {
        txlm_kernel_id kern = cm ? TXLM_K_ATTN_CM : TXLM_K_ATTN_TILE, merging = cm ? TXLM_K_ATTN_CM_MERGE : TXLM_K_ATTN_TILE_MERGE;
        txlm_attn_shape sh16 = s, sd16 = sd;
        sh16.f16 = sd16.f16 = (uint32_t)cm;
        int expect_tile = dh % 4 == 0 && dh <= 64 && rk_off % 4 == 0 && !(same_length && mem_len == 0) && (!cm || dh % 16 == 0);
        if (cm && expect_tile) {
            want16 = malloc((size_t)qlen * hd * 4);
            ref_attention_f16(q, k, v, rkd + rk_off, max_dist, rwb, rrb, qlen, mlen, H, dh, same_length, mem_len, want16);
        }
        static const int how[3] = {1, 2, 0}; /* runs merged after, by the last run, one run */
        for (int hi = 0; hi < 3 && txlm_kernel_usable(&ctx->vk, kern); hi++) {
            int runs = how[hi] != 0, last_merges = how[hi] == 2 && klen > 64; /* (at most 64 keys: one run) */
            if (!runs && !expect_tile) break; /* the other paths need the scratch */
            txlm_kernel_id used_k = last_merges ? merging : kern;
            uint32_t tiles = ctx->vk.debug->kernel_uses[used_k], merges = ctx->vk.debug->kernel_uses[TXLM_K_ATTN_MERGE];
            txlm_view scratch = txlm_view_of(&sb);
            if (!runs) scratch.size = 0;
            memset(ob.map, 0, (size_t)qlen * hd * 4);
            const txlm_attn_shape *sh = (dyn + runs) % 2 ? &sd16 : &sh16;
            if (how[hi] == 2) ops.sync = txlm_view_of(&syncb);
            txlm_attention_args aa = {.shape = sh, .q = qv, .kv = kvv, .rk = rkv, .rk_off = rk_off, .r_w_bias = &rwt,
                                      .r_r_bias = &rrt, .scratch = scratch, .out = ov};
            begin();
            txlm_op_attention(&ops, &aa);
            if (how[hi] == 2) {
                txlm_rec_fill_zero(&rec, ob.buf, 0, ob.size);
                txlm_rec_barrier(&rec);
                txlm_op_attention(&ops, &aa);
            }
            run();
            ops.sync = (txlm_view){0};
            uint32_t left = 0;
            for (uint32_t w = 0; w < TXLM_SYNC_WORDS; w++) left |= ((uint32_t *)syncb.map)[w];
            int used_tile = ctx->vk.debug->kernel_uses[used_k] != tiles;
            int merged = ctx->vk.debug->kernel_uses[TXLM_K_ATTN_MERGE] != merges;
            int on_cm = cm && used_tile;
            double d = max_abs_diff(ob.map, on_cm ? want16 : want_o, (size_t)qlen * hd);
            if (how[hi] == 1) memcpy(after, ob.map, (size_t)qlen * hd * 4);
            int same = how[hi] != 2 || !used_tile || !memcmp(after, ob.map, (size_t)qlen * hd * 4);
            CHECK(d < (on_cm ? 1e-3 : 1e-4) && used_tile == expect_tile && same && left == 0 &&
                      (!used_tile || !runs || merged == (klen > 64 && how[hi] == 1)),
                  "tiled attention%s (runs %d: used %d, expected %d, merged after %d, %s) qlen=%u mlen=%u H=%u dh=%u "
                  "same_length=%d mem_len=%u clamp=%d rk_off=%u kv_row0=%u%s ring=%u: out diff %g, counts left %u",
                  cm ? " on the matrix units" : "", how[hi], used_tile, expect_tile, merged,
                  same ? "the same bits as merged after" : "NOT the bits merged after", qlen, mlen, H, dh, same_length,
                  mem_len, clamp_len, rk_off, kv_row0, sh == &sd16 ? " (step buffer)" : "", ring, d, left);
        }
    }
    free(after);
    free(want16);
    ctx->vk.gpu_kernels = gpu_default;
    rec.step = txlm_view_of(&ctx->dummy);
    txlm_buf_destroy(&ctx->vk, &stepb);
    txlm_buf_destroy(&ctx->vk, &qb), txlm_buf_destroy(&ctx->vk, &kvb), txlm_buf_destroy(&ctx->vk, &sb);
    txlm_buf_destroy(&ctx->vk, &ob), txlm_buf_destroy(&ctx->vk, &tb), txlm_buf_destroy(&ctx->vk, &rkb);
    txlm_buf_destroy(&ctx->vk, &syncb);
    txlm_tensor_free(&ctx->vk, &rwt), txlm_tensor_free(&ctx->vk, &rrt);
    free(q), free(kv), free(rkd), free(rwb), free(rrb), free(k), free(v), free(rk), free(want_p), free(want_o), free(want_t);
    case_done();
}

/* Rows of n logits at stride ld >= n (the adaptive softmax pads rows to
 * a multiple of 4 so the texel kernel can read them). With pick, rows
 * score one token each (token pick_base + column): only that column is
 * written. With map (pick 2), the logits are half as many rows, each the
 * output row map[i] (a tail cluster computed only for some rows), in
 * reverse order. texel: the device's texel-reading variant where it has one. */
static void test_logsoftmax_at(uint32_t rows, uint32_t n, uint32_t ld, uint32_t n_write, int with_add, int texel, int pick)
{
    if (texel && !have_texel) return;
    const uint32_t pick_base = 1000;
    uint32_t src_rows = pick == 2 ? (rows + 1) / 2 : rows;
    float *x = rand_vec((size_t)src_rows * ld, 8), *add = rand_vec((size_t)rows * 3, 1);
    int32_t *tok = malloc(rows * sizeof *tok), *map = malloc(src_rows * sizeof *map), *src_of = malloc(rows * sizeof *src_of);
    for (uint32_t r = 0; r < rows; r++) /* some below pick_base, some past n_write: nothing written */
        tok[r] = (int32_t)(pick_base + (r * 7919u) % (n + 2)) - (r % 5 == 4 ? (int32_t)pick_base : 0);
    for (uint32_t r = 0; r < rows; r++) src_of[r] = pick == 2 ? -1 : (int32_t)r;
    for (uint32_t i = 0; i < src_rows && pick == 2; i++) {
        map[i] = (int32_t)(rows - 1 - 2 * i);
        src_of[map[i]] = (int32_t)i;
    }
    txlm_buf xb = host_buf(x, (size_t)src_rows * ld), db = host_buf(NULL, (size_t)rows * ld);
    txlm_buf ab = host_buf(add, (size_t)rows * 3), tb = host_buf((float *)tok, rows), mb = host_buf((float *)map, src_rows);
    txlm_arg aa = txlm_arg_of(&ab, 0, 3), ta = txlm_arg_of(&tb, 0, 1), ma = txlm_arg_of(&mb, 0, 1);
    int texel_default = ctx->vk.texel;
    ctx->vk.texel = texel;
    uint32_t before = ctx->vk.debug->kernel_uses[TXLM_K_LOGSOFTMAX_TEX];
    begin();
    txlm_op_logsoftmax(&ops, &(txlm_logsoftmax_args){.src = txlm_arg_of(&xb, 0, ld), .dst = txlm_arg_of(&db, 0, ld),
                                                     .add = with_add ? &aa : NULL, .add_col = 2, .rows = src_rows, .n = n,
                                                     .n_write = n_write, .pick = pick ? &ta : NULL, .pick_base = pick_base,
                                                     .row_map = pick == 2 ? &ma : NULL});
    run();
    ctx->vk.texel = texel_default;
    int used_texel = ctx->vk.debug->kernel_uses[TXLM_K_LOGSOFTMAX_TEX] != before;
    double worst = 0;
    const float *got = db.map;
    for (uint32_t r = 0; r < rows; r++) {
        const float *xr = src_of[r] >= 0 ? x + (size_t)src_of[r] * ld : NULL;
        double m = -1e300, s = 0;
        for (uint32_t j = 0; xr && j < n; j++) m = fmax(m, xr[j]);
        for (uint32_t j = 0; xr && j < n; j++) s += exp(xr[j] - m);
        for (uint32_t j = 0; j < ld; j++) {
            int written = xr && j < n_write && (!pick || (uint32_t)(tok[r] - (int32_t)pick_base) == j);
            double want = written ? xr[j] - m - log(s) + (with_add ? add[r * 3 + 2] : 0) : 0;
            double d = fabs(got[(size_t)r * ld + j] - want);
            if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
        }
    }
    CHECK(worst < 1e-4 && used_texel == (texel && ld % 4 == 0),
          "logsoftmax rows=%u n=%u ld=%u n_write=%u add=%d texel=%d (used %d) pick=%d: max diff %g", rows, n, ld, n_write,
          with_add, texel, used_texel, pick, worst);
    txlm_buf_destroy(&ctx->vk, &xb), txlm_buf_destroy(&ctx->vk, &db), txlm_buf_destroy(&ctx->vk, &ab);
    txlm_buf_destroy(&ctx->vk, &tb), txlm_buf_destroy(&ctx->vk, &mb);
    free(x), free(add), free(tok), free(map), free(src_of);
    case_done();
}

void test_logsoftmax(uint32_t rows, uint32_t n, uint32_t n_write, int with_add)
{
    uint32_t ld4 = (n + 3) & ~3u;
    for (int texel = 0; texel < 2; texel++)
        for (int pick = 0; pick < 3; pick++) {
            test_logsoftmax_at(rows, n, n, n_write, with_add, texel, pick);
            if (ld4 != n || texel) test_logsoftmax_at(rows, n, ld4 + 4 * (uint32_t)(pick > 0), n_write, with_add, texel, pick);
        }
}

int attention_case_failures(void) { return failures; }
