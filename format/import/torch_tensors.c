/* State dict -> checkpoint tensors, for both torch.save formats. A tensor
 * is (storage, offset, size, stride); its every element must lie inside its
 * storage. Contiguous tensors point into the mapped file; others (rare in
 * state dicts) are gathered into a copy. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <txlm_status.h>

#include "torch_read.h"

#define TENSOR_CAP (1u << 20)

void txlm_torch_impl_free(void *impl)
{
    txlm_torch_impl *t = impl;
    if (!t) return;
    for (uint32_t i = 0; i < t->n_copies; i++) free(t->copies[i]);
    free(t->copies);
    txlm_file_map_close(&t->map);
    free(t);
}

static void shown_name(char *out, size_t cap, const txlm_pk_value *k)
{
    size_t n = 0;
    for (uint32_t i = 0; k->kind == TXLM_PK_STR && i < k->u.str.len && n + 1 < cap; i++)
        out[n++] = (k->u.str.s[i] >= 0x20 && k->u.str.s[i] < 0x7f) ? k->u.str.s[i] : '?';
    out[n] = 0;
}

/* Element offset of the last element, or an overflow. */
static int extent(const txlm_pk_tensor *t, uint64_t *last)
{
    uint64_t e = t->offset;
    for (uint32_t i = 0; i < t->rank; i++) {
        uint64_t step;
        if (__builtin_mul_overflow(t->dims[i] - 1, t->strides[i], &step) || __builtin_add_overflow(e, step, &e)) return -1;
    }
    *last = e;
    return 0;
}

static int contiguous(const txlm_pk_tensor *t)
{
    uint64_t want = 1;
    for (uint32_t i = t->rank; i-- > 0;) {
        if (t->dims[i] != 1 && t->strides[i] != want) return 0;
        want *= t->dims[i];
    }
    return 1;
}

static int keep_copy(txlm_torch_impl *impl, void *p)
{
    if (impl->n_copies == impl->cap_copies) {
        uint32_t cap = impl->cap_copies ? 2 * impl->cap_copies : 16;
        void **n = realloc(impl->copies, cap * sizeof *n);
        if (!n) return -1;
        impl->copies = n;
        impl->cap_copies = cap;
    }
    impl->copies[impl->n_copies++] = p;
    return 0;
}

/* Row-major gather of a strided view. */
static void gather(const txlm_pk_tensor *t, const uint8_t *base, uint32_t esize, uint8_t *dst, uint64_t n)
{
    uint64_t idx[TXLM_PK_MAX_RANK] = {0};
    for (uint64_t k = 0; k < n; k++) {
        uint64_t off = t->offset;
        for (uint32_t i = 0; i < t->rank; i++) off += idx[i] * t->strides[i];
        memcpy(dst + k * esize, base + off * esize, esize);
        for (uint32_t i = t->rank; i-- > 0;) {
            if (++idx[i] < t->dims[i]) break;
            idx[i] = 0;
        }
    }
}

/* Only float storages become checkpoint tensors: anything else is refused
 * by its name, before the storage is read. */
static int check_float_tensor(const txlm_torch_obj *o, const char *name, const txlm_pk_value *val, txlm_err *err)
{
    if (val->kind != TXLM_PK_TENSOR) {
        char d[240];
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "%s: '%s' is %s, not a tensor", o->path, name,
                         txlm_pk_describe(val, d, sizeof d));
    }
    const txlm_pk_storage *s = &val->u.tensor.storage->u.storage;
    if (s->dtype == TXLM_PK_DT_OTHER)
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "%s: tensor '%s' is held in a '%s': only float32, float16 and bfloat16 "
                         "tensors are read", o->path, name, s->type_name);
    return 0;
}

/* Room for one more tensor in o->ck, doubling up to TENSOR_CAP. */
static int grow_tensors(txlm_torch_obj *o, txlm_err *err)
{
    if (o->ck->n_tensors < o->cap) return 0;
    if (o->cap >= TENSOR_CAP) return txlm_fail(err, TXLM_ERR_LIMIT, "%s: more than %u tensors", o->path, TENSOR_CAP);
    uint32_t cap = o->cap ? 2 * o->cap : 64;
    txlm_src_tensor *n = realloc(o->ck->tensors, cap * sizeof *n);
    if (!n) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory for %" PRIu32 " tensors", o->path, cap);
    o->ck->tensors = n;
    o->cap = cap;
    return 0;
}

/* The elements a tensor may address: its storage's, or for a storage that
 * is itself a view (legacy torch.save), only the view's part of it. */
static int storage_elems(txlm_torch_obj *o, const char *name, const txlm_pk_storage *s, const uint8_t **base,
                         uint64_t *avail, txlm_err *err)
{
    *base = NULL;
    if (o->fn(o->ctx, s, base, err)) return txlm_fail_prefix(err, "tensor '%s': ", name);
    *avail = s->numel;
    if (s->is_view) {
        *base += s->view_offset * s->elem_size;
        *avail = s->view_numel;
    }
    return 0;
}

/* The tensor's element count (*n), once every element it addresses is
 * known to lie inside the avail elements of its storage. */
static int check_extent(const char *where, const char *name, const txlm_pk_value *val, uint64_t avail, uint64_t *n,
                        txlm_err *err)
{
    const txlm_pk_tensor *t = &val->u.tensor;
    *n = 1;
    for (uint32_t i = 0; i < t->rank; i++)
        if (__builtin_mul_overflow(*n, t->dims[i], n))
            return txlm_fail(err, TXLM_ERR_FORMAT, "%s: tensor '%s': element count overflows", where, name);
    uint64_t last = 0;
    if (*n && extent(t, &last))
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: tensor '%s' (byte %" PRIu64 "): its strides overflow", where, name,
                         val->at);
    if (*n && last >= avail)
        return txlm_fail(err, TXLM_ERR_FORMAT,
                         "%s: tensor '%s' (byte %" PRIu64 "): view at offset %" PRIu64
                         " reaches element %" PRIu64 " of a storage of %" PRIu64 " elements",
                         where, name, val->at, t->offset, last, avail);
    return 0;
}

/* out->data: a pointer into the mapped file when the view is contiguous,
 * else a row-major copy that o->impl keeps (and frees with the mapping). */
static int point_or_gather(txlm_torch_obj *o, txlm_src_tensor *out, const txlm_pk_tensor *t, const uint8_t *base,
                           txlm_err *err)
{
    const txlm_pk_storage *s = &t->storage->u.storage;
    uint64_t n = out->n_elems;
    if (!n || contiguous(t)) {
        out->data = base + (n ? t->offset * s->elem_size : 0);
        return 0;
    }
    uint8_t *copy = malloc(out->nbytes);
    if (!copy || keep_copy(o->impl, copy)) {
        free(copy);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: tensor '%s': out of memory copying a strided view", o->path,
                         out->name);
    }
    gather(t, base, s->elem_size, copy, n);
    out->data = copy;
    return 0;
}

int txlm_torch_add(txlm_torch_obj *o, const char *name, const txlm_pk_value *val, txlm_err *err)
{
    int rc = check_float_tensor(o, name, val, err);
    if (!rc) rc = grow_tensors(o, err);
    if (rc) return rc;
    const txlm_pk_tensor *t = &val->u.tensor;
    const txlm_pk_storage *s = &t->storage->u.storage;
    txlm_src_tensor *out = &o->ck->tensors[o->ck->n_tensors];
    memset(out, 0, sizeof *out);
    const uint8_t *base = NULL;
    uint64_t avail = 0, n = 0;
    if ((rc = storage_elems(o, name, s, &base, &avail, err))) return rc;
    if ((rc = check_extent(o->path, name, val, avail, &n, err))) return rc;
    out->name = strdup(name);
    if (!out->name) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", o->path);
    out->dtype = s->dtype;
    out->rank = t->rank;
    memcpy(out->dims, t->dims, t->rank * sizeof t->dims[0]);
    out->n_elems = n;
    out->nbytes = n * s->elem_size;
    if ((rc = point_or_gather(o, out, t, base, err))) {
        free(out->name);
        out->name = NULL;
        return rc;
    }
    o->ck->n_tensors++;
    return 0;
}

static int only_tensors(const txlm_pk_value *d)
{
    for (uint32_t i = 1; i < d->n; i += 2)
        if (d->u.seq.items[i]->kind != TXLM_PK_TENSOR) return 0;
    return 1;
}

static const txlm_pk_value *find_state_dict(const txlm_pk_value *root)
{
    static const char *const keys[] = {"state_dict", "model_state_dict", "model"};
    if (root->kind != TXLM_PK_DICT || only_tensors(root)) return root;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const txlm_pk_value *v = txlm_pk_dict_get(root, keys[i]);
        if (v && v->kind == TXLM_PK_DICT) return v;
    }
    return root;
}

/* The state dict's entries, each a tensor, into o->ck. */
int txlm_torch_collect(txlm_torch_obj *o, txlm_err *err)
{
    const char *where = o->path;
    const txlm_pk_value *d = find_state_dict(o->root);
    if (d->kind != TXLM_PK_DICT) {
        char desc[240];
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "%s: the saved object is %s, not a state dict", where,
                         txlm_pk_describe(d, desc, sizeof desc));
    }
    uint32_t n = d->n / 2;
    if (n > TENSOR_CAP) return txlm_fail(err, TXLM_ERR_LIMIT, "%s: more than %u tensors", where, TENSOR_CAP);
    for (uint32_t i = 0; i < n; i++) {
        const txlm_pk_value *k = d->u.seq.items[2 * i], *v = d->u.seq.items[2 * i + 1];
        char name[160];
        shown_name(name, sizeof name, k);
        if (k->kind != TXLM_PK_STR || memchr(k->u.str.s, 0, k->u.str.len))
            return txlm_fail(err, TXLM_ERR_FORMAT, "%s: state dict key at byte %" PRIu64 " is a %s, not a name",
                             where, k->at, txlm_pk_kind_name(k->kind));
        if (v->kind != TXLM_PK_TENSOR) {
            char desc[240];
            return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "%s: state dict entry '%s' is %s, not a tensor", where, name,
                             txlm_pk_describe(v, desc, sizeof desc));
        }
        char *full = malloc(k->u.str.len + 1);
        if (!full) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
        memcpy(full, k->u.str.s, k->u.str.len);
        full[k->u.str.len] = 0;
        int rc = txlm_torch_add(o, full, v, err);
        free(full);
        if (rc) return rc;
    }
    return 0;
}
