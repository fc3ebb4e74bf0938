#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

// Relative attention for a few queries (generation feeds one token), split
// over the keys. The fused kernel gives each query one lane, which leaves
// H lanes busy for one token; here each invocation owns a run of RUN keys
// of one query of one head and keeps the online softmax of that run:
// (max score m, sum of exp(s - m), sum of exp(s - m) * v). attn_merge.comp
// combines the runs. Scores as in attn_fused.comp; same bindings except
// binding 5: PART [H, qlen, nparts, 1 + dh/4] vec4s, (m, l, 0, 0) then the
// weighted values. Needs dh % 4 == 0 and dh <= 256.

layout(local_size_x = 8) in;

#define RUN 16u

#include "attn_push.glsl"
#include "attn_io.glsl"

// DH4 (set per SPIR-V variant): dh/4 known at build time, so the loops
// over a head's elements unroll and the per-query arrays stay in
// registers; without it they are indexed at run time, which CPU drivers
// turn into per-lane memory accesses. 0: dh from the push constants.
#ifndef DH4
#define DH4 0
#endif
#if DH4
#define N4 DH4
#define ARR DH4
#define EACH [[unroll]]
#else
#define N4 n4
#define ARR 64
#define EACH
#endif
layout(std430, binding = 5) writeonly buffer Pb { vec4 PART[]; };

void main()
{
    attn_begin();
    uint part = gl_GlobalInvocationID.x;
    uint h = gl_GlobalInvocationID.y;
    uint i = wg_z;
    uint nparts = (p.klen + RUN - 1u) / RUN;
    if (part >= nparts || h >= p.H || i >= p.qlen) return;
    uint n4 = DH4 != 0 ? uint(DH4) : p.dh / 4u, hd4 = p.H * n4;

    // keys this query may see (causal upper bound, same_length lower bound), within this run
    uint j_hi = p.mlen + i;
    uint j_lo = 0u;
    if (p.same_length != 0u) {
        int mask_len = int(p.klen) - int(p.mem_len);
        int shift = mask_len > 0 ? int(p.qlen) - mask_len : int(p.qlen);
        j_lo = uint(max(int(i) - shift + 1, 0));
    }
    uint j0 = max(part * RUN, j_lo), j1 = min(part * RUN + RUN - 1u, j_hi);

    vec4 qw[ARR], qr[ARR], acc[ARR];
    float m = TXLM_MASKED, l = 0.0;
    EACH for (uint e = 0u; e < N4; e++) acc[e] = vec4(0.0);
    if (j0 <= j1) {
        EACH for (uint e = 0u; e < N4; e++) {
            vec4 q = ld_q(i * hd4 + h * n4 + e);
            qw[e] = q + ld_rw(h * n4 + e);
            qr[e] = q + ld_rr(h * n4 + e);
        }
        for (uint j = j0; j <= j1; j++) {
            uint kb = kv_row(j) * 2u * hd4 + h * n4;
            uint rb = (p.rk_off >> 2) + min(p.mlen + i - j, p.clamp_max) * hd4 + h * n4;
            float s = 0.0;
            EACH for (uint e = 0u; e < N4; e++) s += dot(qw[e], ld_kv(kb + e)) + dot(qr[e], ld_rk(rb + e));
            s *= p.scale;
            float m_new = max(m, s);
            float corr = exp(m - m_new), w = exp(s - m_new);
            l = l * corr + w;
            EACH for (uint e = 0u; e < N4; e++) acc[e] = acc[e] * corr + w * ld_kv(kb + hd4 + e);
            m = m_new;
        }
    }
    uint pb = part0 + ((h * p.qlen + i) * nparts + part) * (n4 + 1u);
    PART[pb] = vec4(m, l, 0.0, 0.0);
    EACH for (uint e = 0u; e < N4; e++) PART[pb + 1u + e] = acc[e];
}
