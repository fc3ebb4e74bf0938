/* No checkpoint: a model of a config.json's shape with weights drawn from
 * a seed (synthetic.h), packed through the same checks as a real one.
 * Chosen by name only (txlm-pack --synthetic CONFIG), never sniffed. */
#include <stdio.h>

#include <txlm_status.h>

#include "source.h"
#include "synthetic.h"

static int open_synthetic(txlm_probe *p, const txlm_source_options *opt, txlm_source *out, txlm_err *err)
{
    int rc = txlm_source_refuse(opt, p->path, 1, 1, 0, err);
    if (!rc) rc = txlm_source_config(out, p->path, err);
    if (!rc && opt->vocab) {
        rc = txlm_source_vocab(out, opt->vocab, err);
        if (!rc && out->vocab.v.n != out->h.n_token)
            rc = txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "--vocab %s has %u symbols but the config's n_token is %u",
                           opt->vocab, out->vocab.v.n, out->h.n_token);
    } else if (!rc) {
        rc = txlm_synthetic_vocab(out->h.n_token, &out->vocab, err);
    }
    if (!rc) rc = txlm_synthetic_checkpoint(&out->h, opt->seed, &out->ck, err);
    if (rc) return rc;
    out->order = TXLM_CLUSTERS_FORWARD;
    snprintf(out->why, sizeof out->why, "HF's names, as every synthetic model has");
    snprintf(out->what, sizeof out->what, "random weights (seed %llu) of this config's shape", (unsigned long long)opt->seed);
    return 0;
}

const txlm_source_kind txlm_source_synthetic = {
    "synthetic", "random weights for a config.json (--synthetic CONFIG)", NULL, open_synthetic, NULL,
};
