/* Kernel throughput on the current device, for choosing variants.
 * usage: bench_kernels [M N K [reps [H dh]]] — measures the copy bandwidth
 * (host memcpy and a device buffer copy, 256 MiB), then times Y = X W^T for
 * f32/f16/q8_0/q4_0 weights and prints GFLOP/s, weight GB/s and that as a
 * fraction of the device copy's rate (median of reps): with M = 1 (the
 * GEMV of generation) reading the weights is all the work, so the copy
 * rate is its ceiling. Then LayerNorm of M rows of K, and attention of
 * H heads of dh (default 16 x 64) for 128 queries and for one, memory 640. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "../tests/common/kernel_switches.h"
#include "context.h"
#include "ops.h"
#include "quantize.h"

/* Bytes copied per second (each byte read once and written once): the
 * host's memcpy, median of reps, and the device's copy
 * (txlm_context_copy_rate, which the benchmarks of txlm bench use too). */
static double copy_rate(txlm_context *ctx, uint32_t reps, double *host_rate)
{
    const size_t bytes = (size_t)256 << 20;
    double host[64], dev = 0;
    char *a = malloc(bytes), *b = malloc(bytes);
    if (!a || !b || txlm_context_copy_rate(ctx, &dev)) {
        fprintf(stderr, "copy: %s\n", a && b ? txlm_last_error() : "out of memory");
        free(a), free(b);
        return 0;
    }
    memset(a, 1, bytes), memset(b, 2, bytes);
    for (uint32_t r = 0; r < reps && r < 64; r++) {
        double t0 = now();
        memcpy(b, a, bytes);
        host[r] = bytes / (now() - t0);
    }
    qsort(host, reps, sizeof *host, cmp);
    free(a), free(b);
    *host_rate = host[reps / 2];
    return dev;
}

/* The median of reps runs of what rec holds after `record` (one submission each). */
typedef void (*record_fn)(txlm_ops *ops, void *what);

static double median_submit(txlm_rec *rec, txlm_ops *ops, record_fn record, void *what, uint32_t reps, txlm_err *e)
{
    double times[64];
    if (reps > 64) reps = 64;
    for (uint32_t r = 0; r < reps; r++) {
        txlm_rec_begin(rec, e);
        record(ops, what);
        double t0 = now();
        if (txlm_rec_submit(rec, e)) return fprintf(stderr, "%s\n", e->msg), -1;
        times[r] = now() - t0;
    }
    qsort(times, reps, sizeof *times, cmp);
    return times[reps / 2];
}

static void record_linear(txlm_ops *ops, void *what) { txlm_op_linear(ops, what); }
static void record_layernorm(txlm_ops *ops, void *what) { txlm_op_layernorm(ops, what); }
static void record_attention(txlm_ops *ops, void *what) { txlm_op_attention(ops, what); }

/* y = x W^T of M x K by N x K in each weight type, against the device's copy rate. */
static int bench_linear(txlm_context *ctx, txlm_rec *rec, txlm_ops *ops, txlm_buf *x, txlm_buf *y, uint32_t M, uint32_t N,
                        uint32_t K, uint32_t reps, double dev_copy, txlm_err *e)
{
    float *w = malloc((size_t)N * K * 4);
    uint8_t *q = malloc((size_t)N * K * 4);
    if (!w || !q) return free(w), free(q), 1;
    bench_pattern(w, (size_t)N * K);
    uint32_t dts[] = {TXLM_DT_F32, TXLM_DT_F16, TXLM_DT_Q8_0, TXLM_DT_Q4_0};
    int rc = 0;
    for (int d = 0; d < 4 && !rc; d++) {
        uint32_t dt = dts[d];
        if (dt == TXLM_DT_F16) txlm_quantize_f16(w, (uint64_t)N * K, q);
        else if (dt == TXLM_DT_Q8_0) txlm_quantize_q8_0(w, (uint64_t)N * K, q);
        else if (dt == TXLM_DT_Q4_0) txlm_quantize_q4_0(w, (uint64_t)N * K, q);
        else memcpy(q, w, (size_t)N * K * 4);
        txlm_gpu_tensor t;
        if (txlm_tensor_alloc(&ctx->vk, N, K, dt, TXLM_BUF_DEVICE, &t, e) || txlm_tensor_write(&ctx->vk, &t, q, e)) {
            fprintf(stderr, "%s\n", e->msg);
            rc = 1;
            break;
        }
        txlm_linear_args la = {.x = txlm_arg_of(x, 0, K), .w = &t, .n = N, .y = txlm_arg_of(y, 0, N), .m = M};
        double med = median_submit(rec, ops, record_linear, &la, reps, e);
        if (med < 0) rc = 1;
        double wrate = (double)t.buf.size / med;
        if (!rc)
            printf("linear %-5s %8.2f ms  %7.2f GFLOP/s  %6.2f GB/s of weights = %4.0f%% of the device copy\n",
                   txlm_dtype_get(dt)->name, med * 1e3, 2.0 * M * N * K / med * 1e-9, wrate * 1e-9,
                   dev_copy > 0 ? 100 * wrate / dev_copy : 0.0);
        txlm_tensor_free(&ctx->vk, &t);
    }
    free(w), free(q);
    return rc;
}

/* LayerNorm of M rows of K (twice per layer in a segment). */
static int bench_layernorm(txlm_context *ctx, txlm_rec *rec, txlm_ops *ops, txlm_buf *x, txlm_buf *y, uint32_t M, uint32_t K,
                           uint32_t reps, txlm_err *e)
{
    txlm_gpu_tensor g, b;
    txlm_tensor_alloc(&ctx->vk, 1, K, TXLM_DT_F32, TXLM_BUF_DEVICE, &g, e);
    txlm_tensor_alloc(&ctx->vk, 1, K, TXLM_DT_F32, TXLM_BUF_DEVICE, &b, e);
    bench_fill(&ctx->vk, &g.buf, e), bench_fill(&ctx->vk, &b.buf, e);
    txlm_layernorm_args la = {.x = txlm_arg_of(x, 0, K), .g = &g, .b = &b, .y = txlm_arg_of(y, 0, K),
                              .rows = M, .d = K, .d_out = K, .eps = 1e-5f};
    double med = median_submit(rec, ops, record_layernorm, &la, reps, e);
    if (med >= 0) printf("layernorm %u rows of %u: %8.3f ms\n", M, K, med * 1e3);
    txlm_tensor_free(&ctx->vk, &g), txlm_tensor_free(&ctx->vk, &b);
    return med < 0;
}

/* Relative attention of H heads of dh at the wt103 evaluation shape, qlen 128
 * after 640 rows of memory, and at a generated token's, qlen 1. */
static int bench_attention(txlm_context *ctx, txlm_rec *rec, txlm_ops *ops, uint32_t H, uint32_t dh, uint32_t reps,
                           txlm_err *e)
{
    uint32_t hd = H * dh, shapes[][2] = {{128, 640}, {1, 640}};
    int rc = 0;
    for (int si = 0; si < 2 && !rc; si++) {
        uint32_t ql = shapes[si][0], ml = shapes[si][1], kl = ql + ml;
        txlm_buf qb, kvb, sb, ob;
        txlm_gpu_tensor rk, rw, rr;
        txlm_buf_create(&ctx->vk, (size_t)ql * hd * 4, TXLM_BUF_DEVICE, &qb, e);
        txlm_buf_create(&ctx->vk, (size_t)kl * 2 * hd * 4, TXLM_BUF_DEVICE, &kvb, e);
        txlm_attn_shape sh = {ql, ml, H, dh, kl - 1, 1, ml, 0, 0, 0, 0, 0, 0};
        size_t scratch = (size_t)H * ql * kl * 4, split = (size_t)txlm_attn_split_bytes(&sh);
        txlm_buf_create(&ctx->vk, scratch > split ? scratch : split, TXLM_BUF_DEVICE, &sb, e);
        txlm_buf_create(&ctx->vk, (size_t)ql * hd * 4, TXLM_BUF_DEVICE, &ob, e);
        txlm_tensor_alloc(&ctx->vk, kl, hd, TXLM_DT_F32, TXLM_BUF_DEVICE, &rk, e);
        txlm_tensor_alloc(&ctx->vk, H, dh, TXLM_DT_F32, TXLM_BUF_DEVICE, &rw, e);
        txlm_tensor_alloc(&ctx->vk, H, dh, TXLM_DT_F32, TXLM_BUF_DEVICE, &rr, e);
        txlm_buf *inputs[] = {&qb, &kvb, &rk.buf, &rw.buf, &rr.buf};
        for (int b = 0; b < 5; b++) bench_fill(&ctx->vk, inputs[b], e);
        txlm_attention_args aa = {.shape = &sh, .q = txlm_view_of(&qb), .kv = txlm_view_of(&kvb),
                                  .rk = txlm_tensor_view(&rk), .r_w_bias = &rw, .r_r_bias = &rr,
                                  .scratch = txlm_view_of(&sb), .out = txlm_view_of(&ob)};
        double med = median_submit(rec, ops, record_attention, &aa, reps, e);
        rc = med < 0;
        if (!rc)
            printf("attention qlen %u mlen %u H %u dh %u: %8.2f ms  %6.2f GFLOP/s\n", ql, ml, H, dh, med * 1e3,
                   4.0 * H * ql * kl * dh * 1.5 / med * 1e-9);
        txlm_buf_destroy(&ctx->vk, &qb), txlm_buf_destroy(&ctx->vk, &kvb), txlm_buf_destroy(&ctx->vk, &sb);
        txlm_buf_destroy(&ctx->vk, &ob);
        txlm_tensor_free(&ctx->vk, &rk), txlm_tensor_free(&ctx->vk, &rw), txlm_tensor_free(&ctx->vk, &rr);
    }
    return rc;
}

int main(int argc, char **argv)
{
    uint32_t M = argc > 3 ? (uint32_t)atoi(argv[1]) : 128, N = argc > 3 ? (uint32_t)atoi(argv[2]) : 4096;
    uint32_t K = argc > 3 ? (uint32_t)atoi(argv[3]) : 1024, reps = argc > 4 ? (uint32_t)atoi(argv[4]) : 5;
    uint32_t H = argc > 6 ? (uint32_t)atoi(argv[5]) : 16, dh = argc > 6 ? (uint32_t)atoi(argv[6]) : 64;
    if (reps < 1) reps = 1;
    txlm_context *ctx;
    txlm_context_options o = {0};
    if (txlm_context_create(&o, &ctx)) return fprintf(stderr, "%s\n", txlm_last_error()), 1;
    txlm_err e = {0};
    txlm_rec rec;
    txlm_rec_init(&rec, &ctx->vk, &ctx->kernels, txlm_view_of(&ctx->dummy), &e);
    txlm_ops ops = {.rec = &rec, .dummy = txlm_view_of(&ctx->dummy)};
    kernel_switch(ctx, NO_GEMV, getenv("NO_GEMV") != NULL);
    kernel_switch(ctx, NO_FUSED_ATTENTION, getenv("NO_FUSED") != NULL);
    kernel_switch(ctx, NO_GEMV_Q8, getenv("NO_GEMV_Q8") != NULL);
    kernel_switch(ctx, NO_TOUCH, getenv("NO_TOUCH") != NULL);
    kernel_switch(ctx, NO_PAIRED_ATTENTION, getenv("NO_PAIR") != NULL);
    txlm_buf x, y;
    txlm_buf_create(&ctx->vk, (size_t)M * K * 4, TXLM_BUF_DEVICE, &x, &e);
    txlm_buf_create(&ctx->vk, (size_t)M * N * 4, TXLM_BUF_DEVICE, &y, &e);
    bench_fill(&ctx->vk, &x, &e);
    printf("device: %s, M=%u N=%u K=%u\n", ctx->vk.props.deviceName, M, N, K);
    double host_copy = 0, dev_copy = copy_rate(ctx, reps, &host_copy);
    printf("copy 256 MiB: host memcpy (1 thread) %.2f GB/s, device buffer copy %.2f GB/s\n", host_copy * 1e-9,
           dev_copy * 1e-9);
    int rc = bench_linear(ctx, &rec, &ops, &x, &y, M, N, K, reps, dev_copy, &e);
    if (!rc) rc = bench_layernorm(ctx, &rec, &ops, &x, &y, M, K, reps, &e);
    txlm_buf_destroy(&ctx->vk, &x), txlm_buf_destroy(&ctx->vk, &y);
    if (!rc) rc = bench_attention(ctx, &rec, &ops, H, dh, reps, &e);
    txlm_rec_destroy(&rec);
    txlm_context_destroy(ctx);
    return rc;
}
