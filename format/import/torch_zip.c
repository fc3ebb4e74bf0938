/* torch.save zip format (PyTorch >= 1.6): <archive>/data.pkl holds the
 * pickled object, <archive>/data/<key> the raw bytes of each storage. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <txlm_status.h>

#include "torch_read.h"

#define PKL "data.pkl"
#define PKL_LEN (sizeof PKL - 1)

/* data.pkl of the top-level folder: "<archive>/data.pkl", one slash. */
static int find_pickle(const char *where, const txlm_zip *z, txlm_zip_entry **out, txlm_err *err)
{
    *out = NULL;
    for (uint32_t i = 0; i < z->n; i++) {
        txlm_zip_entry *e = &z->entries[i];
        if (e->name_len <= PKL_LEN + 1 || memcmp(e->name + e->name_len - PKL_LEN, PKL, PKL_LEN) != 0) continue;
        const char *slash = memchr(e->name, '/', e->name_len);
        if (slash != e->name + e->name_len - PKL_LEN - 1) continue;
        if (*out)
            return txlm_fail(err, TXLM_ERR_FORMAT, "%s: the zip holds more than one <archive>/data.pkl", where);
        *out = e;
    }
    if (!*out)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: a zip file without <archive>/data.pkl: not a torch.save checkpoint",
                         where);
    return 0;
}

int txlm_torch_zip_object(const char *where, const uint8_t *data, uint64_t len, txlm_zip *z, const char **prefix,
                          size_t *prefix_len, txlm_pickle **pk, const txlm_pk_value **root, txlm_err *err)
{
    *pk = NULL;
    int rc = txlm_zip_open(where, data, len, z, err);
    if (rc) return rc;
    txlm_zip_entry *e;
    rc = find_pickle(where, z, &e, err);
    if (!rc) rc = txlm_zip_check_crc(where, data, e, err);
    if (rc) return rc;
    *prefix = e->name;
    *prefix_len = e->name_len - PKL_LEN;
    /* Written by PyTorch >= 2.1; absent means little-endian. */
    char bo[256];
    size_t bl = *prefix_len + 9;
    if (bl < sizeof bo) {
        memcpy(bo, *prefix, *prefix_len);
        memcpy(bo + *prefix_len, "byteorder", 9);
        const txlm_zip_entry *b = txlm_zip_find(z, bo, bl);
        if (b && !(b->size == 6 && !memcmp(data + b->offset, "little", 6)))
            return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "%s: the checkpoint was saved on a big-endian machine", where);
    }
    uint64_t used;
    return txlm_pickle_parse(where, data + e->offset, e->size, e->offset, pk, root, &used, err);
}

typedef struct zip_ctx {
    const char *where;
    const uint8_t *data;
    txlm_zip *z;
    const char *prefix;
    size_t prefix_len;
} zip_ctx;

static int zip_storage(void *user, const txlm_pk_storage *s, const uint8_t **out, txlm_err *err)
{
    zip_ctx *c = user;
    char name[512], key[128];
    size_t kn = s->key_len < sizeof key - 1 ? s->key_len : sizeof key - 1;
    for (size_t i = 0; i < kn; i++) key[i] = (s->key[i] >= 0x20 && s->key[i] < 0x7f) ? s->key[i] : '?';
    key[kn] = 0;
    if (c->prefix_len + 5 + s->key_len >= sizeof name)
        return txlm_fail(err, TXLM_ERR_FORMAT, "storage key '%s' is too long", key);
    memcpy(name, c->prefix, c->prefix_len);
    memcpy(name + c->prefix_len, "data/", 5);
    memcpy(name + c->prefix_len + 5, s->key, s->key_len);
    size_t nl = c->prefix_len + 5 + s->key_len;
    txlm_zip_entry *e = txlm_zip_find(c->z, name, nl);
    if (!e) return txlm_fail(err, TXLM_ERR_FORMAT, "storage '%s' has no zip entry %.*s", key, (int)nl, name);
    uint64_t need;
    if (__builtin_mul_overflow(s->numel, (uint64_t)s->elem_size, &need) || need > e->size)
        return txlm_fail(err, TXLM_ERR_FORMAT,
                         "storage '%s' claims %" PRIu64 " elements of %u bytes, its zip entry holds %" PRIu64 " bytes", key,
                         s->numel, s->elem_size, e->size);
    int rc = txlm_zip_check_crc(c->where, c->data, e, err);
    if (rc) return rc;
    *out = c->data + e->offset;
    return 0;
}

static void zip_ctx_free(void *user)
{
    zip_ctx *c = user;
    if (!c) return;
    txlm_zip_free(c->z);
    free(c->z);
    free(c);
}

int txlm_torch_zip_load(txlm_torch_obj *o, txlm_err *err)
{
    zip_ctx *ctx = calloc(1, sizeof *ctx);
    txlm_zip *z = calloc(1, sizeof *z);
    if (!ctx || !z) {
        free(ctx);
        free(z);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", o->path);
    }
    *ctx = (zip_ctx){o->path, o->impl->map.data, z, NULL, 0};
    o->ctx = ctx;
    o->ctx_free = zip_ctx_free;
    o->fn = zip_storage;
    o->ck->format = "torch-zip";
    return txlm_torch_zip_object(o->path, o->impl->map.data, o->impl->map.len, z, &ctx->prefix, &ctx->prefix_len, &o->pk,
                                 &o->root, err);
}
