#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

// Relative attention in one pass (online softmax, as attn_fused.comp) for
// TWO consecutive queries of one head per invocation: every key and value
// row loaded serves both, and so does every position row: query i0 + 1
// at key j + 1 has the distance query i0 had at key j, so the row is kept
// for one step. On CPU drivers buffer loads set the speed: this halves them.
// Private arrays are 1-D and indexed only by loop counters shared by all
// lanes, which CPU drivers keep as plain vectors. Needs dh % 4 == 0 and
// dh <= 256.

layout(local_size_x = 8) in;

#include "attn_push.glsl"
#include "attn_io.glsl"

// SHUFFLE (dh/4 a multiple of 8; a workgroup of 8 is one subgroup): the 8
// lanes are 16 consecutive queries of one head and read the same key and
// value rows; instead of each lane fetching all of a row (on CPU drivers a
// gather per vec4 even at identical addresses), lane l fetches its vec4s
// l, l+8, ... and the others take them by shuffle. All lanes then walk the
// same keys (the union of their ranges), masking what their queries may
// not see.
#ifndef SHUFFLE
#define SHUFFLE 0
#endif
#if SHUFFLE
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif

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
#if SHUFFLE && (DH4 == 0 || DH4 % 8 != 0)
#error SHUFFLE needs dh/4 a multiple of 8
#endif
layout(std430, binding = 5) writeonly buffer Ob { vec4 O[]; };    // [rows, H*dh] from row q0 of the stream

// keys query i may see: [lo, mlen + i] (same_length raises lo)
uint first_key(uint i)
{
    if (p.same_length == 0u) return 0u;
    int mask_len = int(p.klen) - int(p.mem_len);
    int shift = mask_len > 0 ? int(p.qlen) - mask_len : int(p.qlen);
    return uint(max(int(i) - shift + 1, 0));
}

void main()
{
    attn_begin();
    // a stream shorter than the dispatch's longest: its workgroups past its queries
    if (gl_WorkGroupID.x * 16u >= p.qlen) return;
    uint i0 = gl_GlobalInvocationID.x * 2u;
    uint h = gl_GlobalInvocationID.y;
#if SHUFFLE
    // queries by subgroup lane, as the shuffles that pass rows along number
    // them; lanes past the last query fetch for the others, store nothing
    uint lane = gl_SubgroupInvocationID;
    i0 = (gl_WorkGroupID.x * 8u + lane) * 2u;
    bool valid = i0 < p.qlen;
    i0 = min(i0, p.qlen - 1u);
#else
    if (i0 >= p.qlen || h >= p.H) return;
#endif
    uint n4 = DH4 != 0 ? uint(DH4) : p.dh / 4u, hd4 = p.H * n4;
    bool two = i0 + 1u < p.qlen;
    uint i1 = two ? i0 + 1u : i0;

    vec4 qw0[ARR], qr0[ARR], acc0[ARR], qw1[ARR], qr1[ARR], acc1[ARR], prev[ARR];
    EACH for (uint e = 0u; e < N4; e++) {
        vec4 q = ld_q(i0 * hd4 + h * n4 + e), q1 = ld_q(i1 * hd4 + h * n4 + e);
        vec4 u = ld_rw(h * n4 + e), v = ld_rr(h * n4 + e);
        qw0[e] = q + u;
        qr0[e] = q + v;
        qw1[e] = q1 + u;
        qr1[e] = q1 + v;
        acc0[e] = vec4(0.0);
        acc1[e] = vec4(0.0);
    }

    // keys each query may see: causal upper bound, same_length lower bound
    uint hi0 = p.mlen + i0, hi1 = p.mlen + i1;
    uint lo0 = first_key(i0), lo1 = first_key(i1);
#if SHUFFLE
    // every lane walks the keys of the workgroup's 16 queries
    uint q_first = gl_WorkGroupID.x * 16u;
    uint j_lo = first_key(q_first), j_hi = p.mlen + min(q_first + 15u, p.qlen - 1u);
#else
    uint j_lo = lo0, j_hi = hi1;
#endif

    // the position row of query i1 at the first key
    uint rb1 = (p.rk_off >> 2) + min(hi1 - j_lo, p.clamp_max) * hd4 + h * n4;
    EACH for (uint e = 0u; e < N4; e++) prev[e] = ld_rk(rb1 + e);
#if SHUFFLE
    // Position rows move along the lanes: lane l's query i0 is 2 past lane
    // l-1's, so at key j it needs the row lane l-1 needed at key j - 2.
    // Each lane keeps its rows of the last two keys (prev, prev2); lane l
    // takes prev2 of lane l-1 by shuffle, and only the row of lane 0 is
    // new at each key: the 8 lanes fetch it together (2 of its 16 vec4
    // each). 16 gathers a key become 2. prev2 starts at key j_lo - 2.
    vec4 prev2[ARR];
    uint rb2 = (p.rk_off >> 2) + min(hi1 + 1u - j_lo, p.clamp_max) * hd4 + h * n4;
    EACH for (uint e = 0u; e < N4; e++) prev2[e] = ld_rk(rb2 + e);
    uint hq = p.mlen + q_first, from = (lane + 7u) & 7u; // lane 0's i0 is q_first
#endif

    float m0 = TXLM_MASKED, l0 = 0.0, m1 = TXLM_MASKED, l1 = 0.0;
    for (uint j = j_lo; j <= j_hi; j++) {
        uint kb = kv_row(j) * 2u * hd4 + h * n4;
        bool in0 = j <= hi0 && j >= lo0, in1 = j <= hi1 && j >= lo1;
        float s0 = 0.0, s1 = 0.0;
#if SHUFFLE
        uint rbn = (p.rk_off >> 2) + min(j <= hq ? hq - j : 0u, p.clamp_max) * hd4 + h * n4;
        vec4 kf[N4 / 8], vf[N4 / 8], rf[N4 / 8];
        EACH for (uint f = 0u; f < N4 / 8; f++) {
            kf[f] = ld_kv(kb + lane + 8u * f);
            vf[f] = ld_kv(kb + hd4 + lane + 8u * f);
            rf[f] = ld_rk(rbn + lane + 8u * f);
        }
#else
        // query i0's row, kept for i1 at the next key even where i0 is masked
        uint rb0 = (p.rk_off >> 2) + min(j <= hi0 ? hi0 - j : 0u, p.clamp_max) * hd4 + h * n4;
#endif
        EACH for (uint e = 0u; e < N4; e++) {
#if SHUFFLE
            vec4 k = subgroupShuffle(kf[e / 8u], e % 8u);
            vec4 r_new = subgroupShuffle(rf[e / 8u], e % 8u), r_moved = subgroupShuffle(prev2[e], from);
            vec4 r = lane == 0u ? r_new : r_moved;
#else
            vec4 k = ld_kv(kb + e), r = ld_rk(rb0 + e);
#endif
            s0 += dot(qw0[e], k) + dot(qr0[e], r);
            s1 += dot(qw1[e], k) + dot(qr1[e], prev[e]);
#if SHUFFLE
            prev2[e] = prev[e];
#endif
            prev[e] = r;
        }
        s0 = in0 ? s0 * p.scale : TXLM_MASKED;
        s1 = in1 ? s1 * p.scale : TXLM_MASKED;
        float n0 = max(m0, s0), n1 = max(m1, s1);
        float c0 = exp(m0 - n0), w0 = in0 ? exp(s0 - n0) : 0.0;
        float c1 = exp(m1 - n1), w1 = in1 ? exp(s1 - n1) : 0.0;
        l0 = l0 * c0 + w0;
        l1 = l1 * c1 + w1;
        m0 = n0;
        m1 = n1;
        EACH for (uint e = 0u; e < N4; e++) {
#if SHUFFLE
            vec4 v = subgroupShuffle(vf[e / 8u], e % 8u);
#else
            vec4 v = ld_kv(kb + hd4 + e);
#endif
            acc0[e] = acc0[e] * c0 + w0 * v;
            acc1[e] = acc1[e] * c1 + w1 * v;
        }
    }
#if SHUFFLE
    if (!valid) return;
#endif
    float inv0 = 1.0 / l0, inv1 = 1.0 / l1;
    EACH for (uint e = 0u; e < N4; e++) {
        O[q_base + i0 * hd4 + h * n4 + e] = acc0[e] * inv0;
        if (two) O[q_base + i1 * hd4 + h * n4 + e] = acc1[e] * inv1;
    }
}
