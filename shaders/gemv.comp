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
#include "linear_out.glsl"

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
            w_load8(p.w_off + min(n0 + r, p.N - 1u) * p.w_ld + k, wl, wh);
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
        store(0u, n, y);
    }
}
