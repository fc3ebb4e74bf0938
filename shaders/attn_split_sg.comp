#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"

// Relative attention for a few queries (generation), as attn_split.comp
// (same bindings, same partial results for attn_merge.comp), with the
// work laid out the other way round: a workgroup of 8 lanes owns one run
// of RUN keys of one query of one head, and each lane owns DH4/8 of the
// head's vec4s. Every fetch then reads one key row's contiguous bytes
// across the lanes (attn_split.comp's lanes read 8 rows 8 KiB apart), the
// per-lane arrays are small enough for registers, and a score is one
// subgroupAdd. Built for dh = 4 * DH4 with texel reads; needs the 8 lanes
// in one subgroup.

layout(local_size_x = 8) in;

#define RUN 64u   // TXLM_ATTN_RUN_SG: fewer, longer runs than attn_split (a workgroup each)
#define TEXEL 1
#include "attn_io.glsl"

layout(std430, binding = 5) writeonly buffer Pb { vec4 PART[]; };

layout(push_constant) uniform Push {
    uint qlen, mlen, klen;
    uint H, dh;
    uint rk_off;
    uint clamp_max;
    uint same_length;
    uint mem_len;
    float scale;
    uint kv_off;
} p;

#define PER (DH4 / 8u)

void main()
{
    uint part = gl_WorkGroupID.x, h = gl_WorkGroupID.y, i = gl_WorkGroupID.z, t = gl_LocalInvocationID.x;
    uint nparts = (p.klen + RUN - 1u) / RUN;
    if (part >= nparts || h >= p.H || i >= p.qlen) return;
    uint hd4 = p.H * DH4, e0 = h * DH4 + t * PER;

    uint j_hi = p.mlen + i, j_lo = 0u;
    if (p.same_length != 0u) {
        int mask_len = int(p.klen) - int(p.mem_len);
        int shift = mask_len > 0 ? int(p.qlen) - mask_len : int(p.qlen);
        j_lo = uint(max(int(i) - shift + 1, 0));
    }
    uint j0 = max(part * RUN, j_lo), j1 = min(part * RUN + RUN - 1u, j_hi);

    vec4 qw[PER], qr[PER], acc[PER];
    float m = TXLM_MASKED, l = 0.0;
    [[unroll]] for (uint e = 0u; e < PER; e++) {
        vec4 q = ld_q(i * hd4 + e0 + e);
        qw[e] = q + ld_rw(e0 + e);
        qr[e] = q + ld_rr(e0 + e);
        acc[e] = vec4(0.0);
    }
    for (uint j = j0; j <= j1; j++) {
        uint kb = (p.kv_off >> 2) + j * 2u * hd4 + e0;
        uint rb = (p.rk_off >> 2) + min(p.mlen + i - j, p.clamp_max) * hd4 + e0;
        float s = 0.0;
        [[unroll]] for (uint e = 0u; e < PER; e++) s += dot(qw[e], ld_kv(kb + e)) + dot(qr[e], ld_rk(rb + e));
        s = subgroupAdd(s) * p.scale;
        float m_new = max(m, s);
        float corr = exp(m - m_new), w = exp(s - m_new);
        l = l * corr + w;
        [[unroll]] for (uint e = 0u; e < PER; e++) acc[e] = acc[e] * corr + w * ld_kv(kb + hd4 + e);
        m = m_new;
    }
    uint pb = ((h * p.qlen + i) * nparts + part) * (DH4 + 1u);
    if (t == 0u) PART[pb] = vec4(m, l, 0.0, 0.0);
    [[unroll]] for (uint e = 0u; e < PER; e++) PART[pb + 1u + t * PER + e] = acc[e];
}
