#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#if WIDE
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif
#if SUBGROUP
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#include "common.glsl"

// y = alpha * (W · x + b) (+ReLU) (+r) for ONE row x (a generated token):
// a pass over the weights at memory speed. A workgroup of 8 invocations
// owns 32 rows; each invocation sums a strided slice of K for all 32 rows
// (x loaded once per 32 rows), then the 8 partial sums of each row are
// added with subgroupAdd (SUBGROUP) or through shared memory.
// Same push constants and bindings as linear.comp; needs K % 8 == 0.

layout(local_size_x = 8) in;

#define ROWS 32u
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

#if !SUBGROUP
shared float partial[8][ROWS];
#endif

void main()
{
    uint t = gl_LocalInvocationID.x;
    uint n0 = gl_WorkGroupID.x * ROWS;
    float acc[ROWS];
    [[unroll]] for (uint r = 0u; r < ROWS; r++) acc[r] = 0.0;

    for (uint k = t * 8u; k < p.K; k += 64u) {
        vec4 xl, xh;
        x_load8(p.x_off + k, xl, xh);
        // unrolled so acc[] stays in registers (an indexed array would be memory)
        [[unroll]] for (uint r = 0u; r < ROWS; r++) {
            vec4 wl, wh;
            w_load8(p.w_off + min(n0 + r, p.N - 1u) * p.w_ld + k, p.w_soff, wl, wh);
            acc[r] += dot(xl, wl) + dot(xh, wh);
        }
    }

#if SUBGROUP
    // the 8 invocations may span several subgroups on some devices: only
    // use the subgroup sum when one subgroup holds the whole workgroup
    [[unroll]] for (uint r = 0u; r < ROWS; r++) acc[r] = subgroupAdd(acc[r]);
    if (t != 0u) return;
    [[unroll]] for (uint r = 0u; r < ROWS; r++) {
        uint n = n0 + r;
        float y = acc[r];
#else
    [[unroll]] for (uint r = 0u; r < ROWS; r++) partial[t][r] = acc[r];
    barrier();
    for (uint r = t; r < ROWS; r += 8u) {
        uint n = n0 + r;
        float y = 0.0;
        for (uint i = 0u; i < 8u; i++) y += partial[i][r];
#endif
        if (n >= p.N) break;
        if ((p.flags & HAS_BIAS) != 0u) y += B[p.b_off + n];
        y *= p.alpha;
        if ((p.flags & RELU) != 0u) y = max(y, 0.0);
        if ((p.flags & RESIDUAL) != 0u) y += R[p.r_off + n];
        Y[p.y_off + n] = y;
    }
}
