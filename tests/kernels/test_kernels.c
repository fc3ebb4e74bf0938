/* Every GPU kernel against the CPU reference ops, on random inputs at
 * awkward sizes, including weights split over several bindings.
 *
 * Which kernel an op function picks (engine/ops.c):
 *   txlm_op_linear    K, X offset and X stride multiples of 8: the 8x8 kernel,
 *                     wide loads (linear_wide_*) with shaderInt64, else
 *                     linear_tiled_*; a single row then goes to gemv{,_wide}{,_sg}_*
 *                     (wide: shaderInt64; sg: subgroupAdd over 8 lanes) unless
 *                     no_gemv; otherwise the plain linear_* kernel. One variant per
 *                     weight dtype (f32, f16, q8_0, q4_0).
 *                    Where the device prefers texel buffers (vk->texel: CPU devices) and K
 *                    is a multiple of 16, X offset and stride of 4: gemv_tex_* for one row
 *                    (q8_0 rows of 2048 and more: gemv_tex_q8_0_long),
 *                    linear_tex_* (32x16 blocks) from 24 rows, else linear_tex8_*.
 *                    With vk->gpu_kernels (GPUs; MODE_GPU forces it): gemv_gpu_* for one
 *                    row, gemv_gpu8_* for 2 to 15, linear_smem_* (64x64 workgroup-memory
 *                    tiles) from 16 rows;
 *                    where the device has cooperative matrices (MODE_COOPMAT; MODE_GPU
 *                    without them) linear_cm_* from 16 rows for f16, q8_0, q4_0,
 *                    against the reference on f16-rounded X and W.
 *   txlm_op_gather    gather_* per dtype.
 *   txlm_op_attention with probabilities wanted, or qlen <= 4, or dh % 4, or a
 *                     misaligned rk offset: attn_scores, softmax, attn_pv; else
 *                     attn_fused. txlm_op_attention_terms: attn_terms.
 * The device features are switched off one by one below (set_mode), so one
 * run covers every variant the device can run, and the end of main checks
 * through the recorder's per-kernel counts that each ran in three cases.
 * The attention and log-softmax cases are in kernel_cases_attention.c, the
 * shared setup and helpers in kernel_harness.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_harness.h"
#include "quantize.h"
#include "ref_ops.h"
#include "../common/check.h"

/* The matrix-unit kernels against the reference on f16-rounded inputs:
 * only the order of their f32 sums differs (tighter than the FP32
 * kernels' bound, so a kernel that did not round would fail it). */
#define CM_TOLERANCE 2e-6

static uint32_t coopmat_uses(void)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < TXLM_K_COUNT; k++)
        if (txlm_kernel_descs[k].needs & TXLM_NEED_COOPMAT) n += ctx->vk.debug->kernel_uses[k];
    return n;
}

/* X is read at element offset x_off with rows x_pad elements longer than
 * K: a misaligned offset or stride sends the op to the plain kernel. */
static void linear_case(uint32_t M, uint32_t N, uint32_t K, uint32_t flags, int with_bias, VkDeviceSize max_range,
                        uint32_t dtype, uint32_t x_off, uint32_t x_pad, int mode)
{
    uint32_t ldx = K + x_pad;
    float *x = rand_vec((size_t)M * K, 1), *w = rand_vec((size_t)N * K, 0.5f), *b = rand_vec(N, 1);
    float *r = rand_vec((size_t)M * N, 1), *want = malloc((size_t)M * N * 4);
    float *xs = rand_vec(x_off + (size_t)M * ldx, 1);
    for (uint32_t m = 0; m < M; m++) memcpy(xs + x_off + (size_t)m * ldx, x + (size_t)m * K, (size_t)K * 4);
    float alpha = 0.75f;
    txlm_gpu_tensor wt = weight_dt(w, N, K, dtype, max_range), bt = weight(b, 1, N, 0);
    txlm_buf xb = host_buf(xs, x_off + (size_t)M * ldx), rb = host_buf(r, (size_t)M * N), yb = host_buf(NULL, (size_t)M * N);
    txlm_arg xa = txlm_arg_of(&xb, x_off, ldx), ra = txlm_arg_of(&rb, 0, N), ya = txlm_arg_of(&yb, 0, N);
    uint32_t cm_before = coopmat_uses();
    begin();
    txlm_linear_args la = {.x = xa, .w = &wt, .n = N, .bias = with_bias ? &bt : NULL,
                           .residual = flags & TXLM_LIN_RESIDUAL ? &ra : NULL, .y = ya, .m = M, .flags = flags, .scale = alpha};
    txlm_op_linear(&ops, &la);
    run();
    /* the matrix units multiply f16: X and W as the kernel rounded them */
    int cm = coopmat_uses() != cm_before;
    if (cm) round_f16(x, (size_t)M * K), round_f16(w, (size_t)N * K);
    ref_linear(x, w, with_bias ? b : NULL, M, N, K, 0, want);
    for (size_t i = 0; i < (size_t)M * N; i++) {
        want[i] *= alpha;
        if (flags & TXLM_LIN_RELU) want[i] = want[i] > 0 ? want[i] : 0;
        if (flags & TXLM_LIN_RESIDUAL) want[i] += r[i];
    }
    double diff = max_abs_diff(yb.map, want, (size_t)M * N);
    CHECK(diff < (cm ? CM_TOLERANCE : 1e-4) * sqrt((double)K),
          "linear %s M=%u N=%u K=%u flags=%u bias=%d chunks=%u x_off=%u x_pad=%u mode=%d: max diff %g", dt_name(dtype), M, N,
          K, flags, with_bias, txlm_tensor_n_chunks(&wt), x_off, x_pad, mode, diff);
    CHECK(!max_range || txlm_tensor_n_chunks(&wt) > 1, "weight was not split (N=%u)", N);

    /* Y placed by the step buffer (TXLM_LIN_DYN_Y, shaders/step.glsl, as
     * the keys and values of a segment go into the ring): the same bits,
     * 3 rows further on, and nothing written before them */
    {
        const uint32_t skip = 3;
        txlm_buf db = host_buf(NULL, (size_t)(skip + M) * N), stepb = host_buf(NULL, 4);
        ((uint32_t *)stepb.map)[1] = skip * N;
        rec.step = txlm_view_of(&stepb);
        begin();
        txlm_linear_args ld = la;
        ld.y = txlm_arg_of(&db, 0, N), ld.flags = flags | TXLM_LIN_DYN_Y;
        txlm_op_linear(&ops, &ld);
        run();
        rec.step = txlm_view_of(&ctx->dummy);
        const float *dy = db.map;
        int untouched = 1;
        for (size_t i = 0; i < (size_t)skip * N; i++) untouched &= dy[i] == 0.0f;
        CHECK(untouched && !memcmp(dy + (size_t)skip * N, yb.map, (size_t)M * N * 4),
              "linear %s M=%u N=%u K=%u flags=%u mode=%d: the output placed by the step buffer differs (%s)", dt_name(dtype), M,
              N, K, flags, mode, untouched ? "its values" : "rows before it written");
        txlm_buf_destroy(&ctx->vk, &db), txlm_buf_destroy(&ctx->vk, &stepb);
    }

    /* a row range of the weight (the adaptive softmax's shortlist), into a column offset of Y */
    if (N >= 3) {
        uint32_t r0 = 1, nr = N - 2;
        float *w2 = malloc((size_t)nr * K * 4), *want2 = malloc((size_t)M * nr * 4);
        memcpy(w2, w + (size_t)r0 * K, (size_t)nr * K * 4);
        ref_linear(x, w2, with_bias ? b + r0 : NULL, M, nr, K, 0, want2);
        memset(yb.map, 0, (size_t)M * N * 4);
        begin();
        txlm_arg y2 = txlm_arg_of(&yb, 1, N);
        txlm_op_linear(&ops, &(txlm_linear_args){.x = xa, .w = &wt, .row0 = r0, .n = nr, .bias = with_bias ? &bt : NULL,
                                                 .bias_off = r0, .y = y2, .m = M});
        run();
        double d2 = 0;
        for (uint32_t m = 0; m < M; m++)
            for (uint32_t n = 0; n < nr; n++) {
                double d = fabs(((float *)yb.map)[m * N + 1 + n] - want2[m * nr + n]);
                if (!(d <= d2)) d2 = isnan(d) ? INFINITY : d;
            }
        CHECK(d2 < (cm ? CM_TOLERANCE : 1e-4) * sqrt((double)K), "linear %s row range M=%u N=%u K=%u mode=%d: max diff %g", dt_name(dtype), M, N,
              K, mode, d2);
        free(w2);
        free(want2);
    }
    /* the residual is the output itself (the embedding projection adds
     * each cluster's rows into x in place) */
    if (flags & TXLM_LIN_RESIDUAL) {
        memcpy(yb.map, r, (size_t)M * N * 4);
        begin();
        la.residual = &ya;
        txlm_op_linear(&ops, &la);
        run();
        double d3 = max_abs_diff(yb.map, want, (size_t)M * N);
        CHECK(d3 < (cm ? CM_TOLERANCE : 1e-4) * sqrt((double)K), "linear %s in place M=%u N=%u K=%u mode=%d: max diff %g", dt_name(dtype), M, N, K,
              mode, d3);
    }
    txlm_buf_destroy(&ctx->vk, &xb), txlm_buf_destroy(&ctx->vk, &rb), txlm_buf_destroy(&ctx->vk, &yb);
    txlm_tensor_free(&ctx->vk, &wt), txlm_tensor_free(&ctx->vk, &bt);
    free(x), free(xs), free(w), free(b), free(r), free(want);
    case_done();
}

static void test_linear_at(uint32_t M, uint32_t N, uint32_t K, uint32_t flags, int with_bias, VkDeviceSize max_range,
                           uint32_t dtype, uint32_t x_off, uint32_t x_pad)
{
    for (int mode = 0; mode < N_MODES; mode++) {
        /* subgroup sums and the gemv switch only matter for single rows,
         * subgroup shuffles for the texel matrix kernels */
        int redundant_sg = (mode & MODE_NO_SUBGROUP) && have_subgroup && !((mode & MODE_TEXEL) && (M != 1 || (mode & MODE_NO_GEMV)));
        if (M != 1 && ((mode & MODE_NO_GEMV) || redundant_sg)) continue;
        if ((mode & MODE_NO_GEMV) && redundant_sg) continue;
        if ((mode & MODE_NO_GEMV_Q8) && (M != 1 || dtype != TXLM_DT_Q8_0 || (mode & (MODE_NO_GEMV | MODE_NARROW))))
            continue;
        if ((mode & MODE_COOPMAT) && M < 16) continue;     /* the matrix units take 16 rows and more */
        if (set_mode(mode)) linear_case(M, N, K, flags, with_bias, max_range, dtype, x_off, x_pad, mode);
    }
    reset_mode();
}

static void test_linear(uint32_t M, uint32_t N, uint32_t K, uint32_t flags, int with_bias, VkDeviceSize max_range,
                        uint32_t dtype)
{
    test_linear_at(M, N, K, flags, with_bias, max_range, dtype, 0, 0);
}

/* The rows of ids in the table gathered (scaled by 2); the others kept,
 * or (zero_rest, the embedding's projected clusters) set to 0, the table
 * whole or in chunks (the first chunk's dispatch zeroes, the later ones
 * write theirs after it). */
static void test_gather(uint32_t n, uint32_t rows, uint32_t dim, int32_t id_lo, VkDeviceSize max_range, uint32_t dtype)
{
    float *e = rand_vec((size_t)rows * dim, 1);
    txlm_gpu_tensor et = weight_dt(e, rows, dim, dtype, max_range);
    int32_t *ids = malloc(n * sizeof *ids);
    float *y0 = rand_vec((size_t)n * dim, 1), *want = malloc((size_t)n * dim * 4);
    for (uint32_t i = 0; i < n; i++) {
        /* ids inside and outside this table */
        ids[i] = (int32_t)((rng >> 20) % (rows + 2 * (uint32_t)id_lo + 3));
        frand();
    }
    txlm_buf ib = host_buf(NULL, n), yb = host_buf(y0, (size_t)n * dim);
    memcpy(ib.map, ids, n * 4);
    for (int zero_rest = 0; zero_rest <= 1; zero_rest++) {
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t k = 0; k < dim; k++) {
                int in = ids[i] >= id_lo && ids[i] < id_lo + (int32_t)rows;
                want[(size_t)i * dim + k] = in          ? 2.0f * e[(size_t)(ids[i] - id_lo) * dim + k]
                                            : zero_rest ? 0.0f
                                                        : y0[(size_t)i * dim + k];
            }
        memcpy(yb.map, y0, (size_t)n * dim * 4);
        begin();
        txlm_op_gather(&ops, txlm_view_of(&ib), n, &et, id_lo, txlm_arg_of(&yb, 0, dim), 2.0f, zero_rest);
        run();
        double diff = max_abs_diff(yb.map, want, (size_t)n * dim);
        CHECK(diff < 1e-6, "gather %s n=%u rows=%u dim=%u id_lo=%d chunks=%u zero_rest=%d: max diff %g", dt_name(dtype), n,
              rows, dim, id_lo, txlm_tensor_n_chunks(&et), zero_rest, diff);
    }
    txlm_buf_destroy(&ctx->vk, &ib), txlm_buf_destroy(&ctx->vk, &yb), txlm_tensor_free(&ctx->vk, &et);
    free(e), free(ids), free(y0), free(want);
    case_done();
}

/* ld > d: rows of a padded model, whose padding columns hold zeros on
 * input and must be written as zeros (the output starts as garbage). */
static void test_layernorm(uint32_t rows, uint32_t d, uint32_t ld, int residual, int in_place)
{
    size_t n = (size_t)rows * ld;
    float *x = rand_vec(n, 2), *r = rand_vec(n, 1), *y0 = rand_vec(n, 3);
    /* LayerNorm weights are padded with zeros as the model pads them */
    float *g = rand_vec(ld, 1), *b = rand_vec(ld, 1), *want = calloc(n, 4);
    for (uint32_t c = d; c < ld; c++) g[c] = b[c] = 0.0f;
    float *xd = malloc((size_t)rows * d * 4), *rd = malloc((size_t)rows * d * 4), *wd = malloc((size_t)rows * d * 4);
    for (uint32_t i = 0; i < rows; i++)
        for (uint32_t c = 0; c < ld; c++) {
            if (c >= d) x[i * ld + c] = r[i * ld + c] = 0.0f;
            else x[i * ld + c] += 0.5f; /* a non-zero mean */
        }
    for (uint32_t i = 0; i < rows; i++)
        memcpy(xd + i * d, x + i * ld, d * 4), memcpy(rd + i * d, r + i * ld, d * 4);
    ref_layernorm(xd, residual ? rd : NULL, g, b, rows, d, 1e-5f, wd);
    for (uint32_t i = 0; i < rows; i++) memcpy(want + i * ld, wd + i * d, d * 4);
    txlm_buf xb = host_buf(x, n), rb = host_buf(r, n), yb = host_buf(y0, n);
    txlm_gpu_tensor gt = weight(g, 1, ld, 0), bt = weight(b, 1, ld, 0);
    txlm_arg xa = txlm_arg_of(&xb, 0, ld), ra = txlm_arg_of(&rb, 0, ld);
    txlm_arg ya = in_place ? xa : txlm_arg_of(&yb, 0, ld);
    /* the plain kernel, then (CPU devices) the texel one with subgroup sums */
    for (int texel = 0; texel <= have_texel; texel++) {
        memcpy(xb.map, x, n * 4), memcpy(yb.map, y0, n * 4);
        ctx->vk.texel = texel;
        begin();
        txlm_op_layernorm(&ops, &(txlm_layernorm_args){.x = xa, .residual = residual ? &ra : NULL, .g = &gt, .b = &bt, .y = ya,
                                                       .rows = rows, .d = d, .d_out = ld, .eps = 1e-5f});
        run();
        reset_mode();
        double diff = max_abs_diff(in_place ? xb.map : yb.map, want, n);
        CHECK(diff < 1e-4, "layernorm rows=%u d=%u ld=%u residual=%d in_place=%d texel=%d: max diff %g", rows, d, ld,
              residual, in_place, texel, diff);
        case_done();
    }
    txlm_buf_destroy(&ctx->vk, &xb), txlm_buf_destroy(&ctx->vk, &rb), txlm_buf_destroy(&ctx->vk, &yb);
    txlm_tensor_free(&ctx->vk, &gt), txlm_tensor_free(&ctx->vk, &bt);
    free(x), free(r), free(y0), free(g), free(b), free(want), free(xd), free(rd), free(wd);
}

/* TXLM_LIN_BLOCK: row 8 computed alone comes out bit-identical to row 8
 * of a 9-row product (position keys rely on it when a restored session
 * recomputes them in other batches), on the device's default kernels. */
static void test_block_rows(uint32_t dtype)
{
    const uint32_t M = 9, N = 37, K = 64;
    float *x = rand_vec((size_t)M * K, 1), *w = rand_vec((size_t)N * K, 0.5f);
    txlm_gpu_tensor wt = weight_dt(w, N, K, dtype, 0);
    txlm_buf xb = host_buf(x, (size_t)M * K), all = host_buf(NULL, (size_t)M * N), one = host_buf(NULL, N);
    begin();
    txlm_op_linear(&ops, &(txlm_linear_args){.x = txlm_arg_of(&xb, 0, K), .w = &wt, .n = N, .y = txlm_arg_of(&all, 0, N),
                                             .m = M});
    txlm_op_linear(&ops, &(txlm_linear_args){.x = txlm_arg_of(&xb, (M - 1) * K, K), .w = &wt, .n = N,
                                             .y = txlm_arg_of(&one, 0, N), .m = 1, .flags = TXLM_LIN_BLOCK});
    run();
    CHECK(!memcmp((float *)all.map + (size_t)(M - 1) * N, one.map, N * sizeof(float)),
          "linear %s: a row alone with TXLM_LIN_BLOCK differs from the same row in a batch", dt_name(dtype));
    txlm_buf_destroy(&ctx->vk, &xb), txlm_buf_destroy(&ctx->vk, &all), txlm_buf_destroy(&ctx->vk, &one);
    txlm_tensor_free(&ctx->vk, &wt);
    free(x), free(w);
}

int main(void)
{
    txlm_context_options o = {0};
    txlm_status st = txlm_context_create(&o, &ctx);
    if (st) {
        fprintf(stderr, "FAIL: no device: %s\n", txlm_last_error());
        return 1;
    }
    txlm_err e = {0};
    ctx->vk.debug->count = 1; /* the end of main checks every variant ran */
    die_if(txlm_rec_init(&rec, &ctx->vk, &ctx->kernels, txlm_view_of(&ctx->dummy), &e), &e);
    ops.rec = &rec;
    ops.dummy = txlm_view_of(&ctx->dummy);

    have_int64 = ctx->vk.int64;
    have_subgroup = ctx->vk.subgroup_arith;
    have_texel = ctx->vk.texel_ok;
    have_gpu_kernels = ctx->vk.gpu_kernels;
    have_coopmat = ctx->vk.coopmat.on;
    /* where the device must have them (CI on a lavapipe that does) */
    const char *want_cm = getenv("TXLM_TEST_WANT_COOPMAT");
    CHECK(!want_cm || !*want_cm || have_coopmat, "no cooperative matrices: %s", ctx->vk.coopmat.off_why);
    if (have_coopmat)
        printf("cooperative matrices: %ux%ux%u fragments, %u a subgroup\n", ctx->vk.coopmat.m, ctx->vk.coopmat.n,
               ctx->vk.coopmat.k, ctx->vk.coopmat.fps);

    /* M, N, K, flags, bias, split bytes, dtype (, x offset, x row padding).
     * Each dtype: shapes for the plain kernel (K or X not 8-aligned), for the
     * 8x8 kernels (several rows) and for the single-row kernels, every one
     * run under each kernel choice the device allows. */
    const uint32_t RL = TXLM_LIN_RELU, RS = TXLM_LIN_RESIDUAL;
    test_linear(1, 1, 1, 0, 0, 0, TXLM_DT_F32);
    test_linear(7, 13, 5, RL, 1, 0, TXLM_DT_F32);
    test_linear(33, 67, 41, RS, 1, 0, TXLM_DT_F32);
    test_linear_at(6, 20, 16, RL | RS, 1, 0, TXLM_DT_F32, 3, 1);
    test_linear(5, 130, 128, RL | RS, 1, 0, TXLM_DT_F32);
    test_linear(9, 101, 24, 0, 1, 24 * 4 * 16, TXLM_DT_F32); /* weight split into chunks of 16 rows */
    test_linear_at(17, 40, 64, RS, 0, 0, TXLM_DT_F32, 8, 8);
    test_linear(1, 45, 96, 0, 1, 0, TXLM_DT_F32);
    test_linear(1, 100, 64, RL, 1, 64 * 4 * 24, TXLM_DT_F32);
    test_linear(1, 33, 8, RL | RS, 1, 0, TXLM_DT_F32);
    /* enough rows for the 32-row texel blocks; X at an offset, split weights */
    test_linear(37, 70, 48, RL | RS, 1, 0, TXLM_DT_F32);
    test_linear_at(40, 33, 64, RS, 1, 0, TXLM_DT_F32, 4, 4);
    test_linear(29, 101, 32, 0, 1, 32 * 4 * 16, TXLM_DT_F32);
    test_linear(65, 17, 16, RL, 0, 0, TXLM_DT_F32);
    test_linear_at(1, 39, 80, RL | RS, 1, 0, TXLM_DT_F32, 4, 0); /* one row, X at an offset of 4 */
    /* 2, 3 and 4 rows (a few streams' tokens): the single-row kernels of several rows */
    test_linear(2, 45, 96, RL | RS, 1, 0, TXLM_DT_F32);
    test_linear_at(3, 39, 80, RS, 1, 0, TXLM_DT_F32, 4, 4);
    test_linear(4, 100, 64, RL, 1, 64 * 4 * 24, TXLM_DT_F32);
    test_linear_at(2, 33, 48, RL, 1, 48 * 4 * 16, TXLM_DT_F32, 8, 0);

    test_linear(3, 37, 33, RL, 1, 0, TXLM_DT_F16);
    test_linear_at(4, 20, 16, 0, 1, 0, TXLM_DT_F16, 0, 3);
    test_linear(1, 9, 12, RS, 0, 0, TXLM_DT_F16);
    test_linear(10, 61, 64, RS, 1, 64 * 2 * 8, TXLM_DT_F16);
    test_linear(6, 17, 40, 0, 1, 0, TXLM_DT_F16);
    test_linear(12, 70, 32, RL, 0, 0, TXLM_DT_F16);
    test_linear(1, 45, 96, 0, 1, 0, TXLM_DT_F16);
    test_linear(1, 77, 64, RS, 1, 64 * 2 * 16, TXLM_DT_F16);
    test_linear(1, 5, 8, RL, 1, 0, TXLM_DT_F16);
    test_linear(26, 45, 32, RL, 1, 0, TXLM_DT_F16);
    test_linear(33, 61, 64, RS, 1, 64 * 2 * 8, TXLM_DT_F16);
    test_linear_at(24, 19, 48, 0, 1, 0, TXLM_DT_F16, 4, 12);
    test_linear(1, 50, 48, RL | RS, 1, 0, TXLM_DT_F16);
    test_linear(2, 45, 96, RS, 1, 0, TXLM_DT_F16);
    test_linear_at(3, 39, 80, RL | RS, 1, 0, TXLM_DT_F16, 4, 4);
    test_linear(4, 77, 64, 0, 1, 64 * 2 * 16, TXLM_DT_F16);
    test_linear_at(2, 33, 48, RL, 1, 48 * 2 * 16, TXLM_DT_F16, 8, 0);
    /* the matrix units' 64x64 tiles: odd K and X offset, more than a tile of rows and columns */
    test_linear_at(19, 37, 33, RL | RS, 1, 0, TXLM_DT_F16, 1, 2);
    test_linear(70, 130, 40, RS, 1, 0, TXLM_DT_F16);

    for (uint32_t dt = TXLM_DT_Q8_0; dt <= TXLM_DT_Q4_0; dt++) {
        uint32_t row32 = txlm_dtype_get(dt)->block_bytes; /* bytes of a 32-element row */
        test_linear_at(5, 20, 32, RL, 1, 0, dt, 0, 1);
        test_linear_at(1, 45, 64, 0, 1, 0, dt, 5, 0);
        test_linear_at(9, 33, 96, RS, 1, 3 * row32 * 8, dt, 0, 3);
        test_linear(13, 77, 64, RL, 1, 2 * row32 * 16, dt);
        test_linear(2, 40, 32, 0, 0, 0, dt);
        test_linear(20, 65, 128, RS, 1, 0, dt);
        test_linear(1, 45, 96, 0, 1, 0, dt);
        test_linear(1, 70, 64, RS, 1, 2 * row32 * 32, dt);
        test_linear(1, 31, 32, RL | RS, 1, 0, dt);
        test_linear(25, 41, 64, RS, 1, 0, dt);
        test_linear(40, 77, 96, RL, 1, 2 * row32 * 16, dt);
        test_linear_at(33, 23, 32, 0, 1, 0, dt, 4, 4);
        /* rows of whole superblocks (the single-row kernels take one a
         * step), more rows than a workgroup's, and superblocks that
         * straddle rows (quant.glsl), split and not */
        uint32_t sb = 512 / 32 * row32;
        test_linear(1, 37, 512, RL, 1, 0, dt);
        test_linear(1, 150, 1024, RS, 1, 0, dt);
        test_linear(1, 61, 1536, 0, 1, 3 * sb * 20, dt);
        test_linear_at(1, 29, 800, RL, 1, 0, dt, 4, 0);
        test_linear(1, 29, 800, 0, 1, 25 * sb / 2, dt);
        test_linear(34, 29, 800, RS, 1, 25 * sb / 2, dt);
        /* long rows (gemv_tex_q8_0_long touches the next superblock):
         * 4 superblocks, 5 and a block, and split by rows */
        test_linear(1, 45, 2048, RL, 1, 0, dt);
        test_linear(1, 70, 2592, RS, 1, 0, dt);
        test_linear(1, 20, 3072, 0, 1, 3 * (3072 / 32 * row32) * 2, dt);
        /* 2, 3 and 4 rows: superblocks, blocks, split */
        test_linear(2, 37, 512, RL | RS, 1, 0, dt);
        test_linear_at(3, 29, 800, RS, 1, 0, dt, 4, 4);
        test_linear(4, 61, 1536, 0, 1, 3 * sb * 20, dt);
        test_linear(3, 70, 64, RL, 1, 2 * row32 * 32, dt);
        test_linear(67, 66, 64, RL | RS, 1, 0, dt); /* more than a 64x64 tile */
    }

    /* the plain linear_* kernel of each dtype: X at an odd offset, which
     * no other kernel takes (M, N, K, flags, bias, split bytes, dtype, X
     * offset, X row padding) */
    test_linear_at(1, 16, 64, RL, 1, 0, TXLM_DT_F32, 3, 1);
    test_linear_at(11, 37, 29, RS, 0, 0, TXLM_DT_F32, 3, 0);
    test_linear_at(6, 64, 48, 0, 1, 48 * 4 * 16, TXLM_DT_F32, 1, 1);
    test_linear_at(4, 33, 17, RL | RS, 1, 0, TXLM_DT_F16, 3, 2);
    test_linear_at(7, 8, 40, 0, 1, 40 * 2 * 4, TXLM_DT_F16, 5, 0);
    test_linear_at(1, 21, 5, RS, 0, 0, TXLM_DT_F16, 3, 0);
    test_linear_at(5, 32, 64, RL, 1, 0, TXLM_DT_Q8_0, 3, 1);
    test_linear_at(3, 64, 64, RS, 1, 2 * 34 * 16, TXLM_DT_Q8_0, 3, 0);
    test_linear_at(1, 96, 32, 0, 0, 0, TXLM_DT_Q8_0, 1, 0);
    test_linear_at(5, 32, 64, RL, 1, 0, TXLM_DT_Q4_0, 3, 1);
    test_linear_at(3, 64, 64, RS, 1, 2 * 18 * 16, TXLM_DT_Q4_0, 3, 0);
    test_linear_at(1, 96, 32, 0, 0, 0, TXLM_DT_Q4_0, 1, 0);

    /* n tokens, table rows, dim, first id, split bytes, dtype */
    test_gather(9, 13, 5, 0, 0, TXLM_DT_F32);
    test_gather(17, 40, 33, 7, 0, TXLM_DT_F32);
    test_gather(31, 100, 16, 3, 16 * 4 * 8, TXLM_DT_F32); /* table split into chunks of 8 rows */
    test_gather(12, 30, 7, 2, 0, TXLM_DT_F16);
    test_gather(1, 9, 64, 0, 0, TXLM_DT_F16);
    test_gather(25, 60, 24, 11, 24 * 2 * 8, TXLM_DT_F16);
    test_gather(20, 50, 64, 5, 64 / 32 * 34 * 16, TXLM_DT_Q8_0);
    test_gather(3, 7, 32, 0, 0, TXLM_DT_Q8_0);
    test_gather(15, 33, 96, 9, 0, TXLM_DT_Q8_0);
    test_gather(20, 50, 96, 0, 96 / 32 * 18 * 16, TXLM_DT_Q4_0);
    test_gather(3, 7, 32, 0, 0, TXLM_DT_Q4_0);
    test_gather(15, 33, 64, 9, 0, TXLM_DT_Q4_0);

    test_layernorm(1, 48, 48, 0, 0);
    test_layernorm(5, 65, 65, 1, 0);
    test_layernorm(3, 1024, 1024, 1, 1);
    test_layernorm(7, 33, 33, 0, 1);
    test_layernorm(2, 8, 8, 1, 0);
    test_layernorm(5, 410, 416, 1, 0); /* padded rows (model_pad.c) */
    test_layernorm(3, 37, 48, 0, 1);

    /* N, K, d: several workgroups, a padded row, one workgroup; long q8_0 rows */
    static const uint32_t ln_dtypes[] = {TXLM_DT_F32, TXLM_DT_F16, TXLM_DT_Q8_0, TXLM_DT_Q4_0};
    for (size_t i = 0; i < sizeof ln_dtypes / sizeof *ln_dtypes; i++) {
        test_linear_ln(1, 300, 64, 297, ln_dtypes[i], 1, 1);
        test_linear_ln(1, 36, 32, 36, ln_dtypes[i], 0, 1);
        test_linear_ln(1, 8, 64, 5, ln_dtypes[i], 1, 0);
    }
    test_linear_ln(1, 132, 2048, 130, TXLM_DT_Q8_0, 1, 1);
    test_linear_ln(1, 64, 2560, 61, TXLM_DT_Q8_0, 0, 1);
    test_linear_ln(1, 20, 3072, 20, TXLM_DT_Q8_0, 1, 0);
    test_linear_ln(1, 4, 48, 3, TXLM_DT_F16, 1, 1); /* one workgroup */
    /* a batch's tokens (GPUs: 8 rows of X a workgroup; 9 and 15 rows: two) */
    for (size_t i = 0; i < sizeof ln_dtypes / sizeof *ln_dtypes; i++) {
        test_linear_ln(3, 300, 64, 297, ln_dtypes[i], 1, 1);
        test_linear_ln(9, 64, 96, 61, ln_dtypes[i], 0, 1);
    }
    test_linear_ln(15, 36, 32, 36, TXLM_DT_F32, 1, 0);

    /* queries beside keys and values (M, N, K, columns to the second output, dtype, split bytes) */
    test_linear_split(1, 96, 64, 32, TXLM_DT_F32, 0);
    test_linear_split(1, 150, 48, 50, TXLM_DT_F16, 0);
    test_linear_split(1, 99, 32, 33, TXLM_DT_Q8_0, 0);
    test_linear_split(1, 60, 64, 20, TXLM_DT_Q4_0, 0);
    test_linear_split(3, 45, 32, 15, TXLM_DT_F16, 0);
    test_linear_split(11, 72, 64, 24, TXLM_DT_Q8_0, 0);  /* 9-15 rows: two of gemv_gpu8's row groups */
    test_linear_split(17, 90, 64, 30, TXLM_DT_F16, 0);   /* the GPUs' tiles, a tile's boundary inside */
    test_linear_split(33, 200, 96, 70, TXLM_DT_Q8_0, 0);
    test_linear_split(20, 48, 40, 16, TXLM_DT_F32, 0);  /* K not a multiple of 8: the plain kernel */
    test_linear_split(2, 72, 32, 24, TXLM_DT_F32, 32 * 4 * 10);  /* W in chunks of 10 rows: the split inside one */
    test_linear_split(1, 64, 64, 16, TXLM_DT_F16, 64 * 2 * 16);  /* chunks of 16 rows: the split at a chunk's end */
    test_linear_split(24, 66, 64, 22, TXLM_DT_F16, 64 * 2 * 8);

    /* qlen, mlen, H, dh, same_length, mem_len, clamp, rk offset, first memory row in kv */
    test_attention(1, 0, 1, 8, 0, 4, -1, 0, 0);      /* one head, one token, no memory */
    test_attention(5, 3, 3, 16, 1, 6, -1, 4, 0);     /* memory shorter than the segment */
    test_attention(7, 20, 2, 128, 1, 20, 9, 0, 0);   /* memory longer, clamped */
    test_attention(6, 0, 4, 16, 1, 16, 20, 0, 0);
    test_attention(1, 10, 4, 16, 1, 10, 20, 0, 0);
    test_attention(3, 12, 1, 41, 0, 12, -1, 3, 0);   /* odd head size */
    test_attention(9, 70, 2, 8, 0, 70, 30, 8, 0);    /* more than 64 keys, clamped */
    test_attention(13, 5, 1, 128, 1, 8, 4, 0, 0);    /* one head of 128, clamp below the segment */
    test_attention(11, 16, 3, 32, 0, 16, -1, 0, 0);
    test_attention(5, 16, 2, 8, 1, 16, -1, 0, 0);
    test_attention(7, 9, 2, 16, 1, 12, -1, 2, 0);    /* memory not yet full; misaligned rk: three-pass */
    /* the memory slid by an offset: keys and values start after kv_row0 stale rows */
    test_attention(1, 10, 4, 16, 1, 10, 20, 0, 7);   /* one token (generation): three-pass */
    test_attention(9, 70, 2, 8, 0, 70, 30, 8, 5);    /* fused */
    test_attention(3, 12, 1, 41, 0, 12, -1, 3, 2);   /* odd head size */
    /* a few queries: keys split into runs of 16, some runs fully masked */
    test_attention(4, 30, 2, 64, 1, 24, 12, 4, 3);
    test_attention(2, 40, 3, 32, 0, 40, -1, 0, 0);
    test_attention(1, 100, 2, 16, 1, 64, 50, 0, 9);
    /* two queries per invocation: odd query count, clamped rows, memory at an offset */
    test_attention(23, 40, 2, 64, 1, 40, 30, 0, 6);
    test_attention(18, 0, 3, 32, 0, 18, -1, 4, 0);
    test_attention(9, 30, 2, 16, 1, 24, 5, 0, 0);
    /* dh = 64 (its own texel variants): few and many queries, clamped, memory at an offset */
    test_attention(1, 50, 3, 64, 0, 50, -1, 0, 0);
    /* one query over several runs of keys, heads in groups of 4 with a partial last group */
    test_attention(1, 150, 9, 64, 1, 140, 60, 0, 5);
    test_attention(4, 600, 16, 64, 1, 600, 1000, 3, 0); /* generation's shape: 10 runs a head group, 4 queries */
    test_attention(3, 17, 2, 64, 1, 10, 7, 0, 2);
    test_attention(2, 45, 4, 64, 1, 30, 20, 0, 3);
    test_attention(9, 20, 2, 64, 0, 20, -1, 0, 0);
    test_attention(31, 33, 1, 64, 1, 16, 40, 0, 4);
    /* paired: position rows passed along the lanes, clamped, rk at an offset, a partial last workgroup */
    test_attention(37, 50, 3, 64, 1, 45, 20, 8, 3);
    test_attention(21, 12, 2, 64, 0, 12, -1, 4, 0);
    /* dh = 48 (the padded base shape) */
    test_attention(23, 40, 2, 48, 1, 40, 30, 0, 0);
    test_attention(9, 20, 3, 48, 0, 20, -1, 0, 0);
    test_attention(17, 5, 1, 48, 1, 8, 4, 0, 2);
    test_attention(1, 40, 2, 48, 1, 40, 30, 0, 0);
    test_attention(40, 300, 3, 64, 1, 280, 100, 4, 0);   /* the GPUs' tiles: 3 query blocks, the last partial, keys in runs */
    test_attention(17, 90, 2, 20, 0, 90, -1, 0, 0);      /* tiles with a head of 5 vec4s */
    /* the memory in a ring: keys past its last row wrap to row 0, between the
     * segment's rows, inside the memory's, at the first key or the last;
     * every kernel (three-pass, fused, paired, split, the subgroup split) */
    /* qlen, mlen, H, dh, same_length, mem_len, clamp, rk offset, memory row 0, ring rows */
    test_attention_ring(1, 10, 4, 16, 1, 10, 20, 0, 7, 12);     /* one query, wraps inside the memory */
    test_attention_ring(1, 11, 4, 16, 1, 11, 20, 0, 11, 12);    /* memory row 0 at the ring's last row */
    test_attention_ring(1, 11, 4, 16, 1, 11, 20, 0, 1, 12);     /* the new key alone at row 0 */
    test_attention_ring(9, 70, 2, 8, 0, 70, 30, 8, 75, 82);     /* fused, wraps inside the memory */
    test_attention_ring(3, 12, 1, 41, 0, 12, -1, 3, 14, 17);    /* odd head size, wraps inside the memory */
    test_attention_ring(3, 12, 1, 41, 0, 12, -1, 3, 4, 17);     /* odd head size, wraps between the new keys */
    test_attention_ring(4, 30, 2, 64, 1, 24, 12, 4, 33, 40);    /* a few queries, subgroup split */
    test_attention_ring(1, 150, 9, 64, 1, 140, 60, 0, 100, 160); /* one query over runs, the wrap mid-run */
    test_attention_ring(1, 640, 16, 64, 1, 640, 1000, 0, 1000, 1152); /* generation's shape, mem_len 640 + 512 */
    test_attention_ring(23, 40, 2, 64, 1, 40, 30, 0, 50, 70);   /* paired, wraps inside the memory */
    test_attention_ring(23, 40, 2, 64, 1, 40, 30, 0, 30, 70);   /* paired, the segment's first key at row 0 */
    test_attention_ring(23, 40, 2, 64, 1, 40, 30, 0, 20, 70);   /* paired, wraps between the segment's rows */
    test_attention_ring(9, 70, 2, 8, 0, 70, 30, 8, 8, 82);      /* fused, wraps between the segment's rows */
    test_attention_ring(37, 50, 3, 64, 1, 45, 20, 8, 60, 90);   /* paired with shuffles, a partial last workgroup */
    test_attention_ring(17, 5, 1, 48, 1, 8, 4, 0, 1, 22);       /* dh = 48, a full ring: the last key at row 0 */
    test_attention_ring(7, 9, 2, 16, 1, 12, -1, 2, 10, 16);     /* misaligned rk: three-pass */
    test_attention(3, 20, 3, 48, 0, 20, -1, 0, 3);
    test_attention(1, 70, 1, 48, 0, 70, 9, 0, 0);
    test_attention(6, 0, 2, 16, 1, 0, -1, 0, 0);     /* same_length without memory: every key masked */
    test_attention(3, 0, 1, 8, 1, 0, 5, 0, 0);
    test_attention(20, 0, 2, 16, 1, 0, -1, 0, 0);    /* the same with enough queries for the paired kernel */

    failures += test_streams_cases();

    static const uint32_t block_dts[] = {TXLM_DT_F32, TXLM_DT_F16, TXLM_DT_Q8_0, TXLM_DT_Q4_0};
    for (size_t i = 0; i < sizeof block_dts / sizeof *block_dts; i++) test_block_rows(block_dts[i]);

    test_logsoftmax(3, 1000, 1000, 0);
    test_logsoftmax(4, 203, 200, 1);
    test_logsoftmax(1, 1, 1, 1);
    test_logsoftmax(6, 65, 60, 1);
    test_logsoftmax(5, 1027, 1027, 0);   /* more than 64 lanes x 4 */
    test_logsoftmax(2, 3, 2, 1);

    for (uint32_t k = 0; k < TXLM_K_COUNT; k++)
        CHECK(!txlm_kernel_usable(&ctx->vk, k) || cases_run[k] >= 3, "kernel %s ran in %u test cases, fewer than 3",
              ctx->kernels.k[k].name, cases_run[k]);

    failures += attention_case_failures() + fused_case_failures();
    uint64_t vmsgs = txlm_context_validation_messages(ctx);
    CHECK(vmsgs == 0, "%llu Vulkan validation messages", (unsigned long long)vmsgs);
    txlm_rec_destroy(&rec);
    txlm_context_destroy(ctx);
    if (failures) {
        fprintf(stderr, "%d kernel checks failed\n", failures);
        return 1;
    }
    printf("all kernel checks passed\n");
    return 0;
}
