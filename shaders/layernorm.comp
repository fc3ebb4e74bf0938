#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

// Y = LayerNorm(X (+ R)) per row over its first d columns, biased
// variance, two passes for accuracy; columns d..d_out-1 (a padded model's
// padding) get zeros. Y may be the same buffer as X or R: each invocation
// writes only the columns it alone has read.
//
// TEXEL (CPU devices; a workgroup of 8 is one subgroup with subgroupAdd):
// one subgroup per row, inputs read as vec4 texels, sums by subgroupAdd.
// The 64-lane workgroup's shared-memory reductions below cost CPU drivers
// a switch between the workgroup's SIMD batches at every barrier.
// Needs the offsets, strides and d_out multiples of 4.

#if TEXEL
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 8) in;
layout(binding = 0) uniform usamplerBuffer Xt;
layout(binding = 1) uniform usamplerBuffer Rt;
layout(binding = 2) uniform usamplerBuffer Gt;
layout(binding = 3) uniform usamplerBuffer Bt;
layout(std430, binding = 4) writeonly buffer Yb { vec4 Y4[]; };
#else
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Xb { float X[]; };
layout(std430, binding = 1) readonly buffer Rb { float R[]; };
layout(std430, binding = 2) readonly buffer Gb { float G[]; };
layout(std430, binding = 3) readonly buffer Bb { float Bias[]; };
layout(std430, binding = 4) writeonly buffer Yb { float Y[]; };
#endif

#include "contract.h"
layout(push_constant) uniform Push { txlm_layernorm_push p; };

#if TEXEL
// texel t (columns 4t..4t+3) of the row; columns past d count as 0
vec4 row_in4(uint row, uint t)
{
    vec4 v = uintBitsToFloat(texelFetch(Xt, int((p.x_off + row * p.ldx) / 4u + t)));
    if (p.residual != 0u) v += uintBitsToFloat(texelFetch(Rt, int((p.r_off + row * p.ldr) / 4u + t)));
    return v;
}

#define LN_IN4(row, t) row_in4(row, t)
#include "layernorm_row.glsl"

void main()
{
    uint row = gl_WorkGroupID.x, lane = gl_SubgroupInvocationID;
    uint n4 = (p.d + 3u) / 4u, out4 = p.d_out / 4u;
    if (row >= p.rows) return;
    float mean, rstd;
    ln_stats(row, lane, p.d, p.eps, mean, rstd);

    for (uint t = lane; t < out4; t += 8u) {
        vec4 y = vec4(0.0);
        if (t < n4) {
            vec4 g = uintBitsToFloat(texelFetch(Gt, int(t))), b = uintBitsToFloat(texelFetch(Bt, int(t)));
            y = ln_real(t, (row_in4(row, t) - mean) * rstd * g + b, p.d);
        }
        Y4[(p.y_off + row * p.ldy) / 4u + t] = y;
    }
}
#else
float row_in(uint row, uint c)
{
    float v = X[p.x_off + row * p.ldx + c];
    if (p.residual != 0u) v += R[p.r_off + row * p.ldr + c];
    return v;
}

#define LN_IN(row, c) row_in(row, c)
#include "layernorm_wg.glsl"

void main()
{
    uint row = gl_WorkGroupID.x;
    uint t = gl_LocalInvocationID.x;
    if (row >= p.rows) return;
    float mean, rstd;
    ln_stats_wg(row, t, p.d, p.eps, mean, rstd);

    for (uint c = t; c < p.d; c += 64u)
        Y[p.y_off + row * p.ldy + c] = (row_in(row, c) - mean) * rstd * G[c] + Bias[c];
    for (uint c = p.d + t; c < p.d_out; c += 64u) Y[p.y_off + row * p.ldy + c] = 0.0;
}
#endif
