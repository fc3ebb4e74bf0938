#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#if WIDE
// 256-bit loads (8 floats at once) where the device has 64-bit integers
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif
#include "common.glsl"

// Y = alpha * (X · W^T + b) (+ReLU) (+R) for K, row strides and offsets
// that are multiples of 8: each invocation computes an 8x8 block of Y
// straight from registers, loading 8 values of X and W per load pair.
// No shared memory: on lavapipe it only adds slow loads and barriers.
// Same push constants and bindings as linear.comp.

layout(local_size_x = 8, local_size_y = 2) in;

#define X_BINDING 0
#include "xload8.glsl"
#define W_BINDING 1
#include "weights8.glsl"
layout(std430, binding = 2) readonly buffer Bb { float B[]; };
layout(std430, binding = 3) readonly buffer Rb { float R[]; };
layout(std430, binding = 4) writeonly buffer Yb { float Y[]; };

const uint HAS_BIAS = 1u, RELU = 2u, RESIDUAL = 4u;

layout(push_constant) uniform Push {
    uint M, N, K;
    uint x_off, ldx;
    uint w_off, w_ld;
    uint y_off, ldy;
    uint b_off;
    uint r_off, ldr;
    uint flags;
    float alpha;
    uint w_soff;
} p;

void main()
{
    uint n0 = gl_GlobalInvocationID.x * 8u;
    uint m0 = gl_GlobalInvocationID.y * 8u;
    if (n0 >= p.N || m0 >= p.M) return;

    uint xr[8], wr[8];
    [[unroll]] for (uint r = 0u; r < 8u; r++) xr[r] = p.x_off + min(m0 + r, p.M - 1u) * p.ldx;
    [[unroll]] for (uint c = 0u; c < 8u; c++) wr[c] = p.w_off + min(n0 + c, p.N - 1u) * p.w_ld;

    float acc[8][8];
    [[unroll]] for (uint r = 0u; r < 8u; r++)
        [[unroll]] for (uint c = 0u; c < 8u; c++) acc[r][c] = 0.0;

    for (uint k = 0u; k < p.K; k += 8u) {
        vec4 xl[8], xh[8];
        [[unroll]] for (uint r = 0u; r < 8u; r++) x_load8(xr[r] + k, xl[r], xh[r]);
        [[unroll]] for (uint c = 0u; c < 8u; c++) {
            vec4 wl, wh;
            w_load8(wr[c] + k, p.w_soff, wl, wh);
            [[unroll]] for (uint r = 0u; r < 8u; r++) acc[r][c] += dot(xl[r], wl) + dot(xh[r], wh);
        }
    }

    [[unroll]] for (uint r = 0u; r < 8u; r++) {
        uint m = m0 + r;
        if (m >= p.M) break;
        [[unroll]] for (uint c = 0u; c < 8u; c++) {
            uint n = n0 + c;
            if (n >= p.N) break;
            float y = acc[r][c];
            if ((p.flags & HAS_BIAS) != 0u) y += B[p.b_off + n];
            y *= p.alpha;
            if ((p.flags & RELU) != 0u) y = max(y, 0.0);
            if ((p.flags & RESIDUAL) != 0u) y += R[p.r_off + m * p.ldr + n];
            Y[p.y_off + m * p.ldy + n] = y;
        }
    }
}
