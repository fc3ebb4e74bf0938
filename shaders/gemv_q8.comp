#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#if SUBGROUP
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#include "common.glsl"

// Single-row matmul (gemv.comp) for q8_0 weights, one whole 32-weight
// block per step: its 32 int8 values arrive in ONE 256-bit load and its
// scale in one more, where gemv.comp spends 3 loads per 8 weights. On CPU
// drivers the count of loads sets the speed. Each invocation of 8 takes
// every 8th block of K for 32 rows. Same push constants and bindings as
// linear.comp; needs 64-bit integers and K % 32 == 0.

layout(local_size_x = 8) in;

#define ROWS 32u

layout(std430, binding = 0) readonly buffer Xb { u64vec4 X8[]; };
// binding 1 seen twice: the int8 values 32 to a load, and the f16 scales
// (quant.glsl: a superblock is 17 such loads)
layout(std430, binding = 1) readonly buffer Wq { u64vec4 WQ[]; };
layout(std430, binding = 1) readonly buffer Ws { uint WS[]; };
#define W_TYPE 3
#include "quant.glsl"
#include "linear_out.glsl"

#if !SUBGROUP
shared float partial[8][ROWS];
#endif

vec4 f32x4_lo(uint64_t a, uint64_t b) { return vec4(uintBitsToFloat(unpackUint2x32(a)), uintBitsToFloat(unpackUint2x32(b))); }

void main()
{
    uint t = gl_LocalInvocationID.x;
    uint n0 = gl_WorkGroupID.x * ROWS;
    float acc[ROWS];
    [[unroll]] for (uint r = 0u; r < ROWS; r++) acc[r] = 0.0;

    for (uint k = t * 32u; k < p.K; k += 256u) {
        vec4 x[8];
        [[unroll]] for (uint q = 0u; q < 4u; q++) {
            u64vec4 u = X8[((p.x_off + k) >> 3) + q];
            x[2u * q] = f32x4_lo(u.x, u.y);
            x[2u * q + 1u] = f32x4_lo(u.z, u.w);
        }
        // unrolled so acc[] stays in registers (an indexed array would be memory)
        [[unroll]] for (uint r = 0u; r < ROWS; r++) {
            uint e = p.w_off + min(n0 + r, p.N - 1u) * p.w_ld + k;
            u64vec4 w = WQ[q_word(e) >> 3];
            uvec2 a = unpackUint2x32(w.x), b = unpackUint2x32(w.y), c = unpackUint2x32(w.z), d = unpackUint2x32(w.w);
            float s = dot(i8x4(a.x), x[0]) + dot(i8x4(a.y), x[1]) + dot(i8x4(b.x), x[2]) + dot(i8x4(b.y), x[3]) +
                      dot(i8x4(c.x), x[4]) + dot(i8x4(c.y), x[5]) + dot(i8x4(d.x), x[6]) + dot(i8x4(d.y), x[7]);
            acc[r] += s * q_scale(WS[q_scale_word(e)], e);
        }
    }

#if SUBGROUP
    // used only where one subgroup holds the whole workgroup of 8
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
