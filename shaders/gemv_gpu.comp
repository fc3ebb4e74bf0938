#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_memory_scope_semantics : require
#include "common.glsl"

// y = alpha * (W · x + b) (+ReLU) (+r) for ONE row x (a generated token)
// on GPUs: a workgroup of 64 invocations takes ROWS rows; its invocations
// walk K side by side, 4 values each a step, so a step reads 1 KiB of a
// row in one coalesced sweep, and the 64 partial sums of a row meet in
// workgroup memory. The grid then has N / ROWS workgroups, thousands of
// invocations to keep a GPU's memory busy, where gemv.comp's workgroups
// of 8 (made for CPU drivers) fill a quarter of a 32-wide warp. Any K,
// offsets and strides; W in any stored dtype (weights.glsl).
//
// XR > 1 (gemv_gpu8_*: a batch's tokens, 2 to 15 rows): the workgroup
// takes XR rows of x (the grid's y), each weight read once for all of
// them; rows past M skip their multiply-adds (a branch uniform over the
// workgroup). A product of a few rows is bound by reading W, as one row
// is, and the 64x64 tiles of linear_smem and linear_cm would give N / 64
// workgroups, too few to keep a GPU's memory busy, and read W no less.

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Xb { float X[]; };
#define W_BINDING 1
#include "weights.glsl"
#include "linear_out.glsl"

#define ROWS 4u // the tile of gemv_gpu_* in kernels.manifest (ROWS x XR)
#ifndef XR
#define XR 1u
#endif
shared float part[ROWS * XR][64];

#ifndef LN
#define LN 0
#endif
#if LN
// A post-norm block's LayerNorm fused (engine/ops.c, txlm_op_linear_ln),
// as gemv_tex.comp does on CPU devices: the last workgroup to store its
// rows normalises the whole rows (each of the M), with layernorm.comp's
// sums in its order (layernorm_wg.glsl), into Y at ln_y (in place, or a
// pre-norm block's next input, rows ldy apart as Y's). Two dispatches
// and two barriers of a layer go.
layout(std430, binding = 5) readonly buffer Gb { float G[]; };
layout(std430, binding = 6) readonly buffer Lb { float LB[]; };
layout(std430, binding = 7) coherent buffer Cb { uint DONE[]; };  // [0]: workgroups finished, back to 0 after (TXLM_SYNC_WORDS)

#include "last_group.glsl"

#define LN_IN(row, c) Y[y_base() + (row) * p.ldy + (c)]
#include "layernorm_wg.glsl"
shared bool last;

void layernorm_if_last(uint t)
{
    GROUP_SYNC();
    uint ticket = count_done(t, 0u);
    if (t == 0u) last = ticket == gl_NumWorkGroups.x * gl_NumWorkGroups.y;
    GROUP_SYNC();
    if (!last) return;
    for (uint m = 0u; m < p.M; m++) {
        float mean, rstd;
        ln_stats_wg(m, t, p.ln_d, p.ln_eps, mean, rstd);
        // each invocation overwrites only the columns it alone has read
        uint y0 = y_base() + m * p.ldy, l0 = p.ln_y + m * p.ldy;
        for (uint c = t; c < p.ln_d; c += 64u) Y[l0 + c] = (Y[y0 + c] - mean) * rstd * G[c] + LB[c];
        for (uint c = p.ln_d + t; c < p.ln_d_out; c += 64u) Y[l0 + c] = 0.0;
    }
    if (t == 0u) DONE[0] = 0u;
}
#endif

void main()
{
    uint t = gl_LocalInvocationID.x, n0 = gl_WorkGroupID.x * ROWS, m0 = gl_WorkGroupID.y * XR;
    uint wr[ROWS], xr[XR];
    float acc[XR][ROWS];
    [[unroll]] for (uint r = 0u; r < ROWS; r++) wr[r] = p.w_off + min(n0 + r, p.N - 1u) * p.w_ld;
    [[unroll]] for (uint m = 0u; m < XR; m++) {
        xr[m] = p.x_off + min(m0 + m, p.M - 1u) * p.ldx;
        [[unroll]] for (uint r = 0u; r < ROWS; r++) acc[m][r] = 0.0;
    }
    for (uint k = t * 4u; k < p.K; k += 256u) {
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            if (k + j >= p.K) break;
            float w[ROWS];
            [[unroll]] for (uint r = 0u; r < ROWS; r++) w[r] = w_at(wr[r] + k + j);
            [[unroll]] for (uint m = 0u; m < XR; m++) {
                if (m0 + m >= p.M) break;
                float xv = X[xr[m] + k + j];
                [[unroll]] for (uint r = 0u; r < ROWS; r++) acc[m][r] += xv * w[r];
            }
        }
    }
    [[unroll]] for (uint m = 0u; m < XR; m++)
        [[unroll]] for (uint r = 0u; r < ROWS; r++) part[m * ROWS + r][t] = acc[m][r];
    barrier();
    for (uint s = 32u; s > 0u; s >>= 1) {
        if (t < s)
            [[unroll]] for (uint i = 0u; i < ROWS * XR; i++) part[i][t] += part[i][t + s];
        barrier();
    }
    uint m = m0 + t / ROWS, n = n0 + t % ROWS;
    if (t < ROWS * XR && m < p.M && n < p.N) store(m, n, part[t][0]);
#if LN
    layernorm_if_last(t);
#endif
}
