#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

// Y = alpha * (X · W^T + b) (+ReLU) (+R) through texel buffers (tex.glsl):
// each invocation computes a TM x TN block of Y from registers, 4 values
// of K a step, one fetch per row of X and of W. Big blocks win on CPU
// drivers (fewer fetches per multiply-add; 32x16 measured best for 128
// rows), TM = 8 serves segments of a few rows. Needs K a multiple of 16,
// x_off and ldx multiples of 4.

layout(local_size_x = 8, local_size_y = 2) in;

#include "tex.glsl"
#include "linear_out.glsl"

void main()
{
    uint n0 = gl_GlobalInvocationID.x * TN;
    uint m0 = gl_GlobalInvocationID.y * TM;
    if (n0 >= p.N || m0 >= p.M) return;

    uint xr[TM], wr[TN];
    [[unroll]] for (uint r = 0u; r < TM; r++) xr[r] = p.x_off + min(m0 + r, p.M - 1u) * p.ldx;
    [[unroll]] for (uint c = 0u; c < TN; c++) wr[c] = p.w_off + min(n0 + c, p.N - 1u) * p.w_ld;

    float acc[TM][TN];
    [[unroll]] for (uint r = 0u; r < TM; r++)
        [[unroll]] for (uint c = 0u; c < TN; c++) acc[r][c] = 0.0;

    for (uint k = 0u; k < p.K; k += 4u) {
        uint k16 = k & ~15u, j = (k >> 2) & 3u;
        vec4 xv[TM];
        [[unroll]] for (uint r = 0u; r < TM; r++) xv[r] = x_load4(xr[r] + k);
        [[unroll]] for (uint c = 0u; c < TN; c++) {
            vec4 wv = w_load4(wr[c] + k16, j);
            [[unroll]] for (uint r = 0u; r < TM; r++) acc[r][c] += dot(xv[r], wv);
        }
    }

    // Rows and columns past M, N were computed from the clamped last row
    // and column, so they store bit-identical values to addresses only
    // this invocation owns: no bounds test per element.
    [[unroll]] for (uint r = 0u; r < TM; r++) {
        uint y0 = p.y_off + min(m0 + r, p.M - 1u) * p.ldy;
        [[unroll]] for (uint c = 0u; c < TN; c++) Y[y0 + min(n0 + c, p.N - 1u)] = acc[r][c];
    }
    finish_block(m0, n0, min(TM, p.M - m0), min(TN, p.N - n0));
}
