/* Damaged model files through the whole load path (txlm_model_load):
 * the format tests cover every class of damage in the reader; here each
 * refusal must also leave no device memory or handle behind, which the
 * sanitizer build checks for host memory as well. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "context.h"
#include "faults_common.h"
#include "txlm_layout.h"

int main(void)
{
    char *dir = fmt_mkdtemp(), path[4096], bad[4096];
    snprintf(path, sizeof path, "%s/m.txlm", dir);
    snprintf(bad, sizeof bad, "%s/bad.txlm", dir);
    if (flt_pack("char_preln", TXLM_DT_F32, path)) return 1;
    size_t len;
    uint8_t *orig = fmt_read_all(path, &len);
    txlm_context_options o = flt_options(0);
    txlm_context *ctx = NULL;
    if (!orig || txlm_context_create(&o, &ctx) != TXLM_OK) {
        fprintf(stderr, "setup: %s\n", txlm_last_error());
        return 1;
    }
    uint64_t base = ctx->vk.memory_used;
    /* Offsets: header reserved bytes, section table, metadata, the middle and the end of the tensor data. */
    const size_t flips[] = {100, 140, 600, len / 2, len - 1};
    uint8_t *b = malloc(len);
    for (size_t i = 0; i < sizeof flips / sizeof flips[0] + 4; i++) {
        memcpy(b, orig, len);
        size_t n = len;
        if (i < sizeof flips / sizeof flips[0]) b[flips[i]] ^= 0x41;
        else n = len * (i - 4) / 5; /* cut to 1/5 .. 4/5 */
        fmt_write_all(bad, b, n);
        txlm_model *m = NULL;
        txlm_status st = txlm_model_load(ctx, bad, NULL, &m);
        CHECK(st != TXLM_OK && m == NULL && strstr(txlm_last_error(), bad), "case %zu: status %d, message '%s'", i, (int)st,
              txlm_last_error());
        CHECK(ctx->vk.memory_used == base, "case %zu: %llu bytes of device memory kept", i,
              (unsigned long long)(ctx->vk.memory_used - base));
        printf("refused as expected: %s\n", txlm_last_error());
    }
    /* Well-formed files the engine refuses after uploading: a tensor renamed
     * (missing), and one whose shape disagrees with the hyper-parameters. */
    uint64_t tdir = 0, table = txlm_rd64(orig + TXLM_HDR_TABLE_OFFSET);
    for (uint32_t i = 0; i < txlm_rd32(orig + TXLM_HDR_SECTION_COUNT); i++)
        if (!memcmp(orig + table + 32 * i, TXLM_TAG_TDIR, 4)) tdir = txlm_rd64(orig + table + 32 * i + TXLM_SEC_OFFSET);
    for (int k = 0; k < 2; k++) {
        memcpy(b, orig, len);
        uint8_t *te = b + tdir + TXLM_TDIR_HEAD;
        while (strcmp((const char *)te, "layers.0.pos_ff.CoreNet.0.weight")) te += TXLM_TDIR_ENTRY_SIZE; /* [96, 48] */
        if (k == 0) te[0] ^= 0x20;
        else { /* [r, c] -> [c, r]: same bytes, wrong shape */
            uint64_t r = txlm_rd64(te + TXLM_TE_DIMS), c = txlm_rd64(te + TXLM_TE_DIMS + 8);
            txlm_wr64(te + TXLM_TE_DIMS, c);
            txlm_wr64(te + TXLM_TE_DIMS + 8, r);
        }
        fmt_fix_checksums(b, len, 1);
        fmt_write_all(bad, b, len);
        txlm_model *m = NULL;
        txlm_status st = txlm_model_load(ctx, bad, NULL, &m);
        CHECK(st == TXLM_ERR_FORMAT && m == NULL && strstr(txlm_last_error(), k ? "shape" : "no tensor"),
              "engine refusal %d: status %d, message '%s'", k, (int)st, txlm_last_error());
        txlm_model_free(m);
        CHECK(ctx->vk.memory_used == base, "engine refusal %d: device memory kept", k);
        printf("refused as expected: %s\n", txlm_last_error());
    }

    /* The pristine file still loads on the same context. */
    txlm_model *m = NULL;
    CHECK(txlm_model_load(ctx, path, NULL, &m) == TXLM_OK, "pristine: %s", txlm_last_error());
    txlm_model_free(m);
    CHECK(txlm_context_validation_messages(ctx) == 0, "validation messages");
    txlm_context_destroy(ctx);
    free(b);
    free(orig);
    unlink(bad);
    unlink(path);
    return flt_finish("damaged loads", dir);
}
