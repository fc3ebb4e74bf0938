/* Transformer-XL hyper-parameters as the engine and the file format see them. */
#ifndef TXLM_HPARAMS_H
#define TXLM_HPARAMS_H

#include <stdint.h>

#define TXLM_MAX_CUTOFFS 15
#define TXLM_MAX_CLUSTERS (TXLM_MAX_CUTOFFS + 1)

typedef struct txlm_hparams {
    uint32_t n_token;
    uint32_t d_model;
    uint32_t d_embed;
    uint32_t n_head;
    uint32_t d_head;
    uint32_t d_inner;
    uint32_t n_layer;
    uint32_t div_val;
    uint32_t n_cutoffs;                 /* cutoffs strictly inside (0, n_token) */
    uint32_t cutoffs[TXLM_MAX_CUTOFFS];
    uint8_t tie_projs[TXLM_MAX_CLUSTERS]; /* one per cluster (n_cutoffs + 1) */
    uint8_t tie_weight;
    uint8_t pre_lnorm;
    uint8_t untie_r;
    uint8_t same_length;
    int32_t clamp_len;                  /* <= 0: no clamping */
    uint32_t mem_len;
    uint32_t tgt_len;
    uint32_t ext_len;                   /* must be 0 */
    uint32_t attn_type;                 /* must be 0 */
    float layer_norm_epsilon;
    /* Where same_length's lower bound lies: TXLM_SAME_LENGTH_AUTHORS, the
     * authors' and HF's mask_len = klen - mem_len, or
     * TXLM_SAME_LENGTH_NVIDIA, NVIDIA's klen - mem_len - 1 (each query sees
     * one key more). The attention kernels take mem_len + this. */
    uint32_t same_length_rule;
    /* 1: a session starts from mem_len rows of zero layer inputs by
     * default (the authors' TensorFlow evaluation, train_gpu.py's np.zeros
     * memories), 0: from an empty memory; txlm_session_options overrides. */
    uint32_t zero_memory;
} txlm_hparams;

enum { TXLM_SAME_LENGTH_AUTHORS = 0, TXLM_SAME_LENGTH_NVIDIA = 1 };

/* Cluster c holds token ids [txlm_cluster_begin(h,c), txlm_cluster_end(h,c)). */
static inline uint32_t txlm_n_clusters(const txlm_hparams *h) { return h->n_cutoffs + 1; }
static inline uint32_t txlm_cluster_begin(const txlm_hparams *h, uint32_t c)
{
    return c == 0 ? 0 : h->cutoffs[c - 1];
}
static inline uint32_t txlm_cluster_end(const txlm_hparams *h, uint32_t c)
{
    return c == h->n_cutoffs ? h->n_token : h->cutoffs[c];
}
/* Width of cluster c's embedding: d_embed / div_val^c (div_val 1: d_embed for all). */
static inline uint32_t txlm_cluster_dim(const txlm_hparams *h, uint32_t c)
{
    uint32_t d = h->d_embed;
    if (h->div_val > 1)
        for (uint32_t i = 0; i < c && d > 0; i++) d /= h->div_val;
    return d;
}

/* Checks every invariant the engine relies on (ranges, cutoffs ascending,
 * d_embed divisible, supported attn_type/ext_len). Returns 0 or writes a
 * one-line reason into err. */
int txlm_hparams_validate(const txlm_hparams *h, char *err, unsigned errlen);

#endif
