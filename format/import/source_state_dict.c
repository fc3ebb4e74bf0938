/* A state dict alone: safetensors, or a torch.save file (zip or legacy)
 * whose saved object is a dict of tensors. Its hyper-parameters and
 * vocabulary come from --config and --vocab; the tail-cluster order is
 * told from its names (cluster_order.c). */
#include <stdio.h>
#include <string.h>

#include <txlm_status.h>

#include "ckpt_list.h"
#include "source.h"

static int sniff(txlm_probe *p)
{
    return txlm_probe_is_safetensors(p) || (p->is_file && txlm_torch_sniff(p->head, p->head_len));
}

/* The weights of `path`, from the torch object the sniffs read if any. */
static int weights(txlm_probe *p, const char *path, txlm_checkpoint **ck, txlm_err *err)
{
    txlm_torch_obj *o = txlm_probe_take_torch(p);
    if (!o) return txlm_checkpoint_open(path, ck, err);
    int rc = txlm_torch_state_dict(o, ck, err);
    txlm_torch_free(o);
    return rc;
}

static int open_state_dict(txlm_probe *p, const txlm_source_options *opt, txlm_source *out, txlm_err *err)
{
    if (opt->weights && strcmp(opt->weights, p->path))
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: a checkpoint file and --weights", p->path);
    if (!opt->config) return txlm_fail(err, TXLM_ERR_IO, "%s: a state dict needs --config (and --vocab)", p->path);
    if (!opt->vocab) return txlm_fail(err, TXLM_ERR_IO, "%s: a state dict needs --vocab", p->path);
    int rc = txlm_source_config(out, opt->config, err);
    if (!rc) rc = txlm_source_vocab(out, opt->vocab, err);
    if (!rc) rc = txlm_source_input(out, p->path, err);
    if (!rc) rc = weights(p, p->path, &out->ck, err);
    if (rc) return rc;
    out->order = txlm_cluster_order_of_names(out->ck, out->why, sizeof out->why);
    txlm_source_note_hf_start(out);
    snprintf(out->what, sizeof out->what, "a state dict (%s) with %s and %s", out->ck->format, opt->config, opt->vocab);
    return 0;
}

static int list_state_dict(txlm_probe *p, FILE *out, txlm_err *err)
{
    txlm_checkpoint *ck = NULL;
    int rc = weights(p, p->path, &ck, err);
    if (!rc) txlm_checkpoint_print(ck, out);
    txlm_checkpoint_free(ck);
    return rc;
}

const txlm_source_kind txlm_source_state_dict = {
    "state-dict", "a safetensors or torch.save state dict (with --config and --vocab)", sniff, open_state_dict,
    list_state_dict,
};
