#include "hparams.h"

#include <stdarg.h>
#include <stdio.h>

/* Caps keep every derived size far from 64-bit overflow and refuse
 * nonsense before anything is allocated. */
#define CAP_TOKENS (1u << 24)
#define CAP_DIM (1u << 16)
#define CAP_LAYERS 1024u
#define CAP_HEADS 1024u
#define CAP_LEN (1u << 20)

static int bad(char *err, unsigned errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int txlm_hparams_validate(const txlm_hparams *h, char *err, unsigned errlen)
{
    if (h->n_token < 1 || h->n_token > CAP_TOKENS) return bad(err, errlen, "n_token %u out of range [1, %u]", h->n_token, CAP_TOKENS);
    if (h->d_model < 2 || h->d_model > CAP_DIM || h->d_model % 2) return bad(err, errlen, "d_model %u must be even and in [2, %u]", h->d_model, CAP_DIM);
    if (h->d_embed < 1 || h->d_embed > CAP_DIM) return bad(err, errlen, "d_embed %u out of range [1, %u]", h->d_embed, CAP_DIM);
    if (h->n_head < 1 || h->n_head > CAP_HEADS) return bad(err, errlen, "n_head %u out of range [1, %u]", h->n_head, CAP_HEADS);
    if (h->d_head < 1 || h->d_head > 256) return bad(err, errlen, "d_head %u out of range [1, 256]", h->d_head);
    if ((uint64_t)h->n_head * h->d_head > CAP_DIM) return bad(err, errlen, "n_head * d_head = %llu exceeds %u", (unsigned long long)h->n_head * h->d_head, CAP_DIM);
    if (h->d_inner < 1 || h->d_inner > 4 * CAP_DIM) return bad(err, errlen, "d_inner %u out of range [1, %u]", h->d_inner, 4 * CAP_DIM);
    if (h->n_layer < 1 || h->n_layer > CAP_LAYERS) return bad(err, errlen, "n_layer %u out of range [1, %u]", h->n_layer, CAP_LAYERS);
    if (h->div_val < 1 || h->div_val > 64) return bad(err, errlen, "div_val %u out of range [1, 64]", h->div_val);
    if (h->n_cutoffs > TXLM_MAX_CUTOFFS) return bad(err, errlen, "%u cutoffs, at most %u supported", h->n_cutoffs, TXLM_MAX_CUTOFFS);
    uint32_t prev = 0;
    for (uint32_t i = 0; i < h->n_cutoffs; i++) {
        if (h->cutoffs[i] <= prev || h->cutoffs[i] >= h->n_token)
            return bad(err, errlen, "cutoffs[%u] = %u: cutoffs must ascend strictly inside (0, n_token = %u)", i, h->cutoffs[i], h->n_token);
        prev = h->cutoffs[i];
    }
    for (uint32_t c = 0; c <= h->n_cutoffs; c++) {
        if (txlm_cluster_dim(h, c) < 1) return bad(err, errlen, "cluster %u: d_embed %u / div_val^%u is 0", c, h->d_embed, c);
        if (h->tie_projs[c] > 1) return bad(err, errlen, "tie_projs[%u] must be 0 or 1", c);
    }
    if (h->tie_weight > 1 || h->pre_lnorm > 1 || h->untie_r > 1 || h->same_length > 1) return bad(err, errlen, "boolean hyper-parameter not 0 or 1");
    if (h->zero_memory > 1) return bad(err, errlen, "zero_memory %u is not 0 or 1", h->zero_memory);
    if (h->same_length_rule > TXLM_SAME_LENGTH_NVIDIA)
        return bad(err, errlen, "same_length_rule %u is not 0 (the authors') or 1 (NVIDIA's)", h->same_length_rule);
    if (h->clamp_len > (int32_t)CAP_LEN) return bad(err, errlen, "clamp_len %d exceeds %u", h->clamp_len, CAP_LEN);
    if (h->mem_len > CAP_LEN) return bad(err, errlen, "mem_len %u exceeds %u", h->mem_len, CAP_LEN);
    if (h->tgt_len > CAP_LEN) return bad(err, errlen, "tgt_len %u exceeds %u", h->tgt_len, CAP_LEN);
    if (h->ext_len != 0) return bad(err, errlen, "ext_len %u is not supported (must be 0)", h->ext_len);
    if (h->attn_type != 0) return bad(err, errlen, "attn_type %u is not supported (only 0, relative attention)", h->attn_type);
    if (!(h->layer_norm_epsilon > 0.0f && h->layer_norm_epsilon < 1.0f)) return bad(err, errlen, "layer_norm_epsilon %g out of range (0, 1)", (double)h->layer_norm_epsilon);
    return 0;
}
