// What the matrix kernels share (all but linear.comp, which adds TRANS_W):
// the push constants (engine/ops.c, struct linear_push), the bias,
// residual, output and step bindings, and the epilogue
// y = alpha * (acc + b) (+ReLU) (+R) stored at row m, column n.

layout(std430, binding = 2) readonly buffer Bb { float B[]; };
layout(std430, binding = 3) readonly buffer Rb { float R[]; };
#if defined(LN) && LN
layout(std430, binding = 4) coherent buffer Yb { float Y[]; };  // read back by another workgroup (gemv_tex.comp)
#else
layout(std430, binding = 4) buffer Yb { float Y[]; };
#endif

#include "step.glsl"

// DYN_Y: the output starts STEP[1] elements further on (step.glsl)
const uint HAS_BIAS = 1u, RELU = 2u, RESIDUAL = 4u, DYN_Y = 16u;  // 8: linear.comp's TRANS_W

layout(push_constant) uniform Push {
    uint M, N, K;
    uint x_off, ldx;
    uint w_off, w_ld;
    uint y_off, ldy;
    uint b_off;
    uint r_off, ldr;
    uint flags;
    float alpha;
    uint ln_d, ln_d_out;  // LN kernels: LayerNorm over the first ln_d of ln_d_out columns
    float ln_eps;
} p;

uint y_base() { return (p.flags & DYN_Y) != 0u ? p.y_off + STEP[1] : p.y_off; }

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
    Y[y_base() + m * p.ldy + n] = y;
}
