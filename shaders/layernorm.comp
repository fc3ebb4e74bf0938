#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

// Y = LayerNorm(X (+ R)) per row over its first d columns, biased
// variance, two passes for accuracy; columns d..d_out-1 (a padded model's
// padding) get zeros. Y may be the same buffer as X or R: each invocation
// writes only the columns it alone has read.

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Xb { float X[]; };
layout(std430, binding = 1) readonly buffer Rb { float R[]; };
layout(std430, binding = 2) readonly buffer Gb { float G[]; };
layout(std430, binding = 3) readonly buffer Bb { float Bias[]; };
layout(std430, binding = 4) writeonly buffer Yb { float Y[]; };

layout(push_constant) uniform Push {
    uint rows, d;
    uint x_off, ldx;
    uint r_off, ldr;
    uint y_off, ldy;
    uint residual;
    float eps;
    uint d_out;
} p;

shared float red[64];

float row_in(uint row, uint c)
{
    float v = X[p.x_off + row * p.ldx + c];
    if (p.residual != 0u) v += R[p.r_off + row * p.ldr + c];
    return v;
}

float reduce_sum(float v)
{
    uint t = gl_LocalInvocationID.x;
    red[t] = v;
    barrier();
    for (uint s = 32u; s > 0u; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        barrier();
    }
    float total = red[0];
    barrier();
    return total;
}

void main()
{
    uint row = gl_WorkGroupID.x;
    uint t = gl_LocalInvocationID.x;
    if (row >= p.rows) return;

    float s = 0.0;
    for (uint c = t; c < p.d; c += 64u) s += row_in(row, c);
    float mean = reduce_sum(s) / float(p.d);

    float v = 0.0;
    for (uint c = t; c < p.d; c += 64u) {
        float x = row_in(row, c) - mean;
        v += x * x;
    }
    float rstd = 1.0 / sqrt(reduce_sum(v) / float(p.d) + p.eps);

    for (uint c = t; c < p.d; c += 64u)
        Y[p.y_off + row * p.ldy + c] = (row_in(row, c) - mean) * rstd * G[c] + Bias[c];
    for (uint c = p.d + t; c < p.d_out; c += 64u) Y[p.y_off + row * p.ldy + c] = 0.0;
}
