// Reading weight element i (counted from the start of the bound chunk) as
// float, for every stored dtype. W_TYPE is set per SPIR-V variant at build
// time: 0 f32, 1 f16, 3 q8_0, 4 q4_0 (the txlm_dtype values).
// Quantised chunks: shaders/quant.glsl.
// f16 and scales are read as packed uints + unpackHalf2x16: on lavapipe
// that is much faster than 16-bit storage, and it needs no optional feature.

#ifndef W_TYPE
#define W_TYPE 0
#endif

#if W_TYPE == 0
layout(std430, binding = W_BINDING) readonly buffer Wb { float W[]; };
float w_at(uint i) { return W[i]; }
#else
layout(std430, binding = W_BINDING) readonly buffer Wb { uint W[]; };

#include "quant.glsl"

#if W_TYPE == 1
float w_at(uint i)
{
    vec2 v = unpackHalf2x16(W[i >> 1]);
    return (i & 1u) != 0u ? v.y : v.x;
}
#elif W_TYPE == 3
float w_at(uint i)
{
    int q = bitfieldExtract(int(W[q_word(i)]), int((i & 3u) * 8u), 8);
    return float(q) * q_scale(W[q_scale_word(i)], i);
}
#elif W_TYPE == 4
float w_at(uint i)
{
    uint q = bitfieldExtract(W[q_word(i)], int((i & 7u) * 4u), 4);
    return (float(q) - 8.0) * q_scale(W[q_scale_word(i)], i);
}
#else
#error unknown W_TYPE
#endif
#endif
