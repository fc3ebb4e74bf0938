#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

// Embedding lookup: for each token whose id lies in [row_lo, row_hi)
// (one cluster, or the part of its table held by this buffer chunk),
// Y[i] = alpha * E[id - row_lo]. Other rows are left untouched, or with
// zero_rest set to 0 (a cluster's rows gathered for its projection
// without filling the buffer first).

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Ib { int ids[]; };
#define W_BINDING 1
#include "weights.glsl"
layout(std430, binding = 2) writeonly buffer Yb { float Y[]; };

#include "contract.h"
layout(push_constant) uniform Push { txlm_gather_push p; };

void main()
{
    uint d = gl_GlobalInvocationID.x;
    uint i = gl_GlobalInvocationID.y;
    if (d >= p.dim || i >= p.n_rows) return;
    int id = ids[i];
    uint at = p.y_off + i * p.ldy + d;
    if (id < p.row_lo || id >= p.row_hi) {
        if (p.zero_rest != 0u) Y[at] = 0.0;
        return;
    }
    Y[at] = p.alpha * w_at(uint(id - p.row_lo) * p.dim + d);
}
