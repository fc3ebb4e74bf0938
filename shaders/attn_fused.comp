#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

// Relative attention for one layer in one pass (flash-attention style):
// each invocation owns one query i of one head h, walks the keys it may
// see, and keeps a running (online) softmax and the weighted sum of
// values, so the [qlen, klen] score matrix never exists in memory:
//   s_j = ((q_i + u)·k_j + (q_i + v)·rk[min(mlen + i - j, clamp)]) / sqrt(dh)
// The rel-shift is the index mlen + i - j. Needs dh % 4 == 0 and dh <= 256.
// q, u, v and the accumulator live in private arrays indexed by a loop
// counter shared by all lanes, which CPU drivers keep as plain vectors.

layout(local_size_x = 8) in;

#define TEXEL 0
#include "attn_push.glsl"
#include "attn_io.glsl"
layout(std430, binding = 5) writeonly buffer Ob { vec4 O[]; };    // [rows, H*dh] from row q0 of the stream

void main()
{
    attn_begin();
    uint i = gl_GlobalInvocationID.x;
    uint h = gl_GlobalInvocationID.y;
    if (i >= p.qlen || h >= p.H) return;
    uint n4 = p.dh / 4u, hd4 = p.H * n4;

    vec4 qw[64], qr[64], acc[64];
    for (uint e = 0u; e < n4; e++) {
        vec4 q = ld_q(i * hd4 + h * n4 + e);
        qw[e] = q + ld_rw(h * n4 + e);
        qr[e] = q + ld_rr(h * n4 + e);
        acc[e] = vec4(0.0);
    }

    // keys this query may see: causal upper bound, same_length lower bound
    uint j_hi = p.mlen + i;
    uint j_lo = 0u;
    if (p.same_length != 0u) {
        int mask_len = int(p.klen) - int(p.mem_len);
        int shift = mask_len > 0 ? int(p.qlen) - mask_len : int(p.qlen);
        int lo = int(i) - shift + 1;
        j_lo = uint(max(lo, 0));
    }

    // same_length without memory can hide every key; the reference's
    // softmax over equal lowest scores is then uniform over all of them
    bool none = j_lo > j_hi;
    if (none) {
        j_lo = 0u;
        j_hi = p.klen - 1u;
    }

    float m = TXLM_MASKED, l = 0.0;
    for (uint j = j_lo; j <= j_hi; j++) {
        uint kb = kv_row(j) * 2u * hd4 + h * n4;
        float s = 0.0;
        if (!none) {
            uint rb = (p.rk_off >> 2) + min(p.mlen + i - j, p.clamp_max) * hd4 + h * n4;
            for (uint e = 0u; e < n4; e++) s += dot(qw[e], ld_kv(kb + e)) + dot(qr[e], ld_rk(rb + e));
            s *= p.scale;
        }
        float m_new = max(m, s);
        float corr = exp(m - m_new), w = exp(s - m_new);
        l = l * corr + w;
        for (uint e = 0u; e < n4; e++) acc[e] = acc[e] * corr + w * ld_kv(kb + hd4 + e);
        m = m_new;
    }
    float inv = 1.0 / l;
    for (uint e = 0u; e < n4; e++) O[q_base + i * hd4 + h * n4 + e] = acc[e] * inv;
}
