/* The products that do a second thing in the same dispatch, against the
 * reference and against the same work done in separate dispatches (which
 * must give the same bits: the fused kernels sum in the same order):
 *   - a product and the LayerNorm of its rows (txlm_op_linear_ln): the
 *     last workgroup normalises, on texel devices (gemv_tex_ln_*, one row)
 *     and with the GPU kernels (gemv_gpu_ln_*, gemv_gpu8_ln_* for up to
 *     15 rows), in place (post-norm) or into rows beside Y (pre-norm: the
 *     next block's input);
 *   - a product whose first columns go to a second output (queries beside
 *     keys and values, TXLM_LINF_SPLIT), in every kernel mode, with Y
 *     placed by the step buffer and W split into chunks.
 * Part of test_kernels (kernel_harness.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_harness.h"
#include "ref_ops.h"
#include "../common/check.h"

static uint32_t ln_uses(void)
{
    return ctx->vk.debug->kernel_uses[TXLM_K_LAYERNORM_TEX] + ctx->vk.debug->kernel_uses[TXLM_K_LAYERNORM];
}

/* Y = X W^T + b (+R) for M rows of X, then LN of each row over the first
 * d of N columns (zeros after), written ln_at elements into Y's buffer
 * (ln_at == 4: in place, Y being at 4), rows N apart; recorded twice in
 * one command buffer, so the second relies on the first having put its
 * count of finished workgroups back to 0. Fused (one dispatch) where the
 * mode's product kernel has an LN twin, then forced apart; the two must
 * agree to the bit. */
static void linear_ln_case(uint32_t M, uint32_t N, uint32_t K, uint32_t d, uint32_t dtype, int with_bias, int residual,
                           uint32_t ln_at, int gpu)
{
    size_t MN = (size_t)M * N;
    float *x = rand_vec((size_t)M * K, 1), *w = rand_vec((size_t)N * K, 0.5f), *bias = rand_vec(N, 0.5f), *r = rand_vec(MN, 2);
    float *g = rand_vec(N, 1), *b = rand_vec(N, 1), *want = calloc(MN, 4), *pre = malloc(MN * 4);
    for (uint32_t c = d; c < N; c++) g[c] = b[c] = 0.0f; /* zero-padded as the model pads them */
    txlm_gpu_tensor wt = weight_dt(w, N, K, dtype, 0), bt = weight(bias, 1, N, 0);
    txlm_gpu_tensor gt = weight(g, 1, N, 0), lbt = weight(b, 1, N, 0);
    ref_linear(x, w, with_bias ? bias : NULL, M, N, K, 0, pre);
    for (uint32_t m = 0; m < M; m++)
        for (uint32_t n = 0; n < N; n++) {
            if (residual) pre[m * N + n] += r[m * N + n];
            if (n >= d) pre[m * N + n] = 0.0f; /* a padded model's padding columns are zero */
        }
    float *pd = malloc((size_t)M * d * 4), *wd = malloc((size_t)M * d * 4);
    for (uint32_t m = 0; m < M; m++) memcpy(pd + (size_t)m * d, pre + (size_t)m * N, d * 4);
    ref_layernorm(pd, NULL, g, b, M, d, 1e-5f, wd);
    for (uint32_t m = 0; m < M; m++) memcpy(want + (size_t)m * N, wd + (size_t)m * d, d * 4);
    size_t len = ln_at + MN + (ln_at == 4 ? 0 : 4 + MN);
    txlm_buf xb = host_buf(x, (size_t)M * K), rb = host_buf(r, MN), yb = host_buf(NULL, len), done = host_buf(NULL, TXLM_SYNC_WORDS);
    txlm_arg xa = txlm_arg_of(&xb, 0, K), ra = txlm_arg_of(&rb, 0, N), ya = txlm_arg_of(&yb, 4, N);
    txlm_arg lna = txlm_arg_of(&yb, ln_at, N);
    float *got[2] = {malloc(len * 4), malloc(len * 4)};
    uint32_t lns[2] = {0, 0};
    for (int apart = 0; apart < 2; apart++) {
        memset(yb.map, 0x7f, len * 4);
        if (gpu) set_mode(MODE_GPU);
        else ctx->vk.texel = have_texel, ctx->vk.gpu_kernels = 0;
        ops.sync = txlm_view_of(&done);
        kernel_switch(ctx, NO_FUSED_LN, apart);
        uint32_t before = ln_uses();
        begin();
        txlm_linear_ln_args a = {.x = xa, .w = &wt, .bias = with_bias ? &bt : NULL, .n = N, .residual = residual ? &ra : NULL,
                                 .y = ya, .m = M, .ln_g = &gt, .ln_b = &lbt, .d = d, .eps = 1e-5f,
                                 .ln_out = ln_at == 4 ? NULL : &lna};
        txlm_op_linear_ln(&ops, &a);
        txlm_op_linear_ln(&ops, &a);
        run();
        lns[apart] = ln_uses() - before;
        reset_mode();
        ops.sync = (txlm_view){0};
        kernel_switch(ctx, NO_FUSED_LN, 0);
        memcpy(got[apart], yb.map, len * 4);
        double dl = max_abs_diff(got[apart] + ln_at, want, MN), dy = 0;
        for (uint32_t m = 0; ln_at != 4 && m < M; m++) {
            double e = max_abs_diff(got[apart] + 4 + (size_t)m * N, pd + (size_t)m * d, d);
            dy = e > dy ? e : dy;
        }
        CHECK(dl < 1e-3 && dy < 1e-3 * sqrt((double)K),
              "linear_ln %s M=%u N=%u K=%u d=%u bias=%d residual=%d LN at %u gpu=%d apart=%d: max diff %g, Y itself %g",
              dt_name(dtype), M, N, K, d, with_bias, residual, ln_at, gpu, apart, dl, dy);
        CHECK(((uint32_t *)done.map)[0] == 0, "linear_ln left its count at %u", ((uint32_t *)done.map)[0]);
        case_done();
    }
    /* fused where the device has the twin (texel: of one row only): no LayerNorm dispatch, the same bits */
    txlm_kernel_id twin = !gpu ? txlm_kernel_of(TXLM_KF_GEMV_TEX_LN, dtype)
                          : M == 1 ? txlm_kernel_of(TXLM_KF_GEMV_GPU_LN, dtype)
                                   : txlm_kernel_of(TXLM_KF_GEMV_GPU8_LN, dtype);
    int fusable = (gpu || (have_texel && M == 1)) && txlm_kernel_usable(&ctx->vk, twin);
    CHECK(lns[0] == (fusable ? 0u : 2u) && lns[1] == 2 && !memcmp(got[0], got[1], len * 4),
          "linear_ln %s M=%u N=%u K=%u d=%u LN at %u gpu=%d: %u and %u LayerNorm dispatches (fusable %d), fused and apart %s",
          dt_name(dtype), M, N, K, d, ln_at, gpu, lns[0], lns[1], fusable, memcmp(got[0], got[1], len * 4) ? "DIFFER" : "agree");
    txlm_buf_destroy(&ctx->vk, &xb), txlm_buf_destroy(&ctx->vk, &rb), txlm_buf_destroy(&ctx->vk, &yb);
    txlm_buf_destroy(&ctx->vk, &done);
    txlm_tensor_free(&ctx->vk, &wt), txlm_tensor_free(&ctx->vk, &bt), txlm_tensor_free(&ctx->vk, &gt), txlm_tensor_free(&ctx->vk, &lbt);
    free(x), free(w), free(bias), free(r), free(g), free(b), free(want), free(pre), free(pd), free(wd);
    free(got[0]), free(got[1]);
}

void test_linear_ln(uint32_t M, uint32_t N, uint32_t K, uint32_t d, uint32_t dtype, int with_bias, int residual)
{
    for (int gpu = 0; gpu <= 1; gpu++) {
        if (gpu && !txlm_kernel_usable(&ctx->vk, TXLM_K_LINEAR_SMEM)) continue; /* as set_mode's MODE_GPU */
        linear_ln_case(M, N, K, d, dtype, with_bias, residual, 4, gpu);
        /* pre-norm: the normalised rows after Y's, an odd distance after them on GPUs (texel kernels take whole vec4s) */
        linear_ln_case(M, N, K, d, dtype, with_bias, residual, 4 + M * N + (gpu ? 3 : 4), gpu);
    }
}

/* Y[:, 0:split] to a second output, the rest to Y (TXLM_LINF_SPLIT), in
 * one mode: the same bits as the two products made apart, the second
 * output at an offset, Y placed by the step buffer; one dispatch per
 * chunk of W where the mode's kernel takes the split. */
static void split_case(uint32_t M, uint32_t N, uint32_t K, uint32_t split, uint32_t dtype, VkDeviceSize max_range, int mode)
{
    const uint32_t q_off = 3, skip = 2;
    float *x = rand_vec((size_t)M * K, 1), *w = rand_vec((size_t)N * K, 0.5f);
    txlm_gpu_tensor wt = weight_dt(w, N, K, dtype, max_range);
    uint32_t rest = N - split;
    txlm_buf xb = host_buf(x, (size_t)M * K), qb = host_buf(NULL, q_off + (size_t)M * split);
    txlm_buf yb = host_buf(NULL, (size_t)(skip + M) * rest), q2 = host_buf(NULL, (size_t)M * split);
    txlm_buf y2 = host_buf(NULL, (size_t)M * rest), stepb = host_buf(NULL, 4);
    ((uint32_t *)stepb.map)[1] = skip * rest; /* TXLM_STEP_KV_OUT */
    txlm_arg xa = txlm_arg_of(&xb, 0, K), qa = txlm_arg_of(&qb, q_off, split);
    uint32_t before = 0, after = 0;
    rec.step = txlm_view_of(&stepb);
    for (uint32_t k = 0; k < TXLM_K_COUNT; k++) before += ctx->vk.debug->kernel_uses[k];
    begin();
    txlm_op_linear(&ops, &(txlm_linear_args){.x = xa, .w = &wt, .n = N, .y = txlm_arg_of(&yb, 0, rest), .m = M,
                                             .flags = TXLM_LIN_DYN_Y, .split_y = &qa, .split = split});
    run();
    for (uint32_t k = 0; k < TXLM_K_COUNT; k++) after += ctx->vk.debug->kernel_uses[k];
    begin();
    txlm_op_linear(&ops, &(txlm_linear_args){.x = xa, .w = &wt, .n = split, .y = txlm_arg_of(&q2, 0, split), .m = M});
    txlm_op_linear(&ops, &(txlm_linear_args){.x = xa, .w = &wt, .row0 = split, .n = rest, .y = txlm_arg_of(&y2, 0, rest),
                                             .m = M});
    run();
    rec.step = txlm_view_of(&ctx->dummy);
    float *want = malloc((size_t)M * N * 4);
    ref_linear(x, w, NULL, M, N, K, 0, want);
    double dq = 0, dy = 0;
    for (uint32_t m = 0; m < M; m++)
        for (uint32_t n = 0; n < N; n++) {
            float got = n < split ? ((float *)qb.map)[q_off + m * split + n] : ((float *)yb.map)[(skip + m) * rest + n - split];
            double e = fabs((double)got - want[(size_t)m * N + n]);
            if (n < split) dq = e > dq || isnan(e) ? e : dq;
            else dy = e > dy || isnan(e) ? e : dy;
        }
    int same = !memcmp((float *)qb.map + q_off, q2.map, (size_t)M * split * 4) &&
               !memcmp((float *)yb.map + (size_t)skip * rest, y2.map, (size_t)M * rest * 4);
    int untouched = 1;
    for (uint32_t i = 0; i < q_off; i++) untouched &= ((float *)qb.map)[i] == 0.0f;
    for (size_t i = 0; i < (size_t)skip * rest; i++) untouched &= ((float *)yb.map)[i] == 0.0f;
    /* the kernels of one row (texel and GPU modes) and the GPU tiles take the split */
    int one_dispatch = !max_range && ((mode & MODE_TEXEL) ? M == 1 && K % 16 == 0 && !(mode & MODE_NO_GEMV)
                                                          : (mode & (MODE_GPU | MODE_COOPMAT)) != 0);
    double tol = 2e-3 * sqrt((double)K); /* the matrix units round X and W to f16 */
    CHECK(dq < tol && dy < tol && same && untouched && (!one_dispatch || after - before == 1),
          "split product %s M=%u N=%u K=%u split=%u chunks=%u mode=%d: diff %g and %g, %s the products apart, %s, %u dispatches",
          dt_name(dtype), M, N, K, split, txlm_tensor_n_chunks(&wt), mode, dq, dy, same ? "the same as" : "DIFFERENT from",
          untouched ? "nothing else written" : "WRITTEN OUTSIDE", after - before);
    txlm_buf_destroy(&ctx->vk, &xb), txlm_buf_destroy(&ctx->vk, &qb), txlm_buf_destroy(&ctx->vk, &yb);
    txlm_buf_destroy(&ctx->vk, &q2), txlm_buf_destroy(&ctx->vk, &y2), txlm_buf_destroy(&ctx->vk, &stepb);
    txlm_tensor_free(&ctx->vk, &wt);
    free(x), free(w), free(want);
    case_done();
}

void test_linear_split(uint32_t M, uint32_t N, uint32_t K, uint32_t split, uint32_t dtype, VkDeviceSize max_range)
{
    for (int mode = 0; mode < N_MODES; mode++) {
        if ((mode & (MODE_NO_SUBGROUP | MODE_NO_GEMV_Q8 | MODE_NARROW)) || ((mode & MODE_NO_GEMV) && M != 1)) continue;
        if ((mode & MODE_COOPMAT) && (M < 16 || dtype == TXLM_DT_F32)) continue;
        if (set_mode(mode)) split_case(M, N, K, split, dtype, max_range, mode);
    }
    reset_mode();
}

int fused_case_failures(void) { return failures; }
