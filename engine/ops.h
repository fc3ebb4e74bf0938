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

/* Words of txlm_ops.sync: word 0 for txlm_op_linear_ln, then the
 * attention's whose last run merges the runs: one per head group and
 * query of the one-query kernel, one per query tile and head of the
 * tiled ones, for each stream of a dispatch (engine/attn_streams.c puts
 * streams in other dispatches where they do not fit). */
#define TXLM_SYNC_WORDS 2048u

/* The shader's flags (shaders/contract.h, TXLM_LINF_*) and one choice:
 * TXLM_LIN_RESIDUAL: set by txlm_op_linear where a residual is given.
 * TXLM_LIN_DYN_Y: Y starts STEP[TXLM_STEP_KV_OUT] elements after y.off,
 * a value written before each submission rather than recorded.
 * TXLM_LIN_BLOCK: the matrix kernel even for one row, so a row's bits do
 * not depend on how many rows were computed with it (position keys); a
 * choice of kernel, not a shader flag. */
enum {
    TXLM_LIN_RELU = TXLM_LINF_RELU,
    TXLM_LIN_RESIDUAL = TXLM_LINF_RESIDUAL,
    TXLM_LIN_DYN_Y = TXLM_LINF_DYN_Y,
    TXLM_LIN_BLOCK = 1u << 16,
};
/* The flags of txlm_linear_args that go to the shader as they are. */
#define TXLM_LIN_SHADER_FLAGS (TXLM_LINF_RELU | TXLM_LINF_RESIDUAL | TXLM_LINF_DYN_Y)

/* Y[m, n] = scale * (X · W[row0 : row0+n]^T + bias[bias_off ..]) (+ relu) (+ R):
 * every projection of the model. What a call leaves out is off: no bias,
 * no residual, scale 1. Handles W split into chunks. */
typedef struct txlm_linear_args {
    txlm_arg x;                  /* X [m, K] */
    const txlm_gpu_tensor *w;    /* W [*, K] */
    uint32_t row0, n;            /* W's rows used, Y's columns */
    const txlm_gpu_tensor *bias; /* one per column of Y, from element bias_off */
    uint32_t bias_off;
    const txlm_arg *residual;    /* R [m, n], added last */
    txlm_arg y;                  /* Y [m, n] */
    uint32_t m;
    uint32_t flags;              /* TXLM_LIN_RELU, TXLM_LIN_BLOCK, TXLM_LIN_DYN_Y (Y only, not split_y) */
    float scale;                 /* 0: 1 */
    const txlm_arg *split_y;     /* with no residual: columns [0, split) of the result go here [m, split], the
                                  * others to Y from its column 0 (one dispatch where the kernel takes it) */
    uint32_t split;
} txlm_linear_args;
void txlm_op_linear(txlm_ops *o, const txlm_linear_args *a);
/* For tokens with id in [id_lo, id_lo + E->rows): Y[i] = alpha * E[id - id_lo];
 * the other rows left as they are, or with zero_rest set to 0. */
void txlm_op_gather(txlm_ops *o, txlm_view ids, uint32_t n, const txlm_gpu_tensor *e, int32_t id_lo, txlm_arg y, float alpha,
                    int zero_rest);
/* Y[m, n] = X · W[0 : n]^T + bias (+ R), then its LayerNorm over the
 * first d columns (zeros after them) into ln_out, or into Y itself: a
 * post-norm block's product and LayerNorm, or a pre-norm block's product
 * and the LayerNorm of the next block's input. One row is one dispatch
 * where the product's kernel has a twin that normalises (its last
 * workgroup does: gemv_tex on texel devices, gemv_gpu on GPUs) and
 * ln_out is in Y's buffer; otherwise txlm_op_linear then
 * txlm_op_layernorm. */
typedef struct txlm_linear_ln_args {
    txlm_arg x;
    const txlm_gpu_tensor *w, *bias; /* bias may be NULL */
    uint32_t n;
    const txlm_arg *residual;        /* may be NULL */
    txlm_arg y;
    uint32_t m;
    const txlm_gpu_tensor *ln_g, *ln_b;
    uint32_t d;
    float eps;
    const txlm_arg *ln_out;          /* NULL: Y normalised in place */
} txlm_linear_ln_args;
void txlm_op_linear_ln(txlm_ops *o, const txlm_linear_ln_args *a);

/* Y = LN(X (+ R)) over the first d columns of each row; columns [d, d_out)
 * of Y are set to zero (the padding of model_pad.c). */
typedef struct txlm_layernorm_args {
    txlm_arg x;
    const txlm_arg *residual; /* may be NULL */
    const txlm_gpu_tensor *g, *b;
    txlm_arg y;
    uint32_t rows, d, d_out;
    float eps;
} txlm_layernorm_args;
void txlm_op_layernorm(txlm_ops *o, const txlm_layernorm_args *a);

typedef struct txlm_attn_shape {
    uint32_t qlen, mlen, H, dh;
    uint32_t clamp_max;     /* largest distance row in the rk table */
    uint32_t same_length, mem_len; /* mem_len of same_length's rule: the memory's + hparams' same_length_rule */
    uint32_t kv_row0;       /* row of kv holding the first memory row (with kv_dyn: plus a step word) */
    uint32_t dh_real;       /* the model's d_head when dh is padded (scores scale by it); 0: dh */
    uint32_t kv_rows;       /* rows of the kv ring (key j at row (kv_row0 + j) mod kv_rows); 0: kv_row0 + klen */
    uint32_t kv_dyn;        /* 0, or 1 + the step word added to kv_row0 (shaders/contract.h; needs kv_rows) */
    uint32_t q0;            /* the first row of q and out that are this stream's */
    uint32_t f16;           /* the model's weights are f16 or quantised: the attention may multiply in f16 on the
                             * matrix units (attn_cm.comp); 0 keeps an f32 model's attention in f32 */
} txlm_attn_shape;

/* Relative attention, output heads into out [qlen, H*dh]. q [qlen, H*dh]
 * (this segment's queries); kv a ring of [kv_rows, 2*H*dh] (keys | values,
 * memory rows first, from row kv_row0 (+ a step word with kv_dyn), wrapping to
 * row 0); rk [distances, H*dh] at element rk_off. With probs NULL one
 * fused pass is used where the shape allows (online softmax, no score
 * matrix); otherwise the probabilities are left in *probs [H, qlen, klen]. */
typedef struct txlm_attention_args {
    const txlm_attn_shape *shape;
    txlm_view q, kv, rk;
    uint32_t rk_off;
    const txlm_gpu_tensor *r_w_bias, *r_r_bias; /* u and v of the paper */
    const txlm_view *probs;
    txlm_view scratch, out;
} txlm_attention_args;
void txlm_op_attention(txlm_ops *o, const txlm_attention_args *a);

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
 * out [4, H, qlen, klen], 0 where masked (analysis only; probs and scratch unused). */
void txlm_op_attention_terms(txlm_ops *o, const txlm_attention_args *a);

/* DST[:, 0:n_write] = log_softmax(SRC rows over n)[:, 0:n_write] (+ ADD[row][add_col] if add).
 * With pick (int32 tokens, one per row; column j is token pick_base + j)
 * only each row's picked column is written, if it is among the first n_write.
 * With row_map (int32, one per SRC row), SRC row i is row row_map[i] of
 * DST, ADD and pick. */
typedef struct txlm_logsoftmax_args {
    txlm_arg src, dst;
    const txlm_arg *add; /* may be NULL */
    uint32_t add_col;
    uint32_t rows, n, n_write;
    const txlm_arg *pick; /* may be NULL */
    uint32_t pick_base;
    const txlm_arg *row_map; /* may be NULL */
} txlm_logsoftmax_args;
void txlm_op_logsoftmax(txlm_ops *o, const txlm_logsoftmax_args *a);

#endif
