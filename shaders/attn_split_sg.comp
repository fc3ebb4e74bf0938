#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_basic : require
#include "common.glsl"

// Relative attention for a few queries (generation), as attn_split.comp
// (same bindings, same partial results for attn_merge.comp), with the
// work laid out the other way round: a workgroup of 8 lanes owns one run
// of RUN keys of one query for HG heads side by side, LPH = 8 / HG lanes
// a head, each lane DH4 / LPH of its head's vec4s. A key row's HG heads
// are contiguous (HG x 256 bytes for dh = 64), so the lanes walk memory in
// spans the CPU's prefetchers follow: with one head a workgroup (spans of
// 256 bytes, rows 8 KiB apart) every key was a miss, and 640 keys x 16
// heads took 1.65 ms a layer against 1.0 ms with HG = 4. The head groups
// are the grid's x, so the workgroups that share a key row's 4 KiB of
// keys run one after another while those bytes are in cache: 0.74-0.78 ms.
// A score is summed over its head's lanes by xor shuffles. Built for
// dh = 4 * DH4 (16 or 12: a lane's share of a head is DH4 / 2 vec4s) with
// texel reads; needs the 8 lanes in one subgroup.

layout(local_size_x = 8) in;

#define RUN 64u   // TXLM_ATTN_RUN_SG: fewer, longer runs than attn_split (a workgroup each)
#define TEXEL 1
#include "attn_push.glsl"
#include "attn_io.glsl"

layout(std430, binding = 5) coherent buffer Pb { vec4 PART[]; };  // read back by the merging workgroup
// With p.merge, the last run of a head group and query to finish merges
// them all (what attn_merge.comp does, in its order) into O; DONE counts
// the finished runs, one word per head group and query after word 0
// (engine/ops.h, TXLM_SYNC_WORDS), and is put back to 0.
layout(std430, binding = 6) writeonly buffer Ob { vec4 O[]; };   // [qlen, H*dh]
layout(std430, binding = 7) coherent buffer Cb { uint DONE[]; };

#define HG 4       // TXLM_ATTN_SG_HEADS: heads a workgroup (1, 2, 4 or 8)
#if HG == 1
#define LPH 8u
#elif HG == 2
#define LPH 4u
#elif HG == 4
#define LPH 2u
#else
#define LPH 1u
#endif
#define PER (DH4 / LPH)
#define CHUNK 8u

// the sum of d over the LPH lanes of a head
float head_sum(float d)
{
#if HG == 1
    return subgroupAdd(d);
#else
    [[unroll]] for (uint o = 1u; o < LPH; o <<= 1) d += subgroupShuffleXor(d, o);
    return d;
#endif
}

void main()
{
    attn_begin();
    // lanes are numbered as the shuffles number them
    uint part = gl_WorkGroupID.y, i = wg_z, lane = gl_SubgroupInvocationID, t = lane % LPH;
    uint hg = gl_WorkGroupID.x * uint(HG) + lane / LPH, h = min(hg, p.H - 1u);
    uint nparts = (p.klen + RUN - 1u) / RUN;
    if (part >= nparts || i >= p.qlen) return;
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
    // CHUNK keys a step: their scores are independent, so their fetches,
    // sums and exps overlap, and the running maximum and the rescale of
    // the accumulators (a chain of dependent latencies per step) are paid
    // once per chunk rather than per key. Keys past j1 are masked.
    // The next chunk's key, value and position-key lines are touched
    // before this chunk's arithmetic, so their misses overlap it: the
    // scores' own fetches come a few at a time, and from memory (each
    // layer's 7.8 MB) the kernel ran 0.75 ms against 0.31 from cache.
    // Touching a line per 64 bytes of each lane's span: 0.64-0.66 ms;
    // half of them, or two chunks ahead: 0.69-0.83. Their sum is stored
    // where nothing reads it, only to keep the loads.
    float touch = 0.0;
    for (uint j = j0; j <= j1; j += CHUNK) {
        [[unroll]] for (uint c = 0u; c < CHUNK; c++) {
            uint jn = min(j + CHUNK + c, j1);
            uint kb = kv_row(jn) * 2u * hd4 + e0;
            uint rb = (p.rk_off >> 2) + min(p.mlen + i - jn, p.clamp_max) * hd4 + e0;
            [[unroll]] for (uint e = 0u; e < PER; e += 4u)
                touch += ld_kv(kb + e).x + ld_kv(kb + hd4 + e).x + ld_rk(rb + e).x;
        }
        float s[CHUNK];
        float mx = TXLM_MASKED;
        [[unroll]] for (uint c = 0u; c < CHUNK; c++) {
            uint jc = min(j + c, j1);
            uint kb = kv_row(jc) * 2u * hd4 + e0;
            uint rb = (p.rk_off >> 2) + min(p.mlen + i - jc, p.clamp_max) * hd4 + e0;
            float d = 0.0;
            [[unroll]] for (uint e = 0u; e < PER; e++) d += dot(qw[e], ld_kv(kb + e)) + dot(qr[e], ld_rk(rb + e));
            s[c] = j + c <= j1 ? head_sum(d) * p.scale : TXLM_MASKED;
            mx = max(mx, s[c]);
        }
        float m_new = max(m, mx), corr = exp(m - m_new);
        l *= corr;
        [[unroll]] for (uint e = 0u; e < PER; e++) acc[e] *= corr;
        [[unroll]] for (uint c = 0u; c < CHUNK; c++) {
            uint kb = kv_row(min(j + c, j1)) * 2u * hd4 + e0;
            float w = j + c <= j1 ? exp(s[c] - m_new) : 0.0;
            l += w;
            [[unroll]] for (uint e = 0u; e < PER; e++) acc[e] += w * ld_kv(kb + hd4 + e);
        }
        m = m_new;
    }
    uint pb = part0 + ((h * p.qlen + i) * nparts + part) * (DH4 + 1u);
    bool live = hg < p.H; // lanes past the last head (a partial head group) only count
    if (live && t == 0u) PART[pb] = vec4(m, l, touch, 0.0);  // z: unread by the merge
    if (live) [[unroll]] for (uint e = 0u; e < PER; e++) PART[pb + 1u + t * PER + e] = acc[e];
    if (p.merge == 0u) return;

    // one dispatch a layer fewer: lavapipe spends 0.03-0.1 ms waking its
    // threads for each, the merge's work is ~1 µs. Every lane's stores are
    // made visible and the workgroup (one subgroup) meets before one lane
    // counts; after the count, the lanes meet again before reading.
    memoryBarrierBuffer();
    subgroupBarrier();
    uint done = 1u + sync0 + gl_WorkGroupID.x + gl_NumWorkGroups.x * i, ticket = 0u;
    if (subgroupElect()) ticket = atomicAdd(DONE[done], 1u) + 1u;
    if (subgroupMax(ticket) != nparts) return;
    subgroupBarrier();
    memoryBarrierBuffer();
    if (!live) return;  // lanes 0 and 1 always are
    uint stride = DH4 + 1u, base = part0 + (h * p.qlen + i) * nparts * stride;
    float M = TXLM_MASKED;
    for (uint r = 0u; r < nparts; r++) M = max(M, PART[base + r * stride].x);
    float lsum = 0.0;
    [[unroll]] for (uint e = 0u; e < PER; e++) acc[e] = vec4(0.0);
    for (uint r = 0u; r < nparts; r++) {
        vec4 ml = PART[base + r * stride];
        float w = exp(ml.x - M);
        lsum += w * ml.y;
        [[unroll]] for (uint e = 0u; e < PER; e++) acc[e] += w * PART[base + r * stride + 1u + t * PER + e];
    }
    [[unroll]] for (uint e = 0u; e < PER; e++) O[q_base + i * hd4 + e0 + e] = acc[e] / lsum;
    if (subgroupElect()) DONE[done] = 0u;  // ready for the next layer's dispatch
}
