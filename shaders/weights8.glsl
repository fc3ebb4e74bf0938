// Reading 8 consecutive weights (k .. k+7 of one row, k a multiple of 8)
// with as few, as wide loads as possible: on CPU drivers every load is a
// scalar loop, so the count of load instructions decides the speed.
#ifndef WIDE
#define WIDE 0
#endif
// W_TYPE: 0 f32, 1 f16, 3 q8_0, 4 q4_0 (txlm_dtype values); quantised
// chunks: shaders/quant.glsl.

#if W_TYPE == 0 && WIDE
layout(std430, binding = W_BINDING) readonly buffer Wb { u64vec4 W8[]; };
void w_load8(uint e, out vec4 lo, out vec4 hi)
{
    u64vec4 u = W8[e >> 3];
    lo = vec4(uintBitsToFloat(unpackUint2x32(u.x)), uintBitsToFloat(unpackUint2x32(u.y)));
    hi = vec4(uintBitsToFloat(unpackUint2x32(u.z)), uintBitsToFloat(unpackUint2x32(u.w)));
}
#elif W_TYPE == 0
layout(std430, binding = W_BINDING) readonly buffer Wb { vec4 W4[]; };
void w_load8(uint e, out vec4 lo, out vec4 hi) { lo = W4[e >> 2]; hi = W4[(e >> 2) + 1u]; }
#elif W_TYPE == 1
layout(std430, binding = W_BINDING) readonly buffer Wb { uvec4 W4[]; };
void w_load8(uint e, out vec4 lo, out vec4 hi)
{
    uvec4 u = W4[e >> 3];
    lo = vec4(unpackHalf2x16(u.x), unpackHalf2x16(u.y));
    hi = vec4(unpackHalf2x16(u.z), unpackHalf2x16(u.w));
}
#else
layout(std430, binding = W_BINDING) readonly buffer Wb { uint W1[]; };
#include "quant.glsl"
float w_scale8(uint e) { return q_scale(W1[q_scale_word(e)], e); }
#if W_TYPE == 3
void w_load8(uint e, out vec4 lo, out vec4 hi)
{
    float d = w_scale8(e);
    uint w = q_word(e);
    lo = i8x4(W1[w]) * d;
    hi = i8x4(W1[w + 1u]) * d;
}
#elif W_TYPE == 4
void w_load8(uint e, out vec4 lo, out vec4 hi)
{
    float d = w_scale8(e);
    uint u = W1[q_word(e)];
    lo = u4x4(u) * d;
    hi = u4x4(u >> 16) * d;
}
#else
#error unknown W_TYPE
#endif
#endif
