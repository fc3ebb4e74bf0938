#include "ref_pack.h"

#include <stdio.h>
#include <string.h>

#include "pack.h"
#include "synthetic.h"

int ref_pack_dir(const char *dir, const char *out, txlm_err *err)
{
    char path[1200];
    txlm_hparams h;
    txlm_vocab_buf v;
    txlm_checkpoint *ck = NULL;
    memset(&v, 0, sizeof v);
    snprintf(path, sizeof path, "%s/config.json", dir);
    int rc = txlm_config_load_json(path, &h, err);
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    if (!rc) rc = txlm_vocab_load_txt(path, &v, err);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    if (!rc) rc = txlm_checkpoint_open(path, &ck, err);
    if (!rc) rc = txlm_pack_write(&h, &v.v, ck, NULL, out, err);
    txlm_checkpoint_free(ck);
    txlm_vocab_buf_free(&v);
    return rc;
}

int ref_pack_synthetic(const char *config_json, uint32_t dtype, uint64_t seed, const char *out, txlm_err *err)
{
    txlm_hparams h;
    txlm_vocab_buf v;
    txlm_checkpoint *ck = NULL;
    txlm_pack_options opt = {dtype, NULL, NULL, TXLM_CLUSTERS_FORWARD, 0};
    memset(&v, 0, sizeof v);
    int rc = txlm_config_parse_json(config_json, strlen(config_json), &h, err);
    if (!rc) rc = txlm_synthetic_vocab(h.n_token, &v, err);
    if (!rc) rc = txlm_synthetic_checkpoint(&h, seed, &ck, err);
    if (!rc) rc = txlm_pack_write(&h, &v.v, ck, &opt, out, err);
    txlm_checkpoint_free(ck);
    txlm_vocab_buf_free(&v);
    return rc;
}
