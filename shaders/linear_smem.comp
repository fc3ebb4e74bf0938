#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

// Y = alpha * (X · W^T + b) (+ReLU) (+R) for GPUs: a workgroup of 16x16
// invocations computes a 64x64 tile of Y, staging TK values of K of X's
// 64 rows and W's 64 rows in workgroup memory (at most 16 KiB, the
// minimum every device offers) so each value is fetched from device memory once per
// tile instead of once per invocation that uses it. Each invocation keeps
// a 4x4 block in registers, its rows and columns 16 apart, so the 16
// invocations of a row of the workgroup read 16 consecutive floats of
// workgroup memory (no bank conflicts). Loads are coalesced: consecutive
// invocations read consecutive K. With PREFETCH the next step's values
// are fetched into registers before this step's products, so their latency is hidden
// behind arithmetic: with a segment's 128 rows there are too few
// workgroups a multiprocessor to hide it by switching between them. Any
// K, offsets and strides; W in any stored dtype (weights.glsl). CPU
// drivers run a workgroup's invocations in turns and pay for every
// barrier, so they use the texel kernels. Needs
// maxComputeWorkGroupInvocations >= 256 (its needs in kernels.manifest).

layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = 0) readonly buffer Xb { float X[]; };
#define W_BINDING 1
#include "weights.glsl"
#include "linear_out.glsl"

#define TILE 64u
// f32 and f16 weights: steps of 32 with the next one fetched ahead. The
// q8_0 and q4_0 decoders (two loads a value) ran 1.5x slower that way on
// an H100, and 1.5x slower still when their loads went through fetch()
// (docs/performance-history.md, "On an NVIDIA H100 (Vulkan)"): they keep
// steps of 16, loaded where stored.
#if W_TYPE >= 3
#define TK 16u
#define PREFETCH 0
#else
#define TK 32u
#define PREFETCH 1
#endif
#define NV (TK / 4u)        // values of each tile an invocation stages a step
#define RSTEP (256u / TK)   // rows between them

shared float xs[TK][TILE];
shared float ws[TK][TILE];

// the 64 x TK values of each tile at step k0, NV an invocation: row
// t / TK + RSTEP l, K index t % TK; rows past M or N repeat the last one
// (their results are not stored), K past the end reads as 0
#if PREFETCH
void fetch(uint t, uint m0, uint n0, uint k0, out float xv[NV], out float wv[NV])
{
    uint k = k0 + t % TK, kk = min(k, p.K - 1u);
    bool in_k = k < p.K;
    [[unroll]] for (uint l = 0u; l < NV; l++) {
        uint r = t / TK + RSTEP * l;
        xv[l] = in_k ? X[p.x_off + min(m0 + r, p.M - 1u) * p.ldx + kk] : 0.0;
        wv[l] = in_k ? w_at(p.w_off + min(n0 + r, p.N - 1u) * p.w_ld + kk) : 0.0;
    }
}
#endif

void main()
{
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y, t = ty * 16u + tx;
    uint n0 = gl_WorkGroupID.x * TILE, m0 = gl_WorkGroupID.y * TILE;

    float acc[4][4];
    [[unroll]] for (uint i = 0u; i < 4u; i++)
        [[unroll]] for (uint j = 0u; j < 4u; j++) acc[i][j] = 0.0;

#if PREFETCH
    float xn[NV], wn[NV];
    fetch(t, m0, n0, 0u, xn, wn);
#endif
    for (uint k0 = 0u; k0 < p.K; k0 += TK) {
#if PREFETCH
        [[unroll]] for (uint l = 0u; l < NV; l++) {
            xs[t % TK][t / TK + RSTEP * l] = xn[l];
            ws[t % TK][t / TK + RSTEP * l] = wn[l];
        }
        barrier();
        if (k0 + TK < p.K) fetch(t, m0, n0, k0 + TK, xn, wn);
#else
        [[unroll]] for (uint l = 0u; l < NV; l++) {
            uint r = t / TK + RSTEP * l, k = k0 + t % TK;
            bool in_k = k < p.K;
            uint kk = min(k, p.K - 1u);
            float xv = X[p.x_off + min(m0 + r, p.M - 1u) * p.ldx + kk];
            float wv = w_at(p.w_off + min(n0 + r, p.N - 1u) * p.w_ld + kk);
            xs[t % TK][r] = in_k ? xv : 0.0;
            ws[t % TK][r] = in_k ? wv : 0.0;
        }
        barrier();
#endif
        [[unroll]] for (uint k = 0u; k < TK; k++) {
            float xv[4], wv[4];
            [[unroll]] for (uint i = 0u; i < 4u; i++) xv[i] = xs[k][ty + 16u * i];
            [[unroll]] for (uint j = 0u; j < 4u; j++) wv[j] = ws[k][tx + 16u * j];
            [[unroll]] for (uint i = 0u; i < 4u; i++)
                [[unroll]] for (uint j = 0u; j < 4u; j++) acc[i][j] += xv[i] * wv[j];
        }
        barrier();
    }

    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        uint m = m0 + ty + 16u * i;
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            uint n = n0 + tx + 16u * j;
            if (m < p.M && n < p.N) store(m, n, acc[i][j]);
        }
    }
}
