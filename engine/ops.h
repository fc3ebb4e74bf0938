/* One function per operation of the forward pass. Each records its
 * dispatch(es) and a barrier, so calls read in order like the equations.
 * Activations are addressed as (view, element offset, row stride). */
#ifndef TXLM_OPS_H
#define TXLM_OPS_H

#include "tensor.h"

typedef struct txlm_arg {
    txlm_view view;
    uint32_t off;  /* element offset of row 0 */
    uint32_t ld;   /* elements between rows */
} txlm_arg;

static inline txlm_arg txlm_arg_of(const txlm_buf *b, uint32_t off, uint32_t ld)
{
    return (txlm_arg){txlm_view_of(b), off, ld};
}

typedef struct txlm_ops {
    txlm_rec *rec;
    txlm_view dummy;   /* bound to bindings a dispatch does not use */
    txlm_view sync;    /* TXLM_SYNC_WORDS uints, 0 between dispatches: counts of finished workgroups for
                        * the kernels whose last workgroup finishes the op (no buffer: never so) */
} txlm_ops;

/* Words of txlm_ops.sync: word 0 for txlm_op_linear_ln, then one per head
 * group and query of the one-query attention. */
#define TXLM_SYNC_WORDS 256u

/* TXLM_LIN_BLOCK: the matrix kernel even for one row, so a row's bits do
 * not depend on how many rows were computed with it (position keys).
 * TXLM_LIN_DYN_Y: Y starts step[1] elements after y.off (shaders/step.glsl),
 * a value written before each submission rather than recorded. */
enum { TXLM_LIN_RELU = 2, TXLM_LIN_RESIDUAL = 4, TXLM_LIN_BLOCK = 16, TXLM_LIN_DYN_Y = 32 };

/* Y[M, nrows] = alpha * (X · W[row0 : row0+nrows]^T + bias[bias_off..]) (+relu) (+R).
 * bias may be NULL; R used with TXLM_LIN_RESIDUAL. Handles chunked W. */
void txlm_op_linear(txlm_ops *o, txlm_arg x, const txlm_gpu_tensor *w, uint32_t row0, uint32_t nrows,
                    const txlm_gpu_tensor *bias, uint32_t bias_off, const txlm_arg *r, txlm_arg y, uint32_t M,
                    uint32_t flags, float alpha);
/* Y[M, N] = X[M, K] · P[K, N] (P a projection stored [K, N], K = P->rows). */
void txlm_op_linear_t(txlm_ops *o, txlm_arg x, const txlm_gpu_tensor *p, txlm_arg y, uint32_t M);
/* For tokens with id in [id_lo, id_lo + E->rows): Y[i] = alpha * E[id - id_lo]. */
void txlm_op_gather(txlm_ops *o, txlm_view ids, uint32_t n, const txlm_gpu_tensor *e, int32_t id_lo, txlm_arg y, float alpha);
/* Y[M, nrows] = LayerNorm(X · W[0 : nrows]^T + bias (+R)) over the first d
 * columns (zeros after them): a post-norm block's product and LayerNorm.
 * One row on texel devices is one dispatch (the last workgroup normalises);
 * otherwise txlm_op_linear then txlm_op_layernorm in place. */
void txlm_op_linear_ln(txlm_ops *o, txlm_arg x, const txlm_gpu_tensor *w, uint32_t nrows, const txlm_gpu_tensor *bias,
                       const txlm_arg *r, txlm_arg y, uint32_t M, const txlm_gpu_tensor *g, const txlm_gpu_tensor *b,
                       uint32_t d, float eps);

/* Y = LN(X (+ R)) over the first d columns of each row; columns [d, d_out)
 * of Y are set to zero (the padding of model_pad.c). R may be NULL. */
void txlm_op_layernorm(txlm_ops *o, txlm_arg x, const txlm_arg *r, const txlm_gpu_tensor *g, const txlm_gpu_tensor *b,
                       txlm_arg y, uint32_t rows, uint32_t d, uint32_t d_out, float eps);

typedef struct txlm_attn_shape {
    uint32_t qlen, mlen, H, dh;
    uint32_t clamp_max;     /* largest distance row in the rk table */
    uint32_t same_length, mem_len; /* mem_len of same_length's rule: the memory's + hparams' same_length_rule */
    uint32_t kv_row0;       /* row of kv holding the first memory row (with kv_dyn: plus step[0]) */
    uint32_t dh_real;       /* the model's d_head when dh is padded (scores scale by it); 0: dh */
    uint32_t kv_rows;       /* rows of the kv ring (key j at row (kv_row0 + j) mod kv_rows); 0: kv_row0 + klen */
    uint32_t kv_dyn;        /* memory row 0 at kv_row0 + step[0] (shaders/step.glsl; needs kv_rows) */
} txlm_attn_shape;

/* Relative attention, output heads into O [qlen, H*dh]. q [qlen, H*dh]
 * (this segment's queries); kv a ring of [kv_rows, 2*H*dh] (keys | values,
 * memory rows first, from row kv_row0 (+ step[0] with kv_dyn), wrapping to row 0); rk [distances,
 * H*dh] at element rk_off. With probs == NULL one
 * fused pass is used where the shape allows (online softmax, no score
 * matrix); otherwise the probabilities are left in *probs [H, qlen, klen]. */
void txlm_op_attention(txlm_ops *o, const txlm_attn_shape *s, txlm_view q, txlm_view kv, txlm_view rk, uint32_t rk_off,
                       const txlm_gpu_tensor *r_w_bias, const txlm_gpu_tensor *r_r_bias, const txlm_view *probs,
                       txlm_view scratch, txlm_view out);

/* Keys per run of the split attention (shaders/attn_split.comp, RUN). */
#define TXLM_ATTN_RUN 16u
/* Keys per run of the lane-per-element split (shaders/attn_split_sg.comp). */
#define TXLM_ATTN_RUN_SG 64u
/* Heads per workgroup of that kernel (HG there). */
#define TXLM_ATTN_SG_HEADS 4u
/* Scratch bytes the split attention needs for shape s (with at most 4
 * queries it is used when the scratch view holds this much). */
uint64_t txlm_attn_split_bytes(const txlm_attn_shape *s);

/* The four unscaled score terms (a) q·k (b) q·rk (c) u·k (d) v·rk into
 * terms [4, H, qlen, klen], 0 where masked (analysis only). */
void txlm_op_attention_terms(txlm_ops *o, const txlm_attn_shape *s, txlm_view q, txlm_view kv, txlm_view rk, uint32_t rk_off,
                             const txlm_gpu_tensor *r_w_bias, const txlm_gpu_tensor *r_r_bias, txlm_view terms);

/* DST[:, 0:n_write] = log_softmax(SRC rows over n)[:, 0:n_write] (+ ADD[row][add_col] if add).
 * With pick (int32 tokens, one per row; column j is token pick_base + j)
 * only each row's picked column is written, if it is among the first n_write.
 * With row_map (int32, one per SRC row), SRC row i is row row_map[i] of
 * DST, ADD and pick. */
void txlm_op_logsoftmax(txlm_ops *o, txlm_arg src, txlm_arg dst, const txlm_arg *add, uint32_t add_col, uint32_t rows,
                        uint32_t n, uint32_t n_write, const txlm_arg *pick, uint32_t pick_base, const txlm_arg *row_map);

#endif
