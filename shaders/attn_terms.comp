#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

// The four terms of the relative-attention score, unscaled, for analysis
// (Dai et al. 2019, section 3.3): (a) q·k, (b) q·rk[dist], (c) u·k,
// (d) v·rk[dist]. Masked entries are 0. Only run when a caller asks to
// capture attention, so the normal forward pass does not pay for it.

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Qb { float Q[]; };     // [rows, H*dh]: the stream's from row q0
layout(std430, binding = 1) readonly buffer KVb { float KV[]; };   // a ring of [kv_rows, 2*H*dh]: k | v (attn_push.glsl)
layout(std430, binding = 2) readonly buffer RKb { float RK[]; };
layout(std430, binding = 3) readonly buffer RWb { float RWB[]; };
layout(std430, binding = 4) readonly buffer RRb { float RRB[]; };
layout(std430, binding = 5) writeonly buffer Tb { float T[]; };    // [4, H, qlen, klen]

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
    uint plane = p.H * p.qlen * p.klen;
    uint idx = (h * p.qlen + i) * p.klen + j;
    float a = 0.0, b = 0.0, c = 0.0, d = 0.0;
    if (!masked(i, j)) {
        uint hd = p.H * p.dh;
        uint qb = (q0 + i) * hd + h * p.dh;
        uint kb = kv_row(j) * 2u * hd + h * p.dh;
        uint rb = p.rk_off + min(p.mlen + i - j, p.clamp_max) * hd + h * p.dh;
        for (uint e = 0u; e < p.dh; e++) {
            float q = Q[qb + e], k = KV[kb + e], r = RK[rb + e];
            a += q * k;
            b += q * r;
            c += RWB[h * p.dh + e] * k;
            d += RRB[h * p.dh + e] * r;
        }
    }
    T[idx] = a;
    T[plane + idx] = b;
    T[2u * plane + idx] = c;
    T[3u * plane + idx] = d;
}
