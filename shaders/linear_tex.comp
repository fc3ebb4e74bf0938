#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

// Y = alpha * (X · W^T + b) (+ReLU) (+R) through texel buffers (tex.glsl):
// each invocation computes a TM x TN block of Y from registers, 4 values
// of K a step. Needs K a multiple of 16, x_off and ldx multiples of 4.
//
// The 8 lanes of a row of the workgroup share their TM rows of X. With
// SHUFFLE=0 each lane fetches all of them (identical addresses: on CPU
// drivers still one gather each, and those gathers were a quarter of the
// kernel's time); big blocks then win (fewer fetches per multiply-add:
// 32x16 measured best). With SHUFFLE=1 (subgroups of exactly 8 lanes,
// one per workgroup) lane l fetches rows l, l+8, ... and every lane takes
// each row from its owner by a subgroup shuffle, a register permute on
// CPU drivers: X costs TM/8 fetches a step instead of TM, and narrower
// blocks (32x8) win (docs/performance-history.md, "Subgroup shuffles,
// padding, LayerNorm").

#if SHUFFLE
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
layout(local_size_x = 8, local_size_y = 1) in;
#else
layout(local_size_x = 8, local_size_y = 2) in;
#endif

#include "tex.glsl"
#include "linear_out.glsl"

void main()
{
    uint n0 = gl_GlobalInvocationID.x * TN;
    uint m0 = gl_GlobalInvocationID.y * TM;
#if SHUFFLE
    // lanes past N still fetch their rows of X for the others
    if (m0 >= p.M) return;
    const uint XF = TM / 8u;
    uint lane = gl_SubgroupInvocationID;
#else
    if (n0 >= p.N || m0 >= p.M) return;
    const uint XF = TM;
    const uint lane = 0u;
#endif

    // rows of X this lane fetches: m0 + lane + 8f (SHUFFLE) or m0 + f
    uint xr[XF], wr[TN];
    [[unroll]] for (uint f = 0u; f < XF; f++)
        xr[f] = p.x_off + min(m0 + lane + (XF == TM ? f : 8u * f), p.M - 1u) * p.ldx;
    [[unroll]] for (uint c = 0u; c < TN; c++) wr[c] = p.w_off + min(n0 + c, p.N - 1u) * p.w_ld;

    float acc[TM][TN];
    [[unroll]] for (uint r = 0u; r < TM; r++)
        [[unroll]] for (uint c = 0u; c < TN; c++) acc[r][c] = 0.0;

    for (uint k = 0u; k < p.K; k += 4u) {
        uint k16 = k & ~15u, j = (k >> 2) & 3u;
        vec4 xf[XF];
        [[unroll]] for (uint f = 0u; f < XF; f++) xf[f] = x_load4(xr[f] + k);
#if SHUFFLE
        vec4 wv[TN];
        [[unroll]] for (uint c = 0u; c < TN; c++) wv[c] = w_load4(wr[c] + k16, j);
        [[unroll]] for (uint r = 0u; r < TM; r++) {
            vec4 xv = subgroupShuffle(xf[r / 8u], r % 8u);
            [[unroll]] for (uint c = 0u; c < TN; c++) acc[r][c] += dot(xv, wv[c]);
        }
#else
        [[unroll]] for (uint c = 0u; c < TN; c++) {
            vec4 wv = w_load4(wr[c] + k16, j);
            [[unroll]] for (uint r = 0u; r < TM; r++) acc[r][c] += dot(xf[r], wv);
        }
#endif
    }
    if (n0 >= p.N) return;

    // Rows and columns past M, N were computed from the clamped last row
    // and column, so they store bit-identical values to addresses only
    // this invocation owns: no bounds test per element.
    [[unroll]] for (uint r = 0u; r < TM; r++) {
        uint y0 = y_base() + min(m0 + r, p.M - 1u) * p.ldy;
        [[unroll]] for (uint c = 0u; c < TN; c++) Y[y0 + min(n0 + c, p.N - 1u)] = acc[r][c];
    }
    finish_block(m0, n0, min(TM, p.M - m0), min(TN, p.N - n0));
}
