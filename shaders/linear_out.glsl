// What the matrix kernels share (all but linear.comp): the push constants
// (contract.h, txlm_linear_push), the bias, residual, output and step
// bindings, and the epilogue y = alpha * (acc + b) (+ReLU) (+R) stored at
// row m, column n. The kernels that store through store() also take
// SPLIT: binding 3 is then a second output rather than the residual
// (engine/ops.c: linear_rules says which kernels do).

layout(std430, binding = 2) readonly buffer Bb { float B[]; };
layout(std430, binding = 3) buffer Rb { float R[]; };
#if defined(LN) && LN
layout(std430, binding = 4) coherent buffer Yb { float Y[]; };  // read back by another workgroup (gemv_tex.comp)
#else
layout(std430, binding = 4) buffer Yb { float Y[]; };
#endif

#include "step.glsl"

// DYN_Y: the output starts STEP[TXLM_STEP_KV_OUT] elements further on
const uint HAS_BIAS = TXLM_LINF_BIAS, RELU = TXLM_LINF_RELU, RESIDUAL = TXLM_LINF_RESIDUAL, DYN_Y = TXLM_LINF_DYN_Y,
           SPLIT = TXLM_LINF_SPLIT;

layout(push_constant) uniform Push { txlm_linear_push p; };

uint y_base() { return (p.flags & DYN_Y) != 0u ? p.y_off + STEP[TXLM_STEP_KV_OUT] : p.y_off; }

bool plain_store() { return (p.flags & (HAS_BIAS | RELU | RESIDUAL)) == 0u && p.alpha == 1.0; }

// The epilogue applied in place to Y[m0.., n0..] (rows x cols), written
// raw before: big register blocks store in an unrolled sequence of plain
// stores and run this loop once, instead of unrolling the epilogue for
// every element (llvmpipe took 22 s to compile that for a 32x16 block).
void finish_block(uint m0, uint n0, uint rows, uint cols)
{
    if (plain_store()) return;
    uint y0 = y_base();
    [[dont_unroll]] for (uint r = 0u; r < rows; r++)
        [[dont_unroll]] for (uint c = 0u; c < cols; c++) {
            uint m = m0 + r, n = n0 + c, i = y0 + m * p.ldy + n;
            float y = Y[i];
            if ((p.flags & HAS_BIAS) != 0u) y += B[p.b_off + n];
            y *= p.alpha;
            if ((p.flags & RELU) != 0u) y = max(y, 0.0);
            if ((p.flags & RESIDUAL) != 0u) y += R[p.r_off + m * p.ldr + n];
            Y[i] = y;
        }
}

void store(uint m, uint n, float y)
{
    if ((p.flags & HAS_BIAS) != 0u) y += B[p.b_off + n];
    y *= p.alpha;
    if ((p.flags & RELU) != 0u) y = max(y, 0.0);
    if ((p.flags & RESIDUAL) != 0u) y += R[p.r_off + m * p.ldr + n];
    if ((p.flags & SPLIT) != 0u) {
        if (n < p.split) {
            R[p.r_off + m * p.ldr + n] = y;
            return;
        }
        n -= p.split;
    }
    Y[y_base() + m * p.ldy + n] = y;
}
