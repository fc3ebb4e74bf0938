/* The CPU reference: each operation of the Transformer-XL forward pass in
 * plain C, float in and out, every sum accumulated in double. The kernel
 * tests compare the GPU against these, and ref_model.h chains them into
 * the whole model. */
#ifndef TXLM_REF_OPS_H
#define TXLM_REF_OPS_H

#include <stdint.h>

/* Y[M, N] = X[M, K] · W[N, K]^T (+ b[N]) (then ReLU if relu). b may be NULL. */
void ref_linear(const float *x, const float *w, const float *b, uint32_t M, uint32_t N, uint32_t K, int relu, float *y);

/* Y[M, N] = X[M, K] · P[K, N] (the adaptive softmax's projections, z · P). */
void ref_linear_t(const float *x, const float *p, uint32_t M, uint32_t N, uint32_t K, float *y);

/* Y = LayerNorm(X (+ R)) over rows of d: (v - mean) / sqrt(var + eps) * g + b,
 * biased variance. R may be NULL; Y may alias X. */
void ref_layernorm(const float *x, const float *r, const float *g, const float *b, uint32_t rows, uint32_t d, float eps,
                   float *y);

/* Whether key j is hidden from query i (causal, and with same_length the
 * lower bound that gives every query the same number of keys). */
int ref_attn_masked(int i, int j, int qlen, int mlen, int same_length, int mem_len);

/* Relative attention of one layer, all heads.
 *   q [qlen, H*dh] (this segment's queries), k, v [klen, H*dh] (memory rows first),
 *   rk [klen, H*dh] in R's order: row j belongs to position klen-1-j (already clamped),
 *   r_w_bias, r_r_bias [H, dh].
 * Outputs (each may be NULL): probs [H, qlen, klen] (0 where masked);
 * terms [4, H, qlen, klen]: unscaled (a) q·k (b) q·rk (c) u·k (d) v·rk, 0 where
 * masked; out [qlen, H*dh] the heads' weighted values. The rel-shift is done
 * by index: query i and key j use rk row j + qlen - 1 - i. */
void ref_rel_attention(const float *q, const float *k, const float *v, const float *rk, const float *r_w_bias,
                       const float *r_r_bias, uint32_t qlen, uint32_t mlen, uint32_t H, uint32_t dh, int same_length,
                       uint32_t mem_len, float *probs, float *terms, float *out);

/* Y[r, :] = log_softmax(X[r, :]) over n columns, for `rows` rows. Y may alias X. */
void ref_log_softmax(const float *x, uint32_t rows, uint32_t n, float *y);

/* The sinusoid table R [klen, d] for positions klen-1 .. 0 (clamped to
 * clamp_len when > 0), in float32 as the reference implementation computes it. */
void ref_pos_emb(uint32_t klen, uint32_t d, int32_t clamp_len, float *R);

#endif
