/* Vocabularies pickled from HF TransfoXLTokenizer's attribute dict: as a
 * plain pickle (vocab.pkl) or through torch.save (vocab.bin, legacy or zip).
 * The form is told by the first bytes. Ids come from idx2sym; sym2idx,
 * unk_idx and the special symbols are checked against it. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <txlm_status.h>

#include "pack.h"
#include "vocab_check.h"
#include "torch.h"
#include "torch_read.h"
#include "txlm_layout.h"

static int is_zip(const uint8_t *h, uint64_t len) { return len >= 4 && !memcmp(h, "PK\x03\x04", 4); }

static int is_legacy(const uint8_t *h, uint64_t len)
{
    return len >= TXLM_TORCH_LEGACY_MAGIC_LEN && !memcmp(h, TXLM_TORCH_LEGACY_MAGIC, TXLM_TORCH_LEGACY_MAGIC_LEN);
}

int txlm_vocab_sniff_pickle(const void *head, uint64_t len)
{
    const uint8_t *h = head;
    return is_zip(h, len) || is_legacy(h, len) || (len >= 2 && h[0] == 0x80 && h[1] >= 2 && h[1] <= 5);
}

static int shown(char *out, size_t cap, const txlm_pk_value *v)
{
    size_t n = 0;
    for (uint32_t i = 0; v->kind == TXLM_PK_STR && i < v->u.str.len && n + 1 < cap; i++)
        out[n++] = (v->u.str.s[i] >= 0x20 && v->u.str.s[i] < 0x7f) ? v->u.str.s[i] : '?';
    out[n] = 0;
    return (int)n;
}

static int fill_symbols(const char *where, const txlm_pk_value *list, txlm_vocab_buf *b, txlm_err *err)
{
    if (!list || (list->kind != TXLM_PK_LIST && list->kind != TXLM_PK_TUPLE))
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: no idx2sym list (not a TransfoXLTokenizer vocabulary)", where);
    uint32_t n = list->n;
    if (n == 0) return txlm_fail(err, TXLM_ERR_FORMAT, "%s: idx2sym is empty", where);
    if (n > TXLM_VOCB_MAX_N) return txlm_fail(err, TXLM_ERR_LIMIT, "%s: %" PRIu32 " symbols, at most %u", where, n, TXLM_VOCB_MAX_N);
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        const txlm_pk_value *s = list->u.seq.items[i];
        if (s->kind != TXLM_PK_STR)
            return txlm_fail(err, TXLM_ERR_FORMAT, "%s: idx2sym[%" PRIu32 "] is a %s, not a string", where, i,
                             txlm_pk_kind_name(s->kind));
        if (s->u.str.len == 0) return txlm_fail(err, TXLM_ERR_FORMAT, "%s: idx2sym[%" PRIu32 "] is empty", where, i);
        uint64_t ok = txlm_utf8_valid_prefix((const uint8_t *)s->u.str.s, s->u.str.len);
        if (ok != s->u.str.len)
            return txlm_fail(err, TXLM_ERR_FORMAT, "%s: idx2sym[%" PRIu32 "] is not valid UTF-8 (byte %" PRIu64 ")", where, i,
                             ok);
        total += s->u.str.len;
    }
    if (total > TXLM_VOCB_MAX_BLOB)
        return txlm_fail(err, TXLM_ERR_LIMIT, "%s: symbols take %" PRIu64 " bytes, at most %u", where, total, TXLM_VOCB_MAX_BLOB);
    b->offsets = malloc(((size_t)n + 1) * sizeof *b->offsets);
    b->blob = malloc(total ? total : 1);
    if (!b->offsets || !b->blob) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
    uint32_t w = 0;
    for (uint32_t i = 0; i < n; i++) {
        const txlm_pk_value *s = list->u.seq.items[i];
        b->offsets[i] = w;
        memcpy(b->blob + w, s->u.str.s, s->u.str.len);
        w += s->u.str.len;
    }
    b->offsets[n] = w;
    b->v.n = n;
    b->v.offsets = b->offsets;
    b->v.blob = b->blob;
    b->v.blob_size = w;
    return 0;
}

static int32_t sym_id(const txlm_vocab *v, const txlm_pk_value *s)
{
    for (uint32_t i = 0; i < v->n; i++) {
        uint32_t len;
        const char *p = txlm_vocab_sym(v, i, &len);
        if (len == s->u.str.len && !memcmp(p, s->u.str.s, len)) return (int32_t)i;
    }
    return -1;
}

/* sym2idx must be idx2sym inverted: same size, each entry pointing back
 * at its own symbol (idx2sym is known to be duplicate-free). */
static int check_sym2idx(const char *where, const txlm_pk_value *d, const txlm_vocab *v, txlm_err *err)
{
    if (!d) return 0;
    if (d->kind != TXLM_PK_DICT) return txlm_fail(err, TXLM_ERR_FORMAT, "%s: sym2idx is a %s, not a dict", where, txlm_pk_kind_name(d->kind));
    if (d->n / 2 != v->n)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: sym2idx has %" PRIu32 " entries, idx2sym %" PRIu32, where, d->n / 2, v->n);
    for (uint32_t i = 0; i < d->n; i += 2) {
        const txlm_pk_value *k = d->u.seq.items[i], *id = d->u.seq.items[i + 1];
        char name[80];
        shown(name, sizeof name, k);
        if (k->kind != TXLM_PK_STR || id->kind != TXLM_PK_INT)
            return txlm_fail(err, TXLM_ERR_FORMAT, "%s: sym2idx entry %" PRIu32 " is not a string -> int", where, i / 2);
        uint32_t len = 0;
        const char *s = id->u.i >= 0 && id->u.i < (int64_t)v->n ? txlm_vocab_sym(v, (uint32_t)id->u.i, &len) : NULL;
        if (!s || len != k->u.str.len || memcmp(s, k->u.str.s, len))
            return txlm_fail(err, TXLM_ERR_FORMAT, "%s: sym2idx['%s'] = %" PRId64 " disagrees with idx2sym", where, name,
                             id->u.i);
    }
    return 0;
}

static int special_ids(const char *where, const txlm_pk_value *root, txlm_vocab *v, txlm_err *err)
{
    const txlm_pk_value *sp = txlm_pk_dict_get(root, "special");
    if (sp && sp->kind != TXLM_PK_LIST && sp->kind != TXLM_PK_TUPLE)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: special is a %s, not a list", where, txlm_pk_kind_name(sp->kind));
    for (uint32_t i = 0; sp && i < sp->n; i++) {
        const txlm_pk_value *s = sp->u.seq.items[i];
        char name[80];
        shown(name, sizeof name, s);
        if (s->kind != TXLM_PK_STR || sym_id(v, s) < 0)
            return txlm_fail(err, TXLM_ERR_FORMAT, "%s: special symbol %" PRIu32 " ('%s') is not in idx2sym", where, i, name);
    }
    v->eos_id = txlm_vocab_find_sym(v, "<eos>");
    v->unk_id = txlm_vocab_find_sym(v, "<unk>");
    if (v->unk_id < 0) v->unk_id = txlm_vocab_find_sym(v, "<UNK>");
    const txlm_pk_value *u = txlm_pk_dict_get(root, "unk_idx");
    if (u && u->kind == TXLM_PK_INT) {
        if (u->u.i < 0 || u->u.i >= (int64_t)v->n)
            return txlm_fail(err, TXLM_ERR_FORMAT, "%s: unk_idx %" PRId64 " is outside the %" PRIu32 " symbols", where, u->u.i,
                             v->n);
        v->unk_id = (int32_t)u->u.i;
    } else if (u && u->kind != TXLM_PK_NONE) {
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: unk_idx is a %s, not an int", where, txlm_pk_kind_name(u->kind));
    }
    return 0;
}

int txlm_vocab_from_attrs(const char *where, const txlm_pk_value *root, txlm_vocab_buf *b, txlm_err *err)
{
    char desc[240];
    if (root->kind != TXLM_PK_DICT)
        return txlm_fail(err, root->kind == TXLM_PK_OBJECT || root->kind == TXLM_PK_CLASS ? TXLM_ERR_UNSUPPORTED : TXLM_ERR_FORMAT,
                         "%s: the pickled object is %s, not a tokenizer's attribute dict", where,
                         txlm_pk_describe(root, desc, sizeof desc));
    int rc = fill_symbols(where, txlm_pk_dict_get(root, "idx2sym"), b, err);
    if (rc) return rc;
    rc = txlm_vocab_check_symbols(&b->v, where, &txlm_vocab_idx2sym, TXLM_ERR_FORMAT, err);
    if (rc) return rc;
    rc = check_sym2idx(where, txlm_pk_dict_get(root, "sym2idx"), &b->v, err);
    if (!rc) rc = special_ids(where, root, &b->v, err);
    if (rc) return rc;
    const txlm_pk_value *lc = txlm_pk_dict_get(root, "lower_case");
    if (lc && lc->kind != TXLM_PK_BOOL && lc->kind != TXLM_PK_INT && lc->kind != TXLM_PK_NONE)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: lower_case is a %s, not a bool", where, txlm_pk_kind_name(lc->kind));
    b->v.kind = TXLM_TOK_WORD;
    b->v.flags = lc && (lc->kind == TXLM_PK_BOOL || lc->kind == TXLM_PK_INT) && lc->u.i ? TXLM_VOCAB_LOWER_CASE : 0;
    return 0;
}

int txlm_vocab_load_pickle(const char *path, txlm_vocab_buf *out, txlm_err *err)
{
    memset(out, 0, sizeof *out);
    txlm_file_map map;
    int rc = txlm_file_map_open(path, &map, err);
    if (rc) return rc;
    txlm_pickle *pk = NULL;
    const txlm_pk_value *root = NULL;
    txlm_zip z = {0};
    if (is_legacy(map.data, map.len)) {
        uint64_t end;
        rc = txlm_torch_legacy_object(path, map.data, map.len, &pk, &root, &end, err);
    } else if (is_zip(map.data, map.len)) {
        const char *prefix;
        size_t plen;
        rc = txlm_torch_zip_object(path, map.data, map.len, &z, &prefix, &plen, &pk, &root, err);
    } else if (txlm_vocab_sniff_pickle(map.data, map.len)) {
        uint64_t used = 0;
        rc = txlm_pickle_parse(path, map.data, map.len, 0, &pk, &root, &used, err);
        if (!rc && used != map.len)
            rc = txlm_fail(err, TXLM_ERR_FORMAT, "%s: %" PRIu64 " unexpected bytes after the pickle (byte %" PRIu64 ")", path,
                           map.len - used, used);
    } else {
        rc = txlm_fail(err, TXLM_ERR_FORMAT, "%s: neither a pickle nor a torch.save file (first bytes not recognised)", path);
    }
    txlm_vocab_buf b;
    memset(&b, 0, sizeof b);
    /* a training code's Vocab record, or the corpus (cache.pt) holding one */
    if (!rc && root->kind == TXLM_PK_OBJECT && txlm_pk_vocab_attrs(root)) root = txlm_pk_vocab_attrs(root);
    if (!rc) rc = txlm_vocab_from_attrs(path, root, &b, err);
    txlm_pickle_free(pk);
    txlm_zip_free(&z);
    txlm_file_map_close(&map);
    if (rc) {
        txlm_vocab_buf_free(&b);
        return rc;
    }
    *out = b;
    return 0;
}
