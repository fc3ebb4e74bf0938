#include "faults_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pack.h"

int flt_pack(const char *name, uint32_t dtype, const char *out_path)
{
    const char *golden = getenv("TXLM_GOLDEN");
    if (!golden) {
        fprintf(stderr, "TXLM_GOLDEN is not set\n");
        return 1;
    }
    char path[4096];
    txlm_err err = {0, ""};
    txlm_hparams h;
    txlm_vocab_buf v = {0};
    txlm_checkpoint *ck = NULL;
    snprintf(path, sizeof path, "%s/%s/config.json", golden, name);
    int rc = txlm_config_load_json(path, &h, &err);
    if (!rc) {
        snprintf(path, sizeof path, "%s/%s/vocab.txt", golden, name);
        rc = txlm_vocab_load_txt(path, &v, &err);
    }
    if (!rc) {
        snprintf(path, sizeof path, "%s/%s/model.safetensors", golden, name);
        rc = txlm_checkpoint_open(path, &ck, &err);
    }
    txlm_pack_options opt = {dtype, NULL, NULL, TXLM_CLUSTERS_FORWARD, 0};
    if (!rc) rc = txlm_pack_write(&h, &v.v, ck, &opt, out_path, &err);
    if (rc) fprintf(stderr, "packing %s: %s\n", name, err.msg);
    txlm_checkpoint_free(ck);
    txlm_vocab_buf_free(&v);
    return rc;
}

txlm_context_options flt_options(uint64_t memory_budget)
{
    const char *v = getenv("TXLM_VALIDATION");
    txlm_context_options o = {.validation = v && *v && strcmp(v, "0") != 0, .memory_budget = memory_budget};
    return o;
}

int flt_finish(const char *what, char *dir)
{
    fmt_rmdir(dir);
    if (fmt_failures) fprintf(stderr, "%s: %d checks failed\n", what, fmt_failures);
    else printf("%s: all checks passed\n", what);
    return fmt_failures != 0;
}
