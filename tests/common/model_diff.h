/* Comparing what a .txlm file holds with what was written into it. */
#ifndef TXLM_TEST_COMMON_MODEL_DIFF_H
#define TXLM_TEST_COMMON_MODEL_DIFF_H

#include <stdint.h>
#include <string.h>

#include "hparams.h"
#include "vocab.h"

/* The first hyper-parameter that differs, or NULL when all agree (cutoffs
 * and tie_projs compared as far as n_cutoffs uses them). */
static inline const char *hparams_diff(const txlm_hparams *a, const txlm_hparams *b)
{
    if (a->n_token != b->n_token || a->d_model != b->d_model || a->d_embed != b->d_embed) return "sizes";
    if (a->n_head != b->n_head || a->d_head != b->d_head || a->d_inner != b->d_inner) return "heads";
    if (a->n_layer != b->n_layer || a->div_val != b->div_val || a->n_cutoffs != b->n_cutoffs) return "layers";
    for (uint32_t i = 0; i < a->n_cutoffs && i < TXLM_MAX_CUTOFFS; i++)
        if (a->cutoffs[i] != b->cutoffs[i]) return "cutoffs";
    for (uint32_t i = 0; i <= a->n_cutoffs && i < TXLM_MAX_CLUSTERS; i++)
        if (a->tie_projs[i] != b->tie_projs[i]) return "tie_projs";
    if (a->tie_weight != b->tie_weight || a->pre_lnorm != b->pre_lnorm) return "flags";
    if (a->untie_r != b->untie_r || a->same_length != b->same_length) return "flags";
    if (a->clamp_len != b->clamp_len || a->mem_len != b->mem_len || a->tgt_len != b->tgt_len) return "lengths";
    if (a->ext_len != b->ext_len || a->attn_type != b->attn_type) return "attention";
    if (a->layer_norm_epsilon != b->layer_norm_epsilon) return "layer_norm_epsilon";
    return NULL;
}

/* The first vocabulary field that differs, or NULL; *sym receives the
 * first differing symbol's id (when that is what differs). */
static inline const char *vocab_diff(const txlm_vocab *a, const txlm_vocab *b, uint32_t *sym)
{
    if (a->n != b->n || a->kind != b->kind || a->flags != b->flags) return "vocab head";
    if (a->eos_id != b->eos_id || a->unk_id != b->unk_id) return "vocab ids";
    if (a->blob_size != b->blob_size) return "blob size";
    for (uint32_t i = 0; i < a->n; i++) {
        uint32_t la, lb;
        const char *sa = txlm_vocab_sym(a, i, &la), *sb = txlm_vocab_sym(b, i, &lb);
        if (la != lb || memcmp(sa, sb, la) != 0) return *sym = i, "symbol";
    }
    return NULL;
}

#endif
