/* Training checkpoints that carry their own hyper-parameters and
 * vocabulary, read from their pickled objects without running anything:
 * NVIDIA's training checkpoints (ckpt_nvidia.c) and the authors' whole
 * saved modules (ckpt_module.c). Each gives what a config.json, a
 * vocabulary and a state dict would, in the authors' tensor names. */
#ifndef TXLM_CKPT_SOURCE_H
#define TXLM_CKPT_SOURCE_H

#include <stddef.h>

#include "checkpoint.h"
#include "cluster_order.h"
#include "hparams.h"
#include "pack.h"
#include "pickle.h"
#include "torch.h"

typedef struct txlm_ckpt_source {
    txlm_hparams h;
    txlm_checkpoint *ck;          /* the weights, authors' names (crit.out_layers.N.weight, ...) */
    txlm_vocab_buf vocab;         /* filled when the file holds one (vocab.v.n > 0) */
    txlm_cluster_order order;
    char what[160];               /* which code wrote it, for txlm-pack's output */
    char why[160];                /* why its tail clusters are in `order` */
    char notes[512];              /* what else txlm-pack tells (settings taken from elsewhere), or empty */
} txlm_ckpt_source;

void txlm_ckpt_source_free(txlm_ckpt_source *s);

/* A dict holding model_config, model_state and vocab (train.py's save_checkpoint). */
int txlm_nvidia_is(const txlm_pk_value *root);
int txlm_nvidia_read(txlm_torch_obj *o, txlm_ckpt_source *out, txlm_err *err);

/* A whole module saved with torch.save(model) (an object record with _modules). */
int txlm_module_is(const txlm_pk_value *root);
int txlm_module_read(txlm_torch_obj *o, txlm_ckpt_source *out, txlm_err *err);

/* pk_hparams.c: hyper-parameters by name from `get` (a dict, or a module
 * tree's attributes). Keys: n_token, n_layer, n_head, d_model, d_head,
 * d_inner, d_embed, div_val, cutoffs (n_token at the end is dropped),
 * pre_lnorm, tgt_len, ext_len, mem_len, same_length, attn_type,
 * clamp_len, sample_softmax; tie_weight and tie_projs when `ties`. */
typedef const txlm_pk_value *(*txlm_pk_getter)(void *user, const char *key);
int txlm_pk_hparams(const char *where, txlm_pk_getter get, void *user, int ties, txlm_hparams *h, txlm_err *err);

#endif
