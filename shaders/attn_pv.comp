#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

// O[i][h*dh + d] = sum_j P[h][i][j] * v[j][h*dh + d]  (heads concatenated).

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Pb { float P[]; };     // [H, qlen, klen]
layout(std430, binding = 1) readonly buffer KVb { float KV[]; };   // a ring of [kv_rows, 2*H*dh]: k | v (attn_push.glsl)
layout(std430, binding = 2) writeonly buffer Ob { float O[]; };    // [rows, H*dh]: the stream's from row q0

#include "attn_push.glsl"

void main()
{
    attn_begin();
    uint c = gl_GlobalInvocationID.x;   // h*dh + d
    uint i = gl_GlobalInvocationID.y;
    uint hd = p.H * p.dh;
    if (c >= hd || i >= p.qlen) return;
    uint h = c / p.dh;
    uint pb = (h * p.qlen + i) * p.klen;
    float acc = 0.0;
    for (uint j = 0u; j < p.klen; j++) acc += P[pb + j] * KV[kv_row(j) * 2u * hd + hd + c];
    O[(q0 + i) * hd + c] = acc;
}
