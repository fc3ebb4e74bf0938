#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

// Combines the per-run partial softmaxes of attn_split.comp into the
// attention output: with M the largest run maximum,
//   O = sum_r exp(m_r - M) * acc_r / sum_r exp(m_r - M) * l_r.
// Runs that saw no key have m_r = TXLM_MASKED and weigh exactly 0.

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Pb { vec4 PART[]; };  // [H, qlen, nparts, 1 + dh/4] from part0 of the stream
layout(std430, binding = 1) writeonly buffer Ob { vec4 O[]; };    // [rows, H*dh] from row q0 of the stream

#include "attn_push.glsl"

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
    float M = TXLM_MASKED;
    for (uint r = 0u; r < nparts; r++) M = max(M, PART[base + r * stride].x);
    float l = 0.0;
    vec4 acc = vec4(0.0);
    for (uint r = 0u; r < nparts; r++) {
        vec4 ml = PART[base + r * stride];
        float w = exp(ml.x - M);
        l += w * ml.y;
        acc += w * PART[base + r * stride + 1u + e];
    }
    O[q_base + i * hd4 + c] = acc / l;
}
