#include "faults_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "pack.h"
#include "txlm_layout.h"

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
    txlm_pack_options opt = {dtype, NULL, NULL};
    if (!rc) rc = txlm_pack_write(&h, &v.v, ck, &opt, out_path, &err);
    if (rc) fprintf(stderr, "packing %s: %s\n", name, err.msg);
    txlm_checkpoint_free(ck);
    txlm_vocab_buf_free(&v);
    return rc;
}

txlm_context_options flt_options(uint64_t memory_budget)
{
    const char *v = getenv("TXLM_VALIDATION");
    txlm_context_options o = {NULL, v && *v && strcmp(v, "0") != 0, memory_budget};
    return o;
}

int flt_finish(const char *what, char *dir)
{
    fmt_rmdir(dir);
    if (fmt_failures) fprintf(stderr, "%s: %d checks failed\n", what, fmt_failures);
    else printf("%s: all checks passed\n", what);
    return fmt_failures != 0;
}

static int is_metadata(const uint8_t *e)
{
    return !memcmp(e, TXLM_TAG_HPRM, 4) || !memcmp(e, TXLM_TAG_VOCB, 4) || !memcmp(e, TXLM_TAG_DTYP, 4) ||
           !memcmp(e, TXLM_TAG_TDIR, 4);
}

void flt_fix_metadata_checksums(uint8_t *b)
{
    uint64_t table = txlm_rd64(b + TXLM_HDR_TABLE_OFFSET);
    uint32_t n = txlm_rd32(b + TXLM_HDR_SECTION_COUNT), es = txlm_rd32(b + TXLM_HDR_ENTRY_SIZE);
    uint32_t hs = txlm_rd32(b + TXLM_HDR_HEADER_SIZE);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *e = b + table + (uint64_t)i * es;
        if (is_metadata(e))
            txlm_wr64(e + TXLM_SEC_CHECKSUM, XXH3_64bits(b + txlm_rd64(e + TXLM_SEC_OFFSET), txlm_rd64(e + TXLM_SEC_SIZE)));
    }
    txlm_wr64(b + TXLM_HDR_CHECKSUM, 0);
    XXH3_state_t *st = XXH3_createState();
    XXH3_64bits_reset(st);
    XXH3_64bits_update(st, b, hs);
    XXH3_64bits_update(st, b + table, (size_t)n * es);
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = b + table + (uint64_t)i * es;
        if (is_metadata(e)) XXH3_64bits_update(st, b + txlm_rd64(e + TXLM_SEC_OFFSET), txlm_rd64(e + TXLM_SEC_SIZE));
    }
    txlm_wr64(b + TXLM_HDR_CHECKSUM, XXH3_64bits_digest(st));
    XXH3_freeState(st);
}
