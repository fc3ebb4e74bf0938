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
#include "linear_out.glsl"

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
            w_load8(wr[c] + k, wl, wh);
            [[unroll]] for (uint r = 0u; r < 8u; r++) acc[r][c] += dot(xl[r], wl) + dot(xh[r], wh);
        }
    }

    [[unroll]] for (uint r = 0u; r < 8u; r++) {
        uint m = m0 + r;
        if (m >= p.M) break;
        [[unroll]] for (uint c = 0u; c < 8u; c++) {
            uint n = n0 + c;
            if (n >= p.N) break;
            store(m, n, acc[r][c]);
        }
    }
}
