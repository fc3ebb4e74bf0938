/* NVIDIA's Transformer-XL training checkpoints (DeepLearningExamples,
 * PyTorch/LanguageModeling/Transformer-XL/pytorch/train.py, save_checkpoint):
 * a dict of args, model_config, model_state, optimizer_state,
 * scheduler_state, vocab, amp_state and counters (newer ones also
 * rng_states and memory). Only model_config, model_state and vocab are
 * read; the optimizer's moments and the rest are never touched.
 *
 * NVIDIA's output layer names differ from the authors':
 * crit.out_layers_weights.N (present only when untied),
 * crit.out_layers_biases.N, crit.out_projs.N only at untied indices, and
 * crit.shared_out_projs.N, the embedding projections again (same
 * storage). Its same_length mask is built with mask_len = klen - mem_len
 * - 1 (mem_transformer.py), recorded as TXLM_SAME_LENGTH_NVIDIA. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm_status.h>

#include "ckpt_source.h"
#include "torch_read.h"

int txlm_nvidia_is(const txlm_pk_value *root)
{
    return root && root->kind == TXLM_PK_DICT && txlm_pk_dict_get(root, "model_config") &&
           txlm_pk_dict_get(root, "model_state") && txlm_pk_dict_get(root, "vocab");
}

static const txlm_pk_value *from_dict(void *user, const char *key) { return txlm_pk_dict_get(user, key); }

/* The authors' name for an NVIDIA state-dict name (into out), or "" for a
 * tensor that is a view of another one (crit.shared_out_projs.N). */
static void nv_name(const char *name, char *out, size_t cap)
{
    unsigned n;
    int end = 0;
    if (sscanf(name, "crit.out_layers_weights.%u%n", &n, &end) == 1 && !name[end]) snprintf(out, cap, "crit.out_layers.%u.weight", n);
    else if (sscanf(name, "crit.out_layers_biases.%u%n", &n, &end) == 1 && !name[end]) snprintf(out, cap, "crit.out_layers.%u.bias", n);
    else if (sscanf(name, "crit.shared_out_projs.%u%n", &n, &end) == 1 && !name[end]) out[0] = 0;
    else snprintf(out, cap, "%s", name);
}

static int same_storage(const txlm_pk_value *a, const txlm_pk_value *b)
{
    const txlm_pk_storage *x = &a->u.tensor.storage->u.storage, *y = &b->u.tensor.storage->u.storage;
    return x->key_len == y->key_len && !memcmp(x->key, y->key, x->key_len) && a->u.tensor.offset == b->u.tensor.offset;
}

/* crit.shared_out_projs.N must be word_emb.emb_projs.N itself. */
static int check_shared(txlm_torch_obj *o, const txlm_pk_value *state, const char *name, const txlm_pk_value *v, txlm_err *err)
{
    char emb[96];
    unsigned n = 0;
    sscanf(name, "crit.shared_out_projs.%u", &n);
    snprintf(emb, sizeof emb, "word_emb.emb_projs.%u", n);
    const txlm_pk_value *e = txlm_pk_dict_get(state, emb);
    if (v->kind != TXLM_PK_TENSOR || !e || e->kind != TXLM_PK_TENSOR || !same_storage(v, e))
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: model_state '%s' is not the embedding projection '%s' (NVIDIA's "
                         "checkpoints share it)", o->path, name, emb);
    return 0;
}

static int take_state(txlm_torch_obj *o, const txlm_pk_value *state, txlm_err *err)
{
    if (state->kind != TXLM_PK_DICT) {
        char d[240];
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: model_state is %s, not a state dict", o->path,
                         txlm_pk_describe(state, d, sizeof d));
    }
    for (uint32_t i = 0; i + 1 < state->n; i += 2) {
        const txlm_pk_value *k = state->u.seq.items[i], *v = state->u.seq.items[i + 1];
        char name[96], to[96];
        if (k->kind != TXLM_PK_STR || k->u.str.len >= sizeof name || memchr(k->u.str.s, 0, k->u.str.len))
            return txlm_fail(err, TXLM_ERR_FORMAT, "%s: model_state key %u is not a tensor name", o->path, i / 2);
        memcpy(name, k->u.str.s, k->u.str.len);
        name[k->u.str.len] = 0;
        nv_name(name, to, sizeof to);
        int rc = to[0] ? txlm_torch_add(o, to, v, err) : check_shared(o, state, name, v, err);
        if (rc) return rc;
    }
    return 0;
}

static int take_vocab(txlm_torch_obj *o, const txlm_pk_value *vocab, txlm_vocab_buf *out, txlm_err *err)
{
    const txlm_pk_value *attrs = txlm_pk_vocab_attrs(vocab);
    if (!attrs) {
        char d[240];
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: vocab is %s without idx2sym, not a vocabulary", o->path,
                         txlm_pk_describe(vocab, d, sizeof d));
    }
    char where[600];
    snprintf(where, sizeof where, "%s: vocab", o->path);
    return txlm_vocab_from_attrs(where, attrs, out, err);
}

int txlm_nvidia_read(txlm_torch_obj *o, txlm_source *out, txlm_err *err)
{
    memset(out, 0, sizeof *out);
    const txlm_pk_value *root = txlm_torch_root(o);
    const txlm_pk_value *cfg = txlm_pk_dict_get(root, "model_config");
    char where[600];
    snprintf(where, sizeof where, "%s: model_config", o->path);
    if (cfg->kind != TXLM_PK_DICT) return txlm_fail(err, TXLM_ERR_FORMAT, "%s is not a dict", where);
    int rc = txlm_pk_hparams(where, from_dict, (void *)cfg, 1, &out->h, err);
    out->h.untie_r = 0; /* one pair of r biases at the top (_create_params) */
    out->h.same_length_rule = TXLM_SAME_LENGTH_NVIDIA;
    out->order = TXLM_CLUSTERS_REVERSE;
    snprintf(out->why, sizeof out->why, "NVIDIA's training code reads tail cluster i at head column -i");
    snprintf(out->what, sizeof out->what, "an NVIDIA training checkpoint (model_config, model_state, vocab)");
    if (!rc) rc = take_state(o, txlm_pk_dict_get(root, "model_state"), err);
    if (!rc) rc = take_vocab(o, txlm_pk_dict_get(root, "vocab"), &out->vocab, err);
    if (!rc) out->ck = txlm_torch_take(o);
    return rc;
}

static int sniff(txlm_probe *p) { return txlm_nvidia_is(txlm_probe_torch_root(p)); }

/* --vocab may replace the checkpoint's vocabulary; its config and weights are its own. */
static int open_nvidia(txlm_probe *p, const txlm_source_options *opt, txlm_source *out, txlm_err *err)
{
    int rc = txlm_source_refuse(opt, p->path, 1, 1, 0, err);
    txlm_torch_obj *o = txlm_probe_take_torch(p);
    if (!rc) rc = txlm_nvidia_read(o, out, err);
    txlm_torch_free(o);
    if (!rc) rc = txlm_source_input(out, p->path, err);
    if (!rc && opt->vocab) rc = txlm_source_vocab(out, opt->vocab, err);
    return rc;
}

const txlm_source_kind txlm_source_nvidia = {
    "nvidia", "NVIDIA's training checkpoint (checkpoint_best.pt: config and vocabulary inside)", sniff, open_nvidia, NULL,
};
