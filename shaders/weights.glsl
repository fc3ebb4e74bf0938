// Reading weight element i (counted from the start of the bound chunk) as
// float, for every stored dtype. W_TYPE is set per SPIR-V variant at build
// time: 0 f32, 1 f16, 3 q8_0, 4 q4_0 (the txlm_dtype values).
// Quantised chunks hold all their 8- or 4-bit values first, then one f16
// scale per 32 values starting at uint index `soff` (docs/format.md).
// f16 and scales are read as packed uints + unpackHalf2x16: on lavapipe
// that is much faster than 16-bit storage, and it needs no optional feature.

#ifndef W_TYPE
#define W_TYPE 0
#endif

#if W_TYPE == 0
layout(std430, binding = W_BINDING) readonly buffer Wb { float W[]; };
float w_at(uint i, uint soff) { return W[i]; }
#else
layout(std430, binding = W_BINDING) readonly buffer Wb { uint W[]; };

float w_scale(uint blk, uint soff)
{
    vec2 v = unpackHalf2x16(W[soff + (blk >> 1)]);
    return (blk & 1u) != 0u ? v.y : v.x;
}

#if W_TYPE == 1
float w_at(uint i, uint soff)
{
    vec2 v = unpackHalf2x16(W[i >> 1]);
    return (i & 1u) != 0u ? v.y : v.x;
}
#elif W_TYPE == 3
float w_at(uint i, uint soff)
{
    int q = bitfieldExtract(int(W[i >> 2]), int((i & 3u) * 8u), 8);
    return float(q) * w_scale(i >> 5, soff);
}
#elif W_TYPE == 4
float w_at(uint i, uint soff)
{
    uint q = bitfieldExtract(W[i >> 3], int((i & 7u) * 4u), 4);
    return (float(q) - 8.0) * w_scale(i >> 5, soff);
}
#else
#error unknown W_TYPE
#endif
#endif
