/* A Transformer-XL model on the device, as plain structs: hyper-parameters,
 * per-layer weights, and per-cluster embedding/softmax weights with the
 * ties of the checkpoint already resolved. */
#ifndef TXLM_MODEL_H
#define TXLM_MODEL_H

#include <pthread.h>

#include "context.h"
#include "hparams.h"
#include "tensor.h"
#include "txlm.h"

/* Widths of the device layout (model_pad.c): d_model, d_head and d_inner,
 * or those rounded up with zero padding so that the fast kernels apply.
 * Weights, activations and the memory use these; the hyper-parameters
 * (scales, LayerNorm statistics, saved states) keep the real ones. */
typedef struct txlm_dims {
    uint32_t d, dh, di;
} txlm_dims;

typedef struct txlm_layer {
    const txlm_gpu_tensor *qkv;        /* [3*H*dh, d] */
    const txlm_gpu_tensor *r_net;      /* [H*dh, d] */
    const txlm_gpu_tensor *o_net;      /* [d, H*dh] */
    const txlm_gpu_tensor *attn_ln_g, *attn_ln_b;
    const txlm_gpu_tensor *r_w_bias, *r_r_bias; /* [H, dh] */
    const txlm_gpu_tensor *ff_w1, *ff_b1;       /* [d_inner, d], [d_inner] */
    const txlm_gpu_tensor *ff_w2, *ff_b2;       /* [d, d_inner], [d] */
    const txlm_gpu_tensor *ff_ln_g, *ff_ln_b;
} txlm_layer;

/* One table of the adaptive input embedding (div_val 1: a single table for all ids). */
typedef struct txlm_emb_part {
    int32_t id_lo, id_hi;               /* ids [id_lo, id_hi) */
    const txlm_gpu_tensor *table;       /* [id_hi - id_lo, dim] */
    const txlm_gpu_tensor *proj;        /* [d_model, dim] or NULL */
} txlm_emb_part;

/* One cluster of the adaptive softmax. */
typedef struct txlm_out_cluster {
    uint32_t begin, end, dim;
    const txlm_gpu_tensor *weight;      /* rows [row0, row0 + end - begin) belong to the cluster */
    uint32_t row0;
    const txlm_gpu_tensor *bias;        /* elements [row0, ...) */
    const txlm_gpu_tensor *proj;        /* [d_model, dim], or NULL: logits use z directly */
    const txlm_gpu_tensor *proj_t;      /* proj transposed, f32 [dim, d_model]: z · proj as a Linear */
} txlm_out_cluster;

struct txlm_model {
    txlm_context *ctx;
    txlm_hparams h;
    txlm_dims dev;                      /* device widths */
    uint64_t id;                        /* identity: hash of hyper-parameters, tensor names and tensor hashes */
    txlm_gpu_tensor *tensors;           /* everything uploaded, in file order */
    uint32_t n_tensors;
    txlm_layer *layers;
    uint32_t n_emb_parts;
    txlm_emb_part emb[TXLM_MAX_CLUSTERS];
    uint32_t n_clusters;
    txlm_out_cluster out[TXLM_MAX_CLUSTERS];
    const txlm_gpu_tensor *cluster_w, *cluster_b; /* [n_cutoffs, d_embed], [n_cutoffs] */
    txlm_gpu_tensor proj_t[TXLM_MAX_CLUSTERS];    /* owned transposed copies (out[c].proj_t) */
    float *kv0;                         /* pre-norm: per layer [2*H*d_head] keys | values of LN(0); NULL otherwise */
    float *inv_freq;                    /* [d_model / 2] stored sinusoid frequencies, or NULL: the standard ones */
    txlm_vocab vocab;                   /* views into vocab_offsets / vocab_blob */
    uint32_t *vocab_offsets;
    char *vocab_blob;
    struct txlm_tokenizer *tok;         /* built on first use (txlm_tokenize) */
    void (*tok_free)(struct txlm_tokenizer *);
    pthread_mutex_t tok_lock;
};

#endif
