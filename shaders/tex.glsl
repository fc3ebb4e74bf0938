// Activations (binding 0) and weights (binding 1) read through uniform
// texel buffers: RGBA32_UINT views, 16 bytes a fetch. On CPU drivers a
// storage-buffer load runs lane by lane with a branch per lane, a texel
// fetch is one gather (docs/performance-history.md, "Texel-buffer
// kernels"), so these kernels exist for
// them. Element offsets passed in are multiples of 4 (x) or 16 (w16/w4's e16).
// W_TYPE: 0 f32, 1 f16, 3 q8_0, 4 q4_0; quantised chunks: quant.glsl
// (a superblock is whole texels, and so is a 16-element step).

layout(binding = 0) uniform usamplerBuffer Xt;
layout(binding = 1) uniform usamplerBuffer Wt;

vec4 x_load4(uint e) { return uintBitsToFloat(texelFetch(Xt, int(e >> 2))); }

#if W_TYPE == 3 || W_TYPE == 4
#include "quant.glsl"
float w_scale(uint e)
{
    uint u = q_scale_word(e);
    return q_scale(texelFetch(Wt, int(u >> 2))[u & 3u], e);
}
#endif

// Weights e16 + 4j .. e16 + 4j + 3 (e16 a multiple of 16, j in 0..3).
vec4 w_load4(uint e16, uint j)
{
#if W_TYPE == 0
    return uintBitsToFloat(texelFetch(Wt, int((e16 >> 2) + j)));
#elif W_TYPE == 1
    uvec4 t = texelFetch(Wt, int((e16 >> 3) + (j >> 1)));
    return (j & 1u) != 0u ? vec4(unpackHalf2x16(t.z), unpackHalf2x16(t.w)) : vec4(unpackHalf2x16(t.x), unpackHalf2x16(t.y));
#elif W_TYPE == 3
    return i8x4(texelFetch(Wt, int(q_word(e16) >> 2))[j]) * w_scale(e16);
#elif W_TYPE == 4
    uint w = q_word(e16), u = texelFetch(Wt, int(w >> 2))[(w & 3u) + (j >> 1)];
    return u4x4((j & 1u) != 0u ? u >> 16 : u) * w_scale(e16);
#else
#error unknown W_TYPE
#endif
}

#if W_TYPE != 3 // q8_0 single rows read whole blocks (gemv_tex.comp)
// Weights e16 .. e16 + 15 with as few fetches as the dtype allows.
void w_load16(uint e16, out vec4 w[4])
{
#if W_TYPE == 0
    [[unroll]] for (uint j = 0u; j < 4u; j++) w[j] = uintBitsToFloat(texelFetch(Wt, int((e16 >> 2) + j)));
#elif W_TYPE == 1
    uvec4 a = texelFetch(Wt, int(e16 >> 3)), b = texelFetch(Wt, int(e16 >> 3) + 1);
    w[0] = vec4(unpackHalf2x16(a.x), unpackHalf2x16(a.y));
    w[1] = vec4(unpackHalf2x16(a.z), unpackHalf2x16(a.w));
    w[2] = vec4(unpackHalf2x16(b.x), unpackHalf2x16(b.y));
    w[3] = vec4(unpackHalf2x16(b.z), unpackHalf2x16(b.w));
#elif W_TYPE == 4
    uint q = q_word(e16);
    uvec4 t = texelFetch(Wt, int(q >> 2));
    float d = w_scale(e16);
    uvec2 u = (q & 3u) != 0u ? t.zw : t.xy;
    w[0] = u4x4(u.x) * d;
    w[1] = u4x4(u.x >> 16) * d;
    w[2] = u4x4(u.y) * d;
    w[3] = u4x4(u.y >> 16) * d;
#endif
}
#endif
