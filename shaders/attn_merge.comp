#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

// Combines the per-run partial softmaxes of attn_split.comp (and of
// attn_tile.comp's runs) into the attention output (attn_merge_runs.glsl).

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Pb { vec4 PART[]; };  // [H, qlen, nparts, 1 + dh/4] from part0 of the stream
layout(std430, binding = 1) writeonly buffer Ob { vec4 O[]; };    // [rows, H*dh] from row q0 of the stream

#include "attn_push.glsl"
#define MERGE 0
#include "attn_merge_runs.glsl"

void main()
{
    attn_begin();
    uint c = gl_GlobalInvocationID.x;   // vec4 column: h * dh/4 + e
    uint i = gl_GlobalInvocationID.y;
    uint n4 = p.dh / 4u, hd4 = p.H * n4;
    if (c >= hd4 || i >= p.qlen) return;
    uint nparts = p.run != 0u ? (p.klen + p.run - 1u) / p.run : p.splits;
    uint h = c / n4, e = c % n4, stride = n4 + 1u;
    uint base = part0 + (h * p.qlen + i) * nparts * stride;
    O[q_base + i * hd4 + c] = merged_runs(base, stride, nparts, e);
}
