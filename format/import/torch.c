/* torch.save checkpoints: the zip or the legacy reader, chosen by the
 * file's first bytes. */
#include "torch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm_status.h>

#include "torch_read.h"
#include "open_input.h"

int txlm_torch_sniff(const void *head, uint64_t len)
{
    const uint8_t *h = head;
    return (len >= 4 && !memcmp(h, "PK\x03\x04", 4)) ||
           (len >= TXLM_TORCH_LEGACY_MAGIC_LEN && !memcmp(h, TXLM_TORCH_LEGACY_MAGIC, TXLM_TORCH_LEGACY_MAGIC_LEN));
}

static int kind_of(const char *path, int *zip, txlm_err *err)
{
    unsigned char head[TXLM_TORCH_LEGACY_MAGIC_LEN];
    FILE *f;
    int open_rc = txlm_fopen_input(path, &f, err);
    if (open_rc) return open_rc;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    *zip = n >= 4 && !memcmp(head, "PK\x03\x04", 4);
    if (*zip || txlm_torch_sniff(head, n)) return 0;
    if (n >= 2 && head[0] == 0x80)
        return txlm_fail(err, TXLM_ERR_FORMAT,
                         "%s: a pickle without the legacy torch.save magic number: not a torch.save checkpoint", path);
    return txlm_fail(err, TXLM_ERR_FORMAT, "%s: not a torch.save file (neither a zip nor the legacy magic number)", path);
}

void txlm_torch_free(txlm_torch_obj *o)
{
    if (!o) return;
    if (o->ctx_free) o->ctx_free(o->ctx);
    txlm_pickle_free(o->pk);
    txlm_checkpoint_free(o->ck);
    free(o);
}

int txlm_torch_load(const char *path, txlm_torch_obj **out, txlm_err *err)
{
    *out = NULL;
    int zip = 0;
    int rc = kind_of(path, &zip, err);
    if (rc) return rc;
    txlm_torch_obj *o = calloc(1, sizeof *o);
    if (o) o->ck = calloc(1, sizeof *o->ck);
    if (o && o->ck) o->impl = calloc(1, sizeof *o->impl);
    if (!o || !o->impl) {
        if (o) free(o->ck);
        free(o);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    o->path = path;
    o->ck->impl = o->impl;
    o->ck->free_impl = txlm_torch_impl_free;
    rc = txlm_file_map_open(path, &o->impl->map, err);
    if (!rc) rc = zip ? txlm_torch_zip_load(o, err) : txlm_torch_legacy_load(o, err);
    if (rc) {
        txlm_torch_free(o);
        return rc;
    }
    *out = o;
    return 0;
}

const txlm_pk_value *txlm_torch_root(const txlm_torch_obj *o) { return o->root; }

txlm_checkpoint *txlm_torch_take(txlm_torch_obj *o)
{
    txlm_checkpoint *c = o->ck;
    o->ck = NULL;
    return c;
}

int txlm_torch_state_dict(txlm_torch_obj *o, txlm_checkpoint **out, txlm_err *err)
{
    *out = NULL;
    int rc = txlm_torch_collect(o, err);
    if (!rc) *out = txlm_torch_take(o);
    return rc;
}

int txlm_torch_open(const char *path, txlm_checkpoint **out, txlm_err *err)
{
    *out = NULL;
    txlm_torch_obj *o = NULL;
    int rc = txlm_torch_load(path, &o, err);
    if (!rc) rc = txlm_torch_state_dict(o, out, err);
    txlm_torch_free(o);
    return rc;
}
