#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

// In-place softmax over rows of n; masked entries become exactly 0.

layout(local_size_x = 64) in;

layout(std430, binding = 0) buffer Sb { float S[]; };

#include "contract.h"
layout(push_constant) uniform Push { txlm_softmax_push p; };

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
    uint base = row * p.n;

    float m = TXLM_MASKED;
    for (uint j = t; j < p.n; j += 64u) m = max(m, S[base + j]);
    m = reduce(m, true);
    // Every key masked (same_length without memory): the reference fills
    // masked scores with the lowest float, so its softmax is uniform.
    if (txlm_is_masked(m)) {
        for (uint j = t; j < p.n; j += 64u) S[base + j] = 1.0 / float(p.n);
        return;
    }

    float s = 0.0;
    for (uint j = t; j < p.n; j += 64u) {
        float x = S[base + j];
        s += txlm_is_masked(x) ? 0.0 : exp(x - m);
    }
    s = reduce(s, false);
    float inv = 1.0 / s;

    for (uint j = t; j < p.n; j += 64u) {
        float x = S[base + j];
        S[base + j] = txlm_is_masked(x) ? 0.0 : exp(x - m) * inv;
    }
}
