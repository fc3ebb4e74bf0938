#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#include "common.glsl"
#include "contract.h"

// Y = alpha * (X · W^T + b) (+ReLU) (+R) on the device's matrix units
// (VK_KHR_cooperative_matrix): a workgroup of 128 invocations computes a
// 64x64 tile of Y. Each step stages 32 values of K of X's 64 rows and W's
// 64 rows in workgroup memory as f16 (the activations rounded there, the
// quantised weights unpacked there: q8_0 and q4_0 values times their
// block's scale, rounded to f16), and the subgroups multiply CM_M x CM_K
// by CM_K x CM_N fragments of them into f32 accumulators. The fragment
// shape is the device's (vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR,
// engine/vk/coopmat.c), given as specialization constants, as is FPS, the
// fragments a subgroup keeps: the tile's (64/CM_M)(64/CM_N) fragments go
// round the subgroups, however many the device's subgroup size makes of
// 128 invocations, fragment f to subgroup f mod gl_NumSubgroups. Results
// pass through a subgroup's patch of workgroup memory on their way out,
// where the epilogue (linear_out.glsl) adds the bias and residual and
// drops the rows and columns past M and N. Any K, offsets and strides.

layout(local_size_x = TXLM_CM_INVOCATIONS) in;
layout(constant_id = TXLM_CM_SPEC_M) const uint CM_M = 16;
layout(constant_id = TXLM_CM_SPEC_N) const uint CM_N = 16;
layout(constant_id = TXLM_CM_SPEC_K) const uint CM_K = 16;
layout(constant_id = TXLM_CM_SPEC_FPS) const uint FPS = 4;    // >= fragments / the fewest subgroups 128 invocations make
layout(constant_id = TXLM_CM_SPEC_NSUB) const uint NSUB = 16;  // >= the most subgroups 128 invocations make

layout(std430, binding = 0) readonly buffer Xb { float X[]; };
#define W_BINDING 1
#include "weights.glsl"
#include "linear_out.glsl"

#define TILE 64u
#define TK 32u
#define PAIRS (TK / 2u)
// a row of a staged tile: 16 pairs of K and 4 more, so that consecutive
// rows start in different banks (80 bytes, whole 16-byte units)
#define STRIDE (PAIRS + 4u)
shared f16vec2 xs[TILE * STRIDE];
shared f16vec2 ws[TILE * STRIDE];
shared float stage[NSUB * CM_M * CM_N];

const uint FM = TILE / CM_M, FN = TILE / CM_N, FRAGS = FM * FN;

// elements e and e + 1 of W (e + 1 < K on the same row); f16 pairs at an
// even element are one word, q8_0 and q4_0 pairs at one share a block
vec2 w_pair(uint e)
{
#if W_TYPE == 1
    if ((e & 1u) == 0u) return unpackHalf2x16(W[e >> 1]);
#endif
    return vec2(w_at(e), w_at(e + 1u));
}

// Stages X[m0.., k0..] and W[n0.., k0..] (zeros past M, N and K): the 16
// consecutive invocations of a row read its 32 values of K side by side.
void stage_tiles(uint t, uint m0, uint n0, uint k0)
{
    [[unroll]] for (uint j = 0u; j < TILE * PAIRS / TXLM_CM_INVOCATIONS; j++) {
        uint i = t + TXLM_CM_INVOCATIONS * j, r = i / PAIRS, kp = i % PAIRS, k = k0 + 2u * kp;
        vec2 xv = vec2(0.0), wv = vec2(0.0);
        if (m0 + r < p.M && k < p.K) {
            uint e = p.x_off + (m0 + r) * p.ldx + k;
            xv = vec2(X[e], k + 1u < p.K ? X[e + 1u] : 0.0);
        }
        if (n0 + r < p.N && k < p.K) {
            uint e = p.w_off + (n0 + r) * p.w_ld + k;
            wv = k + 1u < p.K ? w_pair(e) : vec2(w_at(e), 0.0);
        }
        xs[r * STRIDE + kp] = f16vec2(xv);
        ws[r * STRIDE + kp] = f16vec2(wv);
    }
}

void main()
{
    uint t = gl_LocalInvocationID.x, sub = gl_SubgroupID, nsub = gl_NumSubgroups;
    uint n0 = gl_WorkGroupID.x * TILE, m0 = gl_WorkGroupID.y * TILE;

    coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator> acc[FPS];
    [[unroll]] for (uint i = 0u; i < FPS; i++)
        acc[i] = coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator>(0.0);

    for (uint k0 = 0u; k0 < p.K; k0 += TK) {
        stage_tiles(t, m0, n0, k0);
        barrier();
        [[unroll]] for (uint kk = 0u; kk < TK; kk += CM_K) {
            [[unroll]] for (uint i = 0u; i < FPS; i++) {
                uint f = sub + i * nsub;
                if (f < FRAGS) {
                    coopmat<float16_t, gl_ScopeSubgroup, CM_M, CM_K, gl_MatrixUseA> a;
                    coopmat<float16_t, gl_ScopeSubgroup, CM_K, CM_N, gl_MatrixUseB> b;
                    coopMatLoad(a, xs, (f % FM) * CM_M * STRIDE + kk / 2u, STRIDE, gl_CooperativeMatrixLayoutRowMajor);
                    coopMatLoad(b, ws, (f / FM) * CM_N * STRIDE + kk / 2u, STRIDE, gl_CooperativeMatrixLayoutColumnMajor);
                    acc[i] = coopMatMulAdd(a, b, acc[i]);
                }
            }
        }
        barrier();
    }

    uint lane = gl_SubgroupInvocationID, base = sub * CM_M * CM_N;
    [[unroll]] for (uint i = 0u; i < FPS; i++) {
        uint f = sub + i * nsub;
        if (f < FRAGS) {
            coopMatStore(acc[i], stage, base, CM_N, gl_CooperativeMatrixLayoutRowMajor);
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            uint fm0 = m0 + (f % FM) * CM_M, fn0 = n0 + (f / FM) * CM_N;
            for (uint e = lane; e < CM_M * CM_N; e += gl_SubgroupSize) {
                uint m = fm0 + e / CM_N, n = fn0 + e % CM_N;
                if (m < p.M && n < p.N) store(m, n, stage[base + e]);
            }
            subgroupBarrier();
        }
    }
}
