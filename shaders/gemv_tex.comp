#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

// y = alpha * (W · x + b) (+ReLU) (+r) for ONE row x (a generated token),
// reading through texel buffers (tex.glsl). Each invocation owns 4 whole
// rows (n0 + 8r + lane) and walks all of K, 16 weights a step: the 8 lanes
// of a fetch read 8 different rows, no cross-lane sum is needed, and x is
// fetched once per 4 rows. Needs K, x_off and w_ld multiples of 16 / 4.

layout(local_size_x = 8) in;

#include "tex.glsl"
#include "linear_out.glsl"

#define R4 4u

void main()
{
    uint t = gl_LocalInvocationID.x, n0 = gl_WorkGroupID.x * (8u * R4);
    uint wr[R4];
    float acc[R4];
    [[unroll]] for (uint r = 0u; r < R4; r++) {
        wr[r] = p.w_off + min(n0 + 8u * r + t, p.N - 1u) * p.w_ld;
        acc[r] = 0.0;
    }
#if W_TYPE == 3
    // q8_0: a whole block per step (two texels, one scale), the scale
    // applied once to the block's sum
    for (uint k = 0u; k < p.K; k += 32u) {
        vec4 x[8];
        [[unroll]] for (uint j = 0u; j < 8u; j++) x[j] = x_load4(p.x_off + k + 4u * j);
        [[unroll]] for (uint r = 0u; r < R4; r++) {
            uint e = wr[r] + k;
            uvec4 a = texelFetch(Wt, int(e >> 4)), b = texelFetch(Wt, int(e >> 4) + 1);
            float s = 0.0;
            [[unroll]] for (uint j = 0u; j < 4u; j++) s += dot(x[j], i8x4(a[j]));
            [[unroll]] for (uint j = 0u; j < 4u; j++) s += dot(x[4u + j], i8x4(b[j]));
            acc[r] += w_scale(e, p.w_soff) * s;
        }
    }
#else
    for (uint k = 0u; k < p.K; k += 16u) {
        vec4 x[4];
        [[unroll]] for (uint j = 0u; j < 4u; j++) x[j] = x_load4(p.x_off + k + 4u * j);
        [[unroll]] for (uint r = 0u; r < R4; r++) {
            vec4 w[4];
            w_load16(wr[r] + k, p.w_soff, w);
            // the block kernels' order of additions (position keys, which
            // must not depend on batching, take the block kernels anyway)
            [[unroll]] for (uint j = 0u; j < 4u; j++) acc[r] += dot(x[j], w[j]);
        }
    }
#endif
    [[unroll]] for (uint r = 0u; r < R4; r++) {
        uint n = n0 + 8u * r + t;
        if (n < p.N) store(0u, n, acc[r]);
    }
}
