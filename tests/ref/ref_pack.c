#include "ref_pack.h"

#include <stdio.h>
#include <string.h>

#include "pack.h"

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
