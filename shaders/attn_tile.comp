#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_memory_scope_semantics : require
#include "common.glsl"

// Relative attention for GPUs. The lane-per-query kernels (attn_pair,
// attn_split) suit CPU drivers; a GPU wants many lanes a query and its
// rows staged in workgroup memory. A workgroup of 256 is 16 queries of
// one head; it walks the keys in tiles of 16, each staged with the 31
// position rows the tile needs (query i0 + a at key j0 + b is at
// distance mlen + i0 - j0 + a - b: 16 + 16 - 1 distances). Lane (a, b)
// computes one score; then lane (a, c) folds the tile into query a's
// online softmax (as attn_fused.comp) and keeps vec4 c of its output.
//
// The keys of a workgroup can be split into p.splits runs of whole tiles
// (gl_WorkGroupID.z), so that few queries still fill the device: each run
// then writes its partial softmax in attn_split.comp's layout, PART[H,
// qlen, splits, 1 + dh/4] = (m, l, 0, 0) then the weighted values, and
// attn_merge.comp combines them, or (MERGE) the last run of each query
// tile and head to finish does (attn_merge_runs.glsl; its count in
// DONE, engine/ops.h's TXLM_SYNC_WORDS): a dispatch and a barrier fewer,
// a generated token's included. Needs dh % 4 == 0 and dh <= 64.
// Workgroup memory: 26 KiB.

layout(local_size_x = 256) in;

#define BQ 16u
#define BK 16u
#define NR (BQ + BK - 1u)
#define MAX4 16u
// rows read by all 16 lanes of a row group at once: one vec4 more per row
// keeps those lanes on different banks
#define PAD4 (MAX4 + 1u)

#include "attn_push.glsl"
#include "attn_io.glsl"
#ifndef MERGE
#define MERGE 0
#endif
#if MERGE
layout(std430, binding = 5) coherent buffer Pb { vec4 PART[]; };  // read back by the merging workgroup
layout(std430, binding = 6) writeonly buffer Ob { vec4 O[]; };    // [qlen, H*dh]
layout(std430, binding = 7) coherent buffer Cb { uint DONE[]; };  // a count per query tile and head, after word 0
#define LAST_FLAG sS[0]
#else
layout(std430, binding = 5) writeonly buffer Ob { vec4 O[]; };  // [qlen, H*dh], or PART with splits > 1
#define PART O
#endif


shared vec4 sQw[BQ * MAX4], sQr[BQ * MAX4], sV[BK * MAX4];
shared vec4 sK[BK * PAD4], sR[NR * PAD4];
shared float sS[BQ * BK];
#if MERGE
#include "attn_merge_runs.glsl"
#endif

// keys query i may see: [first_key(i), mlen + i] (same_length raises the first)
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
    // a stream shorter than the dispatch's longest, or with fewer runs
    if (gl_WorkGroupID.x * BQ >= p.qlen || wg_z >= max(p.splits, 1u)) return;
    uint tid = gl_LocalInvocationIndex, a = tid / 16u, c = tid % 16u;
    uint i0 = gl_WorkGroupID.x * BQ, h = gl_WorkGroupID.y, z = wg_z;
    uint n4 = p.dh / 4u, hd4 = p.H * n4, splits = max(p.splits, 1u);
    uint i = i0 + a, iq = min(i, p.qlen - 1u);
    bool live = i < p.qlen;
    if (c < n4) {
        vec4 q = ld_q(iq * hd4 + h * n4 + c);
        sQw[a * MAX4 + c] = q + ld_rw(h * n4 + c);
        sQr[a * MAX4 + c] = q + ld_rr(h * n4 + c);
    }
    // the workgroup's keys, and this run's whole tiles of them
    uint j_lo = first_key(i0), j_hi = p.mlen + min(i0 + BQ - 1u, p.qlen - 1u);
    uint tiles = (j_hi - j_lo) / BK + 1u;
    uint t_begin = z * tiles / splits, t_end = (z + 1u) * tiles / splits;
    uint lo = first_key(iq), hi = p.mlen + iq;

    float m = TXLM_MASKED, l = 0.0;
    vec4 acc = vec4(0.0);
    for (uint t = t_begin; t < t_end; t++) {
        uint j0 = j_lo + t * BK;
        barrier();  // the last tile's reads are done (first time: the queries are stored)
        if (c < n4) {
            uint j = j0 + a;
            bool in_range = j <= j_hi;
            uint kb = kv_row(min(j, j_hi)) * 2u * hd4 + h * n4 + c;
            sK[a * PAD4 + c] = in_range ? ld_kv(kb) : vec4(0.0);
            sV[a * MAX4 + c] = in_range ? ld_kv(kb + hd4) : vec4(0.0);
            for (uint r = a; r < NR; r += BQ) {
                // distances below 0 are masked keys; any row serves
                int d = int(p.mlen + i0 + r) - int(BK - 1u) - int(j0);
                uint dist = min(uint(max(d, 0)), p.clamp_max);
                sR[r * PAD4 + c] = ld_rk((p.rk_off >> 2) + dist * hd4 + h * n4 + c);
            }
        }
        barrier();
        // the score of query a at key j0 + c (lane c as a key here)
        uint jc = j0 + c, r = a + BK - 1u - c;
        float s = 0.0;
        for (uint e = 0u; e < n4; e++)
            s += dot(sQw[a * MAX4 + e], sK[c * PAD4 + e]) + dot(sQr[a * MAX4 + e], sR[r * PAD4 + e]);
        sS[a * BK + c] = live && jc >= lo && jc <= hi ? s * p.scale : TXLM_MASKED;
        barrier();
        // query a's softmax over the tile; lane c as vec4 c of the output
        float mt = m;
        for (uint k = 0u; k < BK; k++) mt = max(mt, sS[a * BK + k]);
        float corr = exp(m - mt);
        l *= corr;
        acc *= corr;
        for (uint k = 0u; k < BK; k++) {
            float sk = sS[a * BK + k];
            float w = txlm_is_masked(sk) ? 0.0 : exp(sk - mt);
            l += w;
            acc += w * sV[k * MAX4 + c];
        }
        m = mt;
    }
    bool mine = live && c < n4;
    if (splits == 1u) {
        if (mine) O[q_base + i * hd4 + h * n4 + c] = acc * (1.0 / l);
        return;
    }
    uint stride = n4 + 1u, base = part0 + (h * p.qlen + i) * splits * stride;
    if (mine && c == 0u) PART[base + z * stride] = vec4(m, l, 0.0, 0.0);
    if (mine) PART[base + z * stride + 1u + c] = acc;
#if MERGE
    uint tiles_q = (p.qlen + BQ - 1u) / BQ;
    if (last_run(tid, 1u + sync0 + gl_WorkGroupID.x + tiles_q * h, splits) && mine)
        O[q_base + i * hd4 + h * n4 + c] = merged_runs(base, stride, splits, c);
#endif
}
