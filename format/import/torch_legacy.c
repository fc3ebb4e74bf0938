/* Legacy torch.save format (before PyTorch 1.6, or
 * _use_new_zipfile_serialization=False): five pickles back to back (magic
 * number, protocol version, system info, the object, the list of storage
 * keys), then every listed storage as an int64 element count followed by
 * its raw elements. A storage's element size comes from the references
 * the object pickle makes to it. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <txlm_status.h>

#include "torch_read.h"

#define PROTOCOL_VERSION 1001

static int parse_at(const char *where, const uint8_t *data, uint64_t len, uint64_t *pos, txlm_pickle **pk,
                    const txlm_pk_value **root, txlm_err *err)
{
    uint64_t used = 0;
    int rc = txlm_pickle_parse(where, data + *pos, len - *pos, *pos, pk, root, &used, err);
    if (!rc) *pos += used;
    return rc;
}

int txlm_torch_legacy_object(const char *where, const uint8_t *data, uint64_t len, txlm_pickle **pk,
                             const txlm_pk_value **root, uint64_t *end, txlm_err *err)
{
    *pk = NULL;
    if (len < TXLM_TORCH_LEGACY_MAGIC_LEN || memcmp(data, TXLM_TORCH_LEGACY_MAGIC, TXLM_TORCH_LEGACY_MAGIC_LEN) != 0)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: no legacy torch.save magic number at byte 0", where);
    uint64_t pos = TXLM_TORCH_LEGACY_MAGIC_LEN;
    txlm_pickle *p = NULL;
    const txlm_pk_value *v = NULL;
    int rc = parse_at(where, data, len, &pos, &p, &v, err);
    if (!rc && !(v->kind == TXLM_PK_INT && v->u.i == PROTOCOL_VERSION))
        rc = txlm_fail(err, TXLM_ERR_UNSUPPORTED, "%s: legacy torch.save protocol version %" PRId64 " (only %d is read)",
                       where, v->kind == TXLM_PK_INT ? v->u.i : -1, PROTOCOL_VERSION);
    txlm_pickle_free(p);
    p = NULL;
    if (!rc) rc = parse_at(where, data, len, &pos, &p, &v, err);
    if (!rc) {
        const txlm_pk_value *le = txlm_pk_dict_get(v, "little_endian");
        if (v->kind != TXLM_PK_DICT)
            rc = txlm_fail(err, TXLM_ERR_FORMAT, "%s: legacy torch.save system info is a %s, not a dict", where,
                           txlm_pk_kind_name(v->kind));
        else if (le && !(le->kind == TXLM_PK_BOOL && le->u.i))
            rc = txlm_fail(err, TXLM_ERR_UNSUPPORTED, "%s: the checkpoint was saved on a big-endian machine", where);
    }
    txlm_pickle_free(p);
    if (!rc) rc = parse_at(where, data, len, &pos, pk, root, err);
    if (!rc) *end = pos;
    return rc;
}

typedef struct record {
    const char *key;
    uint32_t key_len;
    uint32_t dtype, elem_size; /* 0: no reference seen */
    uint64_t numel;
    uint64_t offset;
} record;

typedef struct legacy_ctx {
    const char *where;
    const uint8_t *data;
    record *r;
    uint32_t n;
    txlm_err *err;
} legacy_ctx;

static record *find(const legacy_ctx *c, const char *key, uint32_t len)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (c->r[i].key_len == len && !memcmp(c->r[i].key, key, len)) return &c->r[i];
    return NULL;
}

static int note_reference(void *user, const txlm_pk_value *v)
{
    legacy_ctx *c = user;
    const txlm_pk_storage *s = &v->u.storage;
    record *r = find(c, s->key, s->key_len);
    if (!r)
        return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: storage '%.*s' (pickle byte %" PRIu64 ") is not in the storage list",
                         c->where, (int)(s->key_len > 64 ? 64 : s->key_len), s->key, v->at);
    if (r->elem_size && (r->dtype != s->dtype || r->numel != s->numel))
        return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: storage '%.*s' is referenced with two different types or sizes",
                         c->where, (int)(s->key_len > 64 ? 64 : s->key_len), s->key);
    r->dtype = s->dtype;
    r->elem_size = s->elem_size;
    r->numel = s->numel;
    return 0;
}

static int read_keys(legacy_ctx *c, const txlm_pk_value *list)
{
    if (list->kind != TXLM_PK_LIST)
        return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: legacy storage key list is a %s, not a list", c->where,
                         txlm_pk_kind_name(list->kind));
    c->r = calloc(list->n ? list->n : 1, sizeof *c->r);
    if (!c->r) return txlm_fail(c->err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", c->where);
    for (uint32_t i = 0; i < list->n; i++) {
        const txlm_pk_value *k = list->u.seq.items[i];
        if (k->kind != TXLM_PK_STR)
            return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: legacy storage key %" PRIu32 " is a %s, not a string", c->where, i,
                             txlm_pk_kind_name(k->kind));
        if (find(c, k->u.str.s, k->u.str.len))
            return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: storage key '%.*s' is listed twice", c->where,
                             (int)(k->u.str.len > 64 ? 64 : k->u.str.len), k->u.str.s);
        c->r[c->n].key = k->u.str.s;
        c->r[c->n].key_len = k->u.str.len;
        c->n++;
    }
    return 0;
}

/* Walks the storages laid out after the key list. */
static int locate(legacy_ctx *c, uint64_t pos, uint64_t len)
{
    for (uint32_t i = 0; i < c->n; i++) {
        record *r = &c->r[i];
        int kl = (int)(r->key_len > 64 ? 64 : r->key_len);
        if (!r->elem_size)
            return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: storage '%.*s' is listed but never referenced (size unknown)",
                             c->where, kl, r->key);
        if (len - pos < 8)
            return txlm_fail(c->err, TXLM_ERR_FORMAT,
                             "%s: storage '%.*s' would start at byte %" PRIu64 ", past the end of the file (truncated)",
                             c->where, kl, r->key, pos);
        uint64_t count = 0;
        for (int b = 7; b >= 0; b--) count = count << 8 | c->data[pos + b];
        if (count != r->numel)
            return txlm_fail(c->err, TXLM_ERR_FORMAT,
                             "%s: storage '%.*s' at byte %" PRIu64 " holds %" PRIu64 " elements, the pickle says %" PRIu64,
                             c->where, kl, r->key, pos, count, r->numel);
        pos += 8;
        uint64_t bytes;
        if (__builtin_mul_overflow(count, (uint64_t)r->elem_size, &bytes) || bytes > len - pos)
            return txlm_fail(c->err, TXLM_ERR_FORMAT,
                             "%s: storage '%.*s' (%" PRIu64 " elements at byte %" PRIu64
                             ") runs past the end of the file (%" PRIu64 " bytes, truncated)",
                             c->where, kl, r->key, count, pos, len);
        r->offset = pos;
        pos += bytes;
    }
    if (pos != len)
        return txlm_fail(c->err, TXLM_ERR_FORMAT, "%s: %" PRIu64 " unexpected bytes after the last storage (byte %" PRIu64 ")",
                         c->where, len - pos, pos);
    return 0;
}

static int legacy_storage(void *user, const txlm_pk_storage *s, const uint8_t **out, txlm_err *err)
{
    legacy_ctx *c = user;
    const record *r = find(c, s->key, s->key_len);
    if (!r) return txlm_fail(err, TXLM_ERR_FORMAT, "storage is not in the storage list");
    *out = c->data + r->offset;
    return 0;
}

typedef struct legacy_owned {
    legacy_ctx ctx;
    txlm_pickle *keys;
} legacy_owned;

static void legacy_free(void *user)
{
    legacy_owned *l = user;
    if (!l) return;
    txlm_pickle_free(l->keys);
    free(l->ctx.r);
    free(l);
}

int txlm_torch_legacy_load(txlm_torch_obj *o, txlm_err *err)
{
    legacy_owned *l = calloc(1, sizeof *l);
    if (!l) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", o->path);
    const uint8_t *data = o->impl->map.data;
    uint64_t len = o->impl->map.len, pos = 0;
    l->ctx = (legacy_ctx){o->path, data, NULL, 0, err};
    o->ctx = l;
    o->ctx_free = legacy_free;
    o->fn = legacy_storage;
    o->ck->format = "torch-legacy";
    const txlm_pk_value *list = NULL;
    int rc = txlm_torch_legacy_object(o->path, data, len, &o->pk, &o->root, &pos, err);
    if (!rc) rc = parse_at(o->path, data, len, &pos, &l->keys, &list, err);
    if (!rc) rc = read_keys(&l->ctx, list);
    if (!rc) rc = txlm_pickle_each(o->pk, TXLM_PK_STORAGE, note_reference, &l->ctx);
    if (!rc) rc = locate(&l->ctx, pos, len);
    return rc;
}
