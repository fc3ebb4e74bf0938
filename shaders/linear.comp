#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

// Y = alpha * (X · W^T + b), optionally ReLU, optionally + R.
// W is [N, K] row-major (a PyTorch Linear weight).
// Each invocation computes a 4x4 block of Y from registers: on CPU
// drivers (lavapipe) loads are the bottleneck and register blocking wins.

layout(local_size_x = 8, local_size_y = 8) in;

layout(std430, binding = 0) readonly buffer Xb { float X[]; };
#define W_BINDING 1
#include "weights.glsl"
layout(std430, binding = 2) readonly buffer Bb { float B[]; };
layout(std430, binding = 3) readonly buffer Rb { float R[]; };
layout(std430, binding = 4) writeonly buffer Yb { float Y[]; };

#include "step.glsl"

// the flags and DYN_Y as in linear_out.glsl
const uint HAS_BIAS = TXLM_LINF_BIAS, RELU = TXLM_LINF_RELU, RESIDUAL = TXLM_LINF_RESIDUAL, DYN_Y = TXLM_LINF_DYN_Y;

layout(push_constant) uniform Push { txlm_linear_push p; };

void main()
{
    uint n0 = gl_GlobalInvocationID.x * 4u;
    uint m0 = gl_GlobalInvocationID.y * 4u;
    if (n0 >= p.N || m0 >= p.M) return;

    uint xr[4], wr[4];
    for (uint r = 0u; r < 4u; r++) xr[r] = p.x_off + min(m0 + r, p.M - 1u) * p.ldx;
    for (uint c = 0u; c < 4u; c++) wr[c] = p.w_off + min(n0 + c, p.N - 1u) * p.w_ld;

    float acc[4][4];
    for (uint r = 0u; r < 4u; r++)
        for (uint c = 0u; c < 4u; c++) acc[r][c] = 0.0;

    for (uint k = 0u; k < p.K; k++) {
        float xv[4], wv[4];
        for (uint r = 0u; r < 4u; r++) xv[r] = X[xr[r] + k];
        for (uint c = 0u; c < 4u; c++) wv[c] = w_at(wr[c] + k);
        for (uint r = 0u; r < 4u; r++)
            for (uint c = 0u; c < 4u; c++) acc[r][c] += xv[r] * wv[c];
    }

    uint y0 = (p.flags & DYN_Y) != 0u ? p.y_off + STEP[TXLM_STEP_KV_OUT] : p.y_off;
    for (uint r = 0u; r < 4u; r++) {
        uint m = m0 + r;
        if (m >= p.M) break;
        for (uint c = 0u; c < 4u; c++) {
            uint n = n0 + c;
            if (n >= p.N) break;
            float y = acc[r][c];
            if ((p.flags & HAS_BIAS) != 0u) y += B[p.b_off + n];
            y *= p.alpha;
            if ((p.flags & RELU) != 0u) y = max(y, 0.0);
            if ((p.flags & RESIDUAL) != 0u) y += R[p.r_off + m * p.ldr + n];
            Y[y0 + m * p.ldy + n] = y;
        }
    }
}
