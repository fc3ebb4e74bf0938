#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#include "common.glsl"
#include "contract.h"

// Relative attention on the device's matrix units (VK_KHR_cooperative_matrix)
// for models whose weights are f16 or quantised: attn_tile.comp's tiles,
// grid, runs of keys and outputs, with its three products done as f16
// fragment products summed in f32. A workgroup of 128 invocations takes 16
// queries of one head and walks the keys in tiles of 16. Per tile, staged
// in workgroup memory as f16: the keys, the values and the 31 position
// rows the tile needs (query i0 + a at key j0 + b is at distance
// mlen + i0 - j0 + a - b; a 32nd row fills whole fragments). Then
//   S = (q + u) K^T          16 x 16
//   T = (q + v) R^T          16 x 32, one column per position row
// and the rel-shift is an index, as in attn_tile: query a's score at key b
// is (S[a][b] + T[a][a + 15 - b]) * scale. Each query's online softmax
// folds the tile in (8 lanes a query), its weights rounded to f16 into P
// (the sum l taken over the rounded ones), and the tile's P V (16 x dh)
// is added to the query's output, kept in registers, 8 values a lane.
// The fragment shape is the device's (specialization constants 0-2,
// engine/vk/coopmat.c: each of M, N, K divides 16); the fragments of a
// product go round the subgroups, however many the subgroup size makes.
// The runs of keys (splits > 1) are merged as attn_tile.comp's are: by
// attn_merge.comp, or (MERGE) by the last run to finish.
// Needs dh % 16 == 0 and dh <= 64. Workgroup memory: 22 KiB.

layout(local_size_x = TXLM_CM_INVOCATIONS) in;
layout(constant_id = TXLM_CM_SPEC_M) const uint CM_M = 16;
layout(constant_id = TXLM_CM_SPEC_N) const uint CM_N = 16;
layout(constant_id = TXLM_CM_SPEC_K) const uint CM_K = 16;

#define BQ 16u
#define BK 16u
#define NR 32u
#define MAX4 16u
// row strides, each whole 16-byte units with one more between rows:
// f16 rows of up to 64 values (f16vec2 units), P's rows of 16, and the
// f32 products' rows
#define HS 36u
#define PS 12u
#define SS 20u
#define TS 36u
#define OS 68u

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

shared f16vec2 sQw[BQ * HS], sQr[BQ * HS], sK[BK * HS], sV[BK * HS], sR[NR * HS];
shared f16vec2 sP[BQ * PS];
shared float sS[BQ * SS], sT[BQ * TS], sO[BQ * OS];
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

// a vec4 into two f16 pairs of a staged row
#define PUT4(dst, at, v)                   \
    {                                      \
        vec4 v_ = (v);                     \
        dst[at] = f16vec2(v_.xy);          \
        dst[(at) + 1u] = f16vec2(v_.zw);   \
    }

// Fragment F of C = A · B over KDIM (fragments FM to a column of C),
// stored as f32 at OUT[row * OSTRIDE + column]; A row-major, B as BSTEP lays it.
#define PRODUCT(F, A, ASTRIDE, B, BSTRIDE, BLAYOUT, BSTEP, KDIM, FM, OUT, OSTRIDE)                                       \
    {                                                                                                                    \
        uint fm = (F) % (FM), fn = (F) / (FM);                                                                           \
        coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator> c =                                       \
            coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator>(0.0);                                  \
        for (uint kk = 0u; kk < (KDIM); kk += CM_K) {                                                                     \
            coopmat<float16_t, gl_ScopeSubgroup, CM_M, CM_K, gl_MatrixUseA> a;                                           \
            coopmat<float16_t, gl_ScopeSubgroup, CM_K, CM_N, gl_MatrixUseB> b;                                           \
            coopMatLoad(a, A, fm * CM_M * (ASTRIDE) + kk / 2u, ASTRIDE, gl_CooperativeMatrixLayoutRowMajor);             \
            coopMatLoad(b, B, BSTEP(fn, kk), BSTRIDE, BLAYOUT);                                                          \
            c = coopMatMulAdd(a, b, c);                                                                                  \
        }                                                                                                                \
        coopMatStore(c, OUT, fm * CM_M * (OSTRIDE) + fn * CM_N, OSTRIDE, gl_CooperativeMatrixLayoutRowMajor);            \
    }
// B stored as rows of K (keys, position rows: B^T row-major), or as rows of N (values)
#define ROWS_OF_N(fn, kk) ((fn) * CM_N * HS + (kk) / 2u)
#define ROWS_OF_K(fn, kk) ((kk) * HS + (fn) * CM_N / 2u)

void main()
{
    attn_begin();
    // a stream shorter than the dispatch's longest, or with fewer runs
    if (gl_WorkGroupID.x * BQ >= p.qlen || wg_z >= max(p.splits, 1u)) return;
    uint tid = gl_LocalInvocationIndex, sub = gl_SubgroupID, nsub = gl_NumSubgroups;
    uint i0 = gl_WorkGroupID.x * BQ, h = gl_WorkGroupID.y, z = wg_z;
    uint n4 = p.dh / 4u, hd4 = p.H * n4, splits = max(p.splits, 1u);
    // this lane's query a and its 8 output columns from 8 c8
    uint a = tid / 8u, c8 = tid % 8u;
    uint i = i0 + a, iq = min(i, p.qlen - 1u);
    bool live = i < p.qlen;
    for (uint e = tid; e < BQ * MAX4; e += TXLM_CM_INVOCATIONS) {
        uint r = e / MAX4, c = e % MAX4;
        if (c < n4) {
            vec4 q = ld_q(min(i0 + r, p.qlen - 1u) * hd4 + h * n4 + c);
            PUT4(sQw, r * HS + 2u * c, q + ld_rw(h * n4 + c))
            PUT4(sQr, r * HS + 2u * c, q + ld_rr(h * n4 + c))
        }
    }
    // the workgroup's keys, and this run's whole tiles of them
    uint j_lo = first_key(i0), j_hi = p.mlen + min(i0 + BQ - 1u, p.qlen - 1u);
    uint tiles = (j_hi - j_lo) / BK + 1u;
    uint t_begin = z * tiles / splits, t_end = (z + 1u) * tiles / splits;
    uint lo = first_key(iq), hi = p.mlen + iq;
    uint fq = BQ / CM_M, n_st = fq * (BK / CM_N) + fq * (NR / CM_N), n_pv = fq * (p.dh / CM_N);

    float m = TXLM_MASKED, l = 0.0;
    float acc[8];
    [[unroll]] for (uint e = 0u; e < 8u; e++) acc[e] = 0.0;
    for (uint t = t_begin; t < t_end; t++) {
        uint j0 = j_lo + t * BK;
        barrier();  // the last tile's reads are done (first time: the queries are stored)
        for (uint e = tid; e < NR * MAX4; e += TXLM_CM_INVOCATIONS) {
            uint r = e / MAX4, c = e % MAX4;
            if (c >= n4) continue;
            if (r < BK) {
                uint j = j0 + r;
                bool in_range = j <= j_hi;
                uint kb = kv_row(min(j, j_hi)) * 2u * hd4 + h * n4 + c;
                PUT4(sK, r * HS + 2u * c, in_range ? ld_kv(kb) : vec4(0.0))
                PUT4(sV, r * HS + 2u * c, in_range ? ld_kv(kb + hd4) : vec4(0.0))
            }
            // distances below 0 are masked keys; any row serves
            int d = int(p.mlen + i0 + r) - int(BK - 1u) - int(j0);
            uint dist = min(uint(max(d, 0)), p.clamp_max);
            PUT4(sR, r * HS + 2u * c, ld_rk((p.rk_off >> 2) + dist * hd4 + h * n4 + c))
        }
        barrier();
        // S and T, their fragments round the subgroups
        for (uint f = sub, n_s = fq * (BK / CM_N); f < n_st; f += nsub) {
            if (f < n_s)
                PRODUCT(f, sQw, HS, sK, HS, gl_CooperativeMatrixLayoutColumnMajor, ROWS_OF_N, p.dh, fq, sS, SS)
            else
                PRODUCT(f - n_s, sQr, HS, sR, HS, gl_CooperativeMatrixLayoutColumnMajor, ROWS_OF_N, p.dh, fq, sT, TS)
        }
        barrier();
        // query a's softmax over the tile (each of its 8 lanes alike); lane
        // c8 writes the weights of keys 2 c8 and 2 c8 + 1
        float s[BK];
        float mt = m;
        [[unroll]] for (uint b = 0u; b < BK; b++) {
            uint j = j0 + b;
            s[b] = live && j >= lo && j <= hi ? (sS[a * SS + b] + sT[a * TS + a + BK - 1u - b]) * p.scale : TXLM_MASKED;
            mt = max(mt, s[b]);
        }
        float corr = exp(m - mt), lt = 0.0;
        f16vec2 mine = f16vec2(0.0);
        [[unroll]] for (uint b = 0u; b < BK; b++) {
            float16_t w = float16_t(txlm_is_masked(s[b]) ? 0.0 : exp(s[b] - mt));
            lt += float(w);
            if (b / 2u == c8) mine[b % 2u] = w;
        }
        sP[a * PS + c8] = mine;
        l = l * corr + lt;
        m = mt;
        barrier();
        for (uint f = sub; f < n_pv; f += nsub)
            PRODUCT(f, sP, PS, sV, HS, gl_CooperativeMatrixLayoutRowMajor, ROWS_OF_K, BK, fq, sO, OS)
        barrier();
        [[unroll]] for (uint e = 0u; e < 8u; e++)
            if (c8 * 8u + e < p.dh) acc[e] = acc[e] * corr + sO[a * OS + c8 * 8u + e];
    }
    vec4 o0 = vec4(acc[0], acc[1], acc[2], acc[3]), o1 = vec4(acc[4], acc[5], acc[6], acc[7]);
    bool mine = live && 2u * c8 < n4, two = 2u * c8 + 1u < n4;
    if (splits == 1u) {
        uint ob = q_base + i * hd4 + h * n4 + 2u * c8;
        if (mine) O[ob] = o0 * (1.0 / l);
        if (mine && two) O[ob + 1u] = o1 * (1.0 / l);
        return;
    }
    uint stride = n4 + 1u, base = part0 + (h * p.qlen + i) * splits * stride, pb = base + z * stride;
    if (mine && c8 == 0u) PART[pb] = vec4(m, l, 0.0, 0.0);
    if (mine) PART[pb + 1u + 2u * c8] = o0;
    if (mine && two) PART[pb + 2u + 2u * c8] = o1;
#if MERGE
    uint tiles_q = (p.qlen + BQ - 1u) / BQ, ob = q_base + i * hd4 + h * n4 + 2u * c8;
    if (!last_run(tid, 1u + sync0 + gl_WorkGroupID.x + tiles_q * h, splits) || !mine) return;
    O[ob] = merged_runs(base, stride, splits, 2u * c8);
    if (two) O[ob + 1u] = merged_runs(base, stride, splits, 2u * c8 + 1u);
#endif
}
