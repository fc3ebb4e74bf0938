#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

// y = alpha * (W · x + b) (+ReLU) (+r) for ONE row x (a generated token),
// or XR rows (a few streams' tokens, batched), reading through texel
// buffers (tex.glsl). Each invocation owns ROWS whole rows of W
// (n0 + 8r + lane) and walks all of K: the 8 lanes of a fetch read 8
// different rows, no cross-lane sum is needed, and x is fetched once per
// ROWS rows. With XR rows of x each weight is unpacked once for all of
// them: on CPU drivers the unpacking and the fetches, not the
// multiply-adds, bound these kernels, so 2 or 4 rows cost little more than
// one (the 8-row block kernels multiply 8 rows whatever M is). Needs K,
// x_off and w_ld multiples of 16 / 4.

layout(local_size_x = 8) in;

#ifndef LN
#define LN 0
#endif
#include "tex.glsl"
#include "linear_out.glsl"

#if LN
// Post-norm LayerNorm fused (engine/ops.c, txlm_op_linear_ln): the last
// workgroup to store its rows normalises the whole row in place, as
// layernorm.comp's TEXEL variant does (same sums in the same order), so a
// layer's two one-row LayerNorm dispatches go. A workgroup is one
// subgroup of 8 here.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_memory_scope_semantics : require
layout(std430, binding = 5) readonly buffer Gb { vec4 G4[]; };
layout(std430, binding = 6) readonly buffer Lb { vec4 LB4[]; };
layout(std430, binding = 7) coherent buffer Cb { uint DONE[]; };  // [0]: workgroups finished, back to 0 after (TXLM_SYNC_WORDS)

vec4 y4(uint t) { uint i = y_base() + 4u * t; return vec4(Y[i], Y[i + 1u], Y[i + 2u], Y[i + 3u]); }
#define LN_IN4(row, t) y4(t)
#include "layernorm_row.glsl"
#include "last_group.glsl"
shared bool last;

void layernorm_if_last()
{
    GROUP_SYNC();
    uint ticket = count_done(gl_LocalInvocationID.x, 0u);
    if (gl_LocalInvocationID.x == 0u) last = ticket == gl_NumWorkGroups.x;
    GROUP_SYNC();
    if (!last) return;
    uint lane = gl_SubgroupInvocationID, n4 = (p.ln_d + 3u) / 4u, out4 = p.ln_d_out / 4u;
    float mean, rstd;
    ln_stats(0u, lane, p.ln_d, p.ln_eps, mean, rstd);
    // each lane overwrites only the columns it alone has read
    for (uint t = lane; t < out4; t += 8u) {
        vec4 y = vec4(0.0);
        if (t < n4) y = ln_real(t, (y4(t) - mean) * rstd * G4[t] + LB4[t], p.ln_d);
        uint i = p.ln_y + 4u * t;
        Y[i] = y.x, Y[i + 1u] = y.y, Y[i + 2u] = y.z, Y[i + 3u] = y.w;
    }
    if (gl_LocalInvocationID.x == 0u) DONE[0] = 0u;
}
#endif

// Rows per invocation, best measured per dtype on lavapipe: the fewer
// weight bytes per row, the more rows share each fetch of x
// (the tiles of gemv_tex_* in kernels.manifest, 8 lanes x ROWS, size the grid).
#ifndef TOUCH
#define TOUCH 0
#endif
#ifndef XR
#define XR 1u
#endif

// With XR rows of x, the quantised kernels take XR times fewer rows of W:
// the same registers and code (lavapipe compiled 16 x 2 rows for seconds).
#if W_TYPE == 3
#define ROWS (16u / XR)
#elif W_TYPE == 4
#define ROWS (8u / XR)
#else
#define ROWS 4u
#endif

// Y's row of x row m (rows past M compute the last row again, unstored)
uint x_row(uint m) { return p.x_off + min(m, p.M - 1u) * p.ldx; }

#if W_TYPE == 3
// x[m][0..7] · the 32 int8 values of the block at texel q (unscaled), for each row m
void q8_block(vec4 x[XR][8], uint q, out float s[XR])
{
    uvec4 lo = texelFetch(Wt, int(q)), hi = texelFetch(Wt, int(q) + 1);
    [[unroll]] for (uint m = 0u; m < XR; m++) s[m] = 0.0;
    [[unroll]] for (uint j = 0u; j < 4u; j++) {
        vec4 w = i8x4(lo[j]);
        [[unroll]] for (uint m = 0u; m < XR; m++) s[m] += dot(x[m][j], w);
    }
    [[unroll]] for (uint j = 0u; j < 4u; j++) {
        vec4 w = i8x4(hi[j]);
        [[unroll]] for (uint m = 0u; m < XR; m++) s[m] += dot(x[m][4u + j], w);
    }
}
#endif

void main()
{
    uint t = gl_LocalInvocationID.x, n0 = gl_WorkGroupID.x * (8u * ROWS);
#if TOUCH
    uint touch = 0u;
#endif
    uint wr[ROWS], xr[XR], m0 = gl_WorkGroupID.y * XR;
    float acc[XR][ROWS];
    [[unroll]] for (uint m = 0u; m < XR; m++) xr[m] = x_row(m0 + m);
    [[unroll]] for (uint r = 0u; r < ROWS; r++) {
        wr[r] = p.w_off + min(n0 + 8u * r + t, p.N - 1u) * p.w_ld;
        [[unroll]] for (uint m = 0u; m < XR; m++) acc[m][r] = 0.0;
    }
#if W_TYPE == 3
    // q8_0: a whole block per step (two texels), the scale applied once
    // to the block's sum. Where every row starts on a superblock (quant.glsl),
    // a step takes a superblock: 16 blocks, their scales in two texels.
    uint k = 0u;
    if (((p.w_ld | p.w_off) & 511u) == 0u) {
        for (; k + 512u <= p.K; k += 512u) {
#if TOUCH
            // Long rows (engine/ops.c picks this variant from 4
            // superblocks, ff2's 4096 columns): the next superblock of
            // each row is touched, a fetch per 64 bytes, before this one's
            // arithmetic, so its misses overlap it. A step reads 544 bytes
            // of each of 128 rows several KiB apart, which the CPU's
            // prefetchers do not follow: ff2 ran 1.2-1.3 ms from memory
            // against 0.58 from cache, 0.67-0.72 touched (a fetch per 128
            // bytes: 1.07). Rows of 2 superblocks, which a workgroup reads
            // as one span, ran 5-10% slower touched. The sum is stored only
            // where N == 0, which never runs, to keep the loads.
            if (k + 1024u <= p.K) [[unroll]] for (uint r = 0u; r < ROWS; r++) {
                int q = int(q_word(wr[r] + k + 512u) >> 2);
                [[unroll]] for (int c = 0; c < int(Q_SB_WORDS / 4u); c += 4) touch += texelFetch(Wt, q + c).x;
            }
#endif
            uvec4 sc[ROWS][2];
            [[unroll]] for (uint r = 0u; r < ROWS; r++) {
                int q = int((q_word(wr[r] + k) + Q_SB_VALUE_WORDS) >> 2);
                sc[r][0] = texelFetch(Wt, q);
                sc[r][1] = texelFetch(Wt, q + 1);
            }
            [[unroll]] for (uint b = 0u; b < 16u; b++) {
                vec4 x[XR][8];
                [[unroll]] for (uint m = 0u; m < XR; m++)
                    [[unroll]] for (uint j = 0u; j < 8u; j++) x[m][j] = x_load4(xr[m] + k + 32u * b + 4u * j);
                [[unroll]] for (uint r = 0u; r < ROWS; r++) {
                    uint q = (q_word(wr[r] + k) >> 2) + 2u * b;
                    float d = q_scale(sc[r][b >> 3][(b >> 1) & 3u], 32u * b), s[XR];
                    q8_block(x, q, s);
                    [[unroll]] for (uint m = 0u; m < XR; m++) acc[m][r] += d * s[m];
                }
            }
        }
    }
    for (; k < p.K; k += 32u) {
        vec4 x[XR][8];
        [[unroll]] for (uint m = 0u; m < XR; m++)
            [[unroll]] for (uint j = 0u; j < 8u; j++) x[m][j] = x_load4(xr[m] + k + 4u * j);
        [[unroll]] for (uint r = 0u; r < ROWS; r++) {
            uint e = wr[r] + k, q = q_word(e) >> 2;
            float d = w_scale(e), s[XR];
            q8_block(x, q, s);
            [[unroll]] for (uint m = 0u; m < XR; m++) acc[m][r] += d * s[m];
        }
    }
#else
    for (uint k = 0u; k < p.K; k += 16u) {
        vec4 x[XR][4];
        [[unroll]] for (uint m = 0u; m < XR; m++)
            [[unroll]] for (uint j = 0u; j < 4u; j++) x[m][j] = x_load4(xr[m] + k + 4u * j);
        [[unroll]] for (uint r = 0u; r < ROWS; r++) {
            vec4 w[4];
            w_load16(wr[r] + k, w);
            // the block kernels' order of additions (position keys, which
            // must not depend on batching, take the block kernels anyway)
            [[unroll]] for (uint m = 0u; m < XR; m++)
                [[unroll]] for (uint j = 0u; j < 4u; j++) acc[m][r] += dot(x[m][j], w[j]);
        }
    }
#endif
    [[unroll]] for (uint m = 0u; m < XR; m++)
        [[unroll]] for (uint r = 0u; r < ROWS; r++) {
            uint n = n0 + 8u * r + t;
            if (n < p.N && m0 + m < p.M) store(m0 + m, n, acc[m][r]);
        }
#if LN
    layernorm_if_last();
#endif
#if TOUCH
    if (p.N == 0u) store(0u, 0u, float(touch));
#endif
}
