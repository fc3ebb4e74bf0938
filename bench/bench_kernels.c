/* Kernel throughput on the current device, for choosing variants.
 * usage: bench_kernels [M N K [reps]] — times Y = X W^T for f32/f16/q8_0/q4_0
 * weights and prints GFLOP/s and weight GB/s (median of reps). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "context.h"
#include "ops.h"
#include "quantize.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    uint32_t M = argc > 3 ? (uint32_t)atoi(argv[1]) : 128, N = argc > 3 ? (uint32_t)atoi(argv[2]) : 4096;
    uint32_t K = argc > 3 ? (uint32_t)atoi(argv[3]) : 1024, reps = argc > 4 ? (uint32_t)atoi(argv[4]) : 5;
    txlm_context *ctx;
    txlm_context_options o = {0};
    if (txlm_context_create(&o, &ctx)) return fprintf(stderr, "%s\n", txlm_last_error()), 1;
    txlm_err e = {0};
    txlm_rec rec;
    txlm_rec_init(&rec, &ctx->vk, &ctx->kernels, 16, &e);
    txlm_ops ops = {.rec = &rec, .dummy = txlm_view_of(&ctx->dummy), .no_gemv = getenv("NO_GEMV") != NULL};
    float *w = malloc((size_t)N * K * 4);
    for (size_t i = 0; i < (size_t)N * K; i++) w[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
    uint8_t *q = malloc((size_t)N * K * 4);
    txlm_buf x, y;
    txlm_buf_create(&ctx->vk, (size_t)M * K * 4, TXLM_BUF_DEVICE, &x, &e);
    txlm_buf_create(&ctx->vk, (size_t)M * N * 4, TXLM_BUF_DEVICE, &y, &e);
    uint32_t dts[] = {TXLM_DT_F32, TXLM_DT_F16, TXLM_DT_Q8_0, TXLM_DT_Q4_0};
    printf("device: %s, M=%u N=%u K=%u\n", ctx->vk.props.deviceName, M, N, K);
    for (int d = 0; d < 4; d++) {
        uint32_t dt = dts[d];
        if (dt == TXLM_DT_F16) txlm_quantize_f16(w, (uint64_t)N * K, q);
        else if (dt == TXLM_DT_Q8_0) txlm_quantize_q8_0(w, (uint64_t)N * K, q);
        else if (dt == TXLM_DT_Q4_0) txlm_quantize_q4_0(w, (uint64_t)N * K, q);
        else memcpy(q, w, (size_t)N * K * 4);
        txlm_gpu_tensor t;
        if (txlm_tensor_alloc(&ctx->vk, N, K, dt, TXLM_BUF_DEVICE, &t, &e) || txlm_tensor_write(&ctx->vk, &t, q, &e))
            return fprintf(stderr, "%s\n", e.msg), 1;
        double times[64];
        for (uint32_t r = 0; r < reps && r < 64; r++) {
            txlm_rec_begin(&rec, &e);
            txlm_op_linear(&ops, txlm_arg_of(&x, 0, K), &t, 0, N, NULL, 0, NULL, txlm_arg_of(&y, 0, N), M, 0, 1.0f);
            double t0 = now();
            if (txlm_rec_submit(&rec, &e)) return fprintf(stderr, "%s\n", e.msg), 1;
            times[r] = now() - t0;
        }
        qsort(times, reps, sizeof *times, cmp);
        double med = times[reps / 2];
        printf("linear %-5s %8.2f ms  %7.2f GFLOP/s  %6.2f GB/s of weights\n", txlm_dtype_get(dt)->name, med * 1e3,
               2.0 * M * N * K / med * 1e-9, (double)t.buf.size / med * 1e-9);
        txlm_tensor_free(&ctx->vk, &t);
    }
    txlm_buf_destroy(&ctx->vk, &x), txlm_buf_destroy(&ctx->vk, &y);
    txlm_rec_destroy(&rec);
    txlm_context_destroy(ctx);
    free(w), free(q);
    return 0;
}
