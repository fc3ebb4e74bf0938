// The read-only inputs of the attention kernels, as vec4 rows: queries,
// keys|values, position keys and the two biases (bindings 0-4). With
// TEXEL they are uniform texel buffers (RGBA32_UINT, one vec4 a fetch),
// which CPU drivers read as one gather instead of a per-lane loop
// (tex.glsl); otherwise storage buffers. Include after attn_push.glsl.
//
// STREAMS (the manifest's N/8 variants): binding 1 has a slot per stream
// of the dispatch, slot 0 at binding 1 and slot s at binding
// TXLM_SLOT_BINDING + s - 1 (contract.h), chosen by the stream's slot.
// Separate bindings and a switch, not an array: indexing an array of texel buffers by a
// workgroup's value is an optional feature that CPU drivers lack, and
// the switch is uniform over the workgroup, one branch a load.
#ifndef STREAMS
#define STREAMS 1
#endif
#if STREAMS != 1 && STREAMS != 8
#error STREAMS is 1 or 8
#endif
#if TEXEL
layout(binding = 0) uniform usamplerBuffer Qt;   // [rows, H*dh] from row q0 of the stream
layout(binding = 1) uniform usamplerBuffer KVt;  // a ring of [kv_rows, 2*H*dh]: k | v (attn_push.glsl)
layout(binding = 2) uniform usamplerBuffer RKt;  // [distances, H*dh]
layout(binding = 3) uniform usamplerBuffer RWt;  // r_w_bias [H, dh]
layout(binding = 4) uniform usamplerBuffer RRt;  // r_r_bias [H, dh]
#define KV_SLOT(s) layout(binding = TXLM_SLOT_BINDING - 1 + s) uniform usamplerBuffer KVt##s;
#define KV_LOAD(s, i) texelFetch(KVt##s, int(i))
#define KV_LOAD0(i) texelFetch(KVt, int(i))
vec4 ld_q(uint i) { return uintBitsToFloat(texelFetch(Qt, int(q_base + i))); }
vec4 ld_rk(uint i) { return uintBitsToFloat(texelFetch(RKt, int(i))); }
vec4 ld_rw(uint i) { return uintBitsToFloat(texelFetch(RWt, int(i))); }
vec4 ld_rr(uint i) { return uintBitsToFloat(texelFetch(RRt, int(i))); }
#else
layout(std430, binding = 0) readonly buffer Qb { uvec4 Q[]; };
layout(std430, binding = 1) readonly buffer KVb { uvec4 KV[]; };
layout(std430, binding = 2) readonly buffer RKb { vec4 RK[]; };
layout(std430, binding = 3) readonly buffer RWb { vec4 RWB[]; };
layout(std430, binding = 4) readonly buffer RRb { vec4 RRB[]; };
#define KV_SLOT(s) layout(std430, binding = TXLM_SLOT_BINDING - 1 + s) readonly buffer KVb##s { uvec4 KV##s[]; };
#define KV_LOAD(s, i) KV##s[i]
#define KV_LOAD0(i) KV[i]
vec4 ld_q(uint i) { return uintBitsToFloat(Q[q_base + i]); }
vec4 ld_rk(uint i) { return RK[i]; }
vec4 ld_rw(uint i) { return RWB[i]; }
vec4 ld_rr(uint i) { return RRB[i]; }
#endif
#if STREAMS == 8
KV_SLOT(1) KV_SLOT(2) KV_SLOT(3) KV_SLOT(4) KV_SLOT(5) KV_SLOT(6) KV_SLOT(7)
uvec4 kv_load(uint i)
{
    switch (slot) {
    case 1u: return KV_LOAD(1, i);
    case 2u: return KV_LOAD(2, i);
    case 3u: return KV_LOAD(3, i);
    case 4u: return KV_LOAD(4, i);
    case 5u: return KV_LOAD(5, i);
    case 6u: return KV_LOAD(6, i);
    case 7u: return KV_LOAD(7, i);
    default: return KV_LOAD0(i);
    }
}
#else
uvec4 kv_load(uint i) { return KV_LOAD0(i); }
#endif
vec4 ld_kv(uint i) { return uintBitsToFloat(kv_load(i)); }
