/* Checkpoint handles common to every reader: opening by content, lookup,
 * element access and release. */
#include "checkpoint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm_status.h>

#include "quantize.h"
#include "open_input.h"
#include "torch.h"

int txlm_checkpoint_open(const char *path, txlm_checkpoint **out, txlm_err *err)
{
    *out = NULL;
    FILE *f;
    int open_rc = txlm_fopen_input(path, &f, err);
    if (open_rc) return open_rc;
    unsigned char head[16];
    size_t n = fread(head, 1, sizeof head, f);
    int rd_err = ferror(f);
    fclose(f);
    if (rd_err) return txlm_fail(err, TXLM_ERR_IO, "%s: cannot read", path);

    /* safetensors first: its little-endian length may begin with 0x80,
     * the pickle protocol byte, but a pickle never has '{' at byte 8. */
    if (n >= 9 && head[8] == '{') return txlm_safetensors_open(path, out, err);
    if ((n >= 4 && memcmp(head, "PK\x03\x04", 4) == 0) || (n >= 1 && head[0] == 0x80) || txlm_torch_sniff(head, n))
        return txlm_torch_open(path, out, err);
    return txlm_fail(err, TXLM_ERR_FORMAT, "%s: neither a safetensors nor a torch.save file (first bytes not recognised)",
                     path);
}

void txlm_checkpoint_free(txlm_checkpoint *c)
{
    if (!c) return;
    if (c->free_impl) c->free_impl(c->impl);
    else free(c->impl);
    if (c->tensors)
        for (uint32_t i = 0; i < c->n_tensors; i++) free(c->tensors[i].name);
    free(c->tensors);
    free(c);
}

const txlm_src_tensor *txlm_checkpoint_find(const txlm_checkpoint *c, const char *name)
{
    for (uint32_t i = 0; i < c->n_tensors; i++)
        if (strcmp(c->tensors[i].name, name) == 0) return &c->tensors[i];
    return NULL;
}

int txlm_checkpoint_has_prefix(const txlm_checkpoint *c, const char *prefix)
{
    size_t n = strlen(prefix);
    for (uint32_t i = 0; i < c->n_tensors; i++)
        if (!strncmp(c->tensors[i].name, prefix, n)) return 1;
    return 0;
}

float txlm_src_get_f32(const txlm_src_tensor *t, uint64_t i)
{
    /* Bytes, not typed loads: tensor data in a mapped file is often unaligned. */
    const unsigned char *p = t->data;
    if (i >= t->n_elems) return 0.0f;
    switch (t->dtype) {
    case TXLM_DT_F32: {
        p += i * 4;
        uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        float v;
        memcpy(&v, &u, 4);
        return v;
    }
    case TXLM_DT_F16:
        p += i * 2;
        return txlm_f16_to_f32((uint16_t)(p[0] | p[1] << 8));
    case TXLM_DT_BF16:
        p += i * 2;
        return txlm_bf16_to_f32((uint16_t)(p[0] | p[1] << 8));
    default:
        return 0.0f;
    }
}
