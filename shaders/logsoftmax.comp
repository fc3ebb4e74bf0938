#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

// DST[row][j] = SRC[row][j] - logsumexp(SRC[row][0..n)) (+ ADD[row][add_col]).
// The adaptive softmax uses ADD for the cluster's log-probability in the head.
// With pick_off set, only column PICK[pick_off + row] - pick_base is
// written (scoring targets): the whole row is still reduced.
// With map_off set, SRC row i belongs to row MAP[map_off + i] of DST, ADD
// and PICK (scoring computes a tail cluster only for the rows that need it).

layout(local_size_x = 64) in;

#if TEXEL
// 4 logits a fetch; needs src_off and ld_src multiples of 4 (rows padded)
layout(binding = 0) uniform usamplerBuffer SRC4;
#else
layout(std430, binding = 0) readonly buffer Sb { float SRC[]; };
#endif
layout(std430, binding = 1) writeonly buffer Db { float DST[]; };
layout(std430, binding = 2) readonly buffer Ab { float ADD[]; };
layout(std430, binding = 3) readonly buffer Pb { int PICK[]; };
layout(std430, binding = 4) readonly buffer Mb { int MAP[]; };

const uint NO_ADD = 0xffffffffu, NO_PICK = 0xffffffffu, NO_MAP = 0xffffffffu;

#include "contract.h"
layout(push_constant) uniform Push { txlm_logsoftmax_push p; };

#if TEXEL
#define SRC_AT(i) uintBitsToFloat(texelFetch(SRC4, int((i) >> 2))[(i) & 3u])
// the lanes of texel j that are inside the row (the rest is padding)
bvec4 in_row(uint j) { return lessThan(uvec4(4u * j) + uvec4(0u, 1u, 2u, 3u), uvec4(p.n)); }
vec4 texel4(uint sb4, uint j) { return uintBitsToFloat(texelFetch(SRC4, int(sb4 + j))); }
#else
#define SRC_AT(i) SRC[i]
#endif

shared float red[64];

float reduce(float v, bool is_max)
{
    uint t = gl_LocalInvocationID.x;
    red[t] = v;
    barrier();
    for (uint s = 32u; s > 0u; s >>= 1) {
        if (t < s) red[t] = is_max ? max(red[t], red[t + s]) : red[t] + red[t + s];
        barrier();
    }
    float r = red[0];
    barrier();
    return r;
}

void main()
{
    uint row = gl_WorkGroupID.x;
    uint t = gl_LocalInvocationID.x;
    if (row >= p.rows) return;
    uint sb = p.src_off + row * p.ld_src;

    float m = -3.4e38;
    float s = 0.0;
#if TEXEL
    // the last texel of a row may hold padding: those lanes count as -inf
    uint n4 = (p.n + 3u) / 4u, sb4 = sb >> 2;
    for (uint j = t; j < n4; j += 64u) {
        vec4 v = mix(vec4(-3.4e38), texel4(sb4, j), in_row(j));
        m = max(m, max(max(v.x, v.y), max(v.z, v.w)));
    }
    m = reduce(m, true);
    for (uint j = t; j < n4; j += 64u) {
        vec4 e = mix(vec4(0.0), exp(texel4(sb4, j) - m), in_row(j));
        s += (e.x + e.y) + (e.z + e.w);
    }
#else
    for (uint j = t; j < p.n; j += 64u) m = max(m, SRC[sb + j]);
    m = reduce(m, true);
    for (uint j = t; j < p.n; j += 64u) s += exp(SRC[sb + j] - m);
#endif
    float lse = m + log(reduce(s, false));
    uint r = p.map_off != NO_MAP ? uint(MAP[p.map_off + row]) : row;
    if (p.add_col != NO_ADD) lse -= ADD[p.add_off + r * p.ld_add + p.add_col];

    uint db = p.dst_off + r * p.ld_dst;
    if (p.pick_off != NO_PICK) {
        uint j = uint(PICK[p.pick_off + r]) - p.pick_base; // tokens below pick_base wrap past n_write
        if (t == 0u && j < p.n_write) DST[db + j] = SRC_AT(sb + j) - lse;
        return;
    }
    for (uint j = t; j < p.n_write; j += 64u) DST[db + j] = SRC_AT(sb + j) - lse;
}
