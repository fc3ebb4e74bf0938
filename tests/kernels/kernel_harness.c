#include "kernel_harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quantize.h"
txlm_context *ctx;
txlm_rec rec;
txlm_ops ops;
uint64_t rng = 0x9e3779b97f4a7c15ull;

float frand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

float *rand_vec(size_t n, float scale)
{
    float *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = frand() * scale;
    return v;
}

void die_if(int rc, const txlm_err *e)
{
    if (rc) {
        fprintf(stderr, "FAIL: %s\n", e->msg);
        exit(1);
    }
}

/* A host-visible buffer holding `n` floats (inputs and outputs alike). */
txlm_buf host_buf(const float *data, size_t n)
{
    txlm_buf b;
    txlm_err e = {0};
    die_if(txlm_buf_create(&ctx->vk, (n ? n : 1) * 4, TXLM_BUF_READBACK, &b, &e), &e);
    if (data) memcpy(b.map, data, n * 4);
    else memset(b.map, 0, n * 4);
    return b;
}

/* A weight tensor of a dtype; max_range > 0 forces it to be split into
 * chunks of at most that many bytes. `data` is replaced by what the
 * device will actually see (the dtype's rounding), so references use it. */
txlm_gpu_tensor weight_dt(float *data, uint32_t rows, uint32_t cols, uint32_t dtype, VkDeviceSize max_range)
{
    txlm_gpu_tensor t;
    txlm_err e = {0};
    uint64_t n = (uint64_t)rows * cols;
    uint8_t *stored = malloc(n * 4 + 64);
    switch (dtype) {
    case TXLM_DT_F16: txlm_quantize_f16(data, n, stored); break;
    case TXLM_DT_Q8_0: txlm_quantize_q8_0(data, n, stored); break;
    case TXLM_DT_Q4_0: txlm_quantize_q4_0(data, n, stored); break;
    default: memcpy(stored, data, n * 4); break;
    }
    txlm_dequantize(dtype, stored, n, data);
    VkDeviceSize saved = ctx->vk.split_bytes;
    if (max_range) ctx->vk.split_bytes = max_range;
    die_if(txlm_tensor_alloc(&ctx->vk, rows, cols, dtype, TXLM_BUF_DEVICE, &t, &e), &e);
    ctx->vk.split_bytes = saved;
    die_if(txlm_tensor_write(&ctx->vk, &t, stored, &e), &e);
    free(stored);
    return t;
}

txlm_gpu_tensor weight(float *data, uint32_t rows, uint32_t cols, VkDeviceSize max_range)
{
    return weight_dt(data, rows, cols, TXLM_DT_F32, max_range);
}

const char *dt_name(uint32_t dt) { return txlm_dtype_get(dt)->name; }

void round_f16(float *v, size_t n)
{
    uint16_t *h = malloc(n * 2 + 2);
    txlm_quantize_f16(v, n, h);
    txlm_dequantize(TXLM_DT_F16, h, n, v);
    free(h);
}

/* Per kernel, in how many test cases it ran: every kernel the device has
 * must have run in at least three, so no variant goes untested because the
 * op functions happened not to pick it. */
uint32_t cases_run[TXLM_K_COUNT];
static uint32_t uses_seen[TXLM_K_COUNT];

void case_done(void)
{
    for (uint32_t k = 0; k < TXLM_K_COUNT; k++)
        if (ctx->vk.debug->kernel_uses[k] != uses_seen[k]) {
            cases_run[k]++;
            uses_seen[k] = ctx->vk.debug->kernel_uses[k];
        }
}

/* The modes: 64-bit loads (wide) or not, subgroup sums or shared memory
 * for single rows, the matrix kernel for single rows too, the generic
 * single-row kernel for q8_0 rows, the texel kernels, the GPU-shaped ones. */
int have_int64, have_subgroup, have_texel, have_gpu_kernels, have_coopmat;

int set_mode(int mode)
{
    /* the kernels shaped for GPUs (their default, forced here on any device):
     * alone, with the matrix units' kernels (MODE_COOPMAT) or without */
    ctx->vk.gpu_kernels = 0;
    kernel_switch(ctx, NO_COOPMAT, 0);
    if (mode & (MODE_GPU | MODE_COOPMAT)) {
        if ((mode != MODE_GPU && mode != MODE_COOPMAT) || !txlm_kernel_usable(&ctx->vk, TXLM_K_LINEAR_SMEM)) return 0;
        if (mode == MODE_COOPMAT && !have_coopmat) return 0;
        ctx->vk.texel = 0;
        ctx->vk.gpu_kernels = 1;
        kernel_switch(ctx, NO_GEMV | NO_GEMV_Q8, 0);
        kernel_switch(ctx, NO_COOPMAT, mode == MODE_GPU);
        return 1;
    }
    /* texel kernels: the matrix/single-row switch, and MODE_NO_SUBGROUP
     * for the matrix kernels without subgroup shuffles */
    if (mode & MODE_TEXEL) {
        if (!have_texel || (mode & (MODE_NARROW | MODE_NO_GEMV_Q8))) return 0;
        ctx->vk.texel = 1;
        kernel_switch(ctx, NO_GEMV, (mode & MODE_NO_GEMV) != 0);
        kernel_switch(ctx, NO_GEMV_Q8, 0);
        kernel_switch(ctx, NO_SHUFFLE, (mode & MODE_NO_SUBGROUP) != 0);
        return 1;
    }
    ctx->vk.texel = 0;
    if (!(mode & MODE_NARROW) && !have_int64) return 0;
    if (!(mode & MODE_NO_SUBGROUP) && !have_subgroup) return 0;
    ctx->vk.int64 = !(mode & MODE_NARROW);
    ctx->vk.subgroup_arith = !(mode & MODE_NO_SUBGROUP);
    kernel_switch(ctx, NO_GEMV, (mode & MODE_NO_GEMV) != 0);
    kernel_switch(ctx, NO_GEMV_Q8, (mode & MODE_NO_GEMV_Q8) != 0);
    return 1;
}

void reset_mode(void)
{
    ctx->vk.gpu_kernels = have_gpu_kernels;
    ctx->vk.int64 = have_int64;
    ctx->vk.subgroup_arith = have_subgroup;
    ctx->vk.texel = 0;
    kernel_switch(ctx, NO_GEMV | NO_GEMV_Q8 | NO_SHUFFLE | NO_COOPMAT, 0);
}

void begin(void)
{
    txlm_err e = {0};
    die_if(txlm_rec_begin(&rec, &e), &e);
}

void run(void)
{
    txlm_err e = {0};
    die_if(txlm_rec_submit(&rec, &e), &e);
}

double max_abs_diff(const float *a, const float *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (!(d <= m)) m = isnan(d) ? INFINITY : d; /* a NaN anywhere fails, even if larger diffs follow */
    }
    return m;
}

