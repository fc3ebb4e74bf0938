#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

// DST[row][j] = SRC[row][j] - logsumexp(SRC[row][0..n)) (+ ADD[row][add_col]).
// The adaptive softmax uses ADD for the cluster's log-probability in the head.

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Sb { float SRC[]; };
layout(std430, binding = 1) writeonly buffer Db { float DST[]; };
layout(std430, binding = 2) readonly buffer Ab { float ADD[]; };

const uint NO_ADD = 0xffffffffu;

layout(push_constant) uniform Push {
    uint rows, n;
    uint src_off, ld_src;
    uint dst_off, ld_dst;
    uint add_off, ld_add, add_col;
    uint n_write;   // columns written (the head writes only its shortlist to the output)
} p;

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
    for (uint j = t; j < p.n; j += 64u) m = max(m, SRC[sb + j]);
    m = reduce(m, true);
    float s = 0.0;
    for (uint j = t; j < p.n; j += 64u) s += exp(SRC[sb + j] - m);
    float lse = m + log(reduce(s, false));
    if (p.add_col != NO_ADD) lse -= ADD[p.add_off + row * p.ld_add + p.add_col];

    uint db = p.dst_off + row * p.ld_dst;
    for (uint j = t; j < p.n_write; j += 64u) DST[db + j] = SRC[sb + j] - lse;
}
