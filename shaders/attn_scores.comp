#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

// Relative-attention scores for one layer:
//   S[h][i][j] = ((q_i + u)·k_j + (q_i + v)·rk[dist]) * scale,
// dist = mlen + i - j (the rel-shift, done by index), clamped to
// clamp_max; masked entries (causal, same_length) get TXLM_MASKED.
// rk is the layer's table of position keys, one row per distance.

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Qb { float Q[]; };     // [rows, H*dh]: the stream's from row q0
layout(std430, binding = 1) readonly buffer KVb { float KV[]; };   // a ring of [kv_rows, 2*H*dh]: k | v (attn_push.glsl)
layout(std430, binding = 2) readonly buffer RKb { float RK[]; };   // [distances, H*dh]
layout(std430, binding = 3) readonly buffer RWb { float RWB[]; };  // r_w_bias [H, dh]
layout(std430, binding = 4) readonly buffer RRb { float RRB[]; };  // r_r_bias [H, dh]
layout(std430, binding = 5) writeonly buffer Sb { float S[]; };    // [H, qlen, klen]

#include "attn_push.glsl"

bool masked(uint i, uint j)
{
    if (j > p.mlen + i) return true;
    if (p.same_length != 0u) {
        int mask_len = int(p.klen) - int(p.mem_len);
        int shift = mask_len > 0 ? int(p.qlen) - mask_len : int(p.qlen);
        if (int(j) <= int(i) - shift) return true;
    }
    return false;
}

void main()
{
    attn_begin();
    uint j = gl_GlobalInvocationID.x;
    uint i = gl_GlobalInvocationID.y;
    uint h = gl_GlobalInvocationID.z;
    if (j >= p.klen || i >= p.qlen || h >= p.H) return;
    uint out_idx = (h * p.qlen + i) * p.klen + j;
    if (masked(i, j)) {
        S[out_idx] = TXLM_MASKED;
        return;
    }
    uint hd = p.H * p.dh;
    uint qb = (q0 + i) * hd + h * p.dh;
    uint kb = kv_row(j) * 2u * hd + h * p.dh;
    uint dist = min(p.mlen + i - j, p.clamp_max);
    uint rb = p.rk_off + dist * hd + h * p.dh;
    float ac = 0.0, bd = 0.0;
    for (uint d = 0u; d < p.dh; d++) {
        float q = Q[qb + d];
        ac += (q + RWB[h * p.dh + d]) * KV[kb + d];
        bd += (q + RRB[h * p.dh + d]) * RK[rb + d];
    }
    S[out_idx] = (ac + bd) * p.scale;
}
