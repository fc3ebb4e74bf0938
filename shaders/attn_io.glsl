// The read-only inputs of the attention kernels, as vec4 rows: queries,
// keys|values, position keys and the two biases (bindings 0-4). With
// TEXEL they are uniform texel buffers (RGBA32_UINT, one vec4 a fetch),
// which CPU drivers read as one gather instead of a per-lane loop
// (tex.glsl); otherwise storage buffers.
#if TEXEL
layout(binding = 0) uniform usamplerBuffer Qt;   // [qlen, H*dh]
layout(binding = 1) uniform usamplerBuffer KVt;  // a ring of [kv_rows, 2*H*dh]: k | v (attn_push.glsl)
layout(binding = 2) uniform usamplerBuffer RKt;  // [distances, H*dh]
layout(binding = 3) uniform usamplerBuffer RWt;  // r_w_bias [H, dh]
layout(binding = 4) uniform usamplerBuffer RRt;  // r_r_bias [H, dh]
vec4 ld_q(uint i) { return uintBitsToFloat(texelFetch(Qt, int(i))); }
vec4 ld_kv(uint i) { return uintBitsToFloat(texelFetch(KVt, int(i))); }
vec4 ld_rk(uint i) { return uintBitsToFloat(texelFetch(RKt, int(i))); }
vec4 ld_rw(uint i) { return uintBitsToFloat(texelFetch(RWt, int(i))); }
vec4 ld_rr(uint i) { return uintBitsToFloat(texelFetch(RRt, int(i))); }
#else
layout(std430, binding = 0) readonly buffer Qb { vec4 Q[]; };
layout(std430, binding = 1) readonly buffer KVb { vec4 KV[]; };
layout(std430, binding = 2) readonly buffer RKb { vec4 RK[]; };
layout(std430, binding = 3) readonly buffer RWb { vec4 RWB[]; };
layout(std430, binding = 4) readonly buffer RRb { vec4 RRB[]; };
vec4 ld_q(uint i) { return Q[i]; }
vec4 ld_kv(uint i) { return KV[i]; }
vec4 ld_rk(uint i) { return RK[i]; }
vec4 ld_rw(uint i) { return RWB[i]; }
vec4 ld_rr(uint i) { return RRB[i]; }
#endif
