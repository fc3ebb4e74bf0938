/* LevelDB-format table reading (TensorFlow's tsl/lib/io: format.cc,
 * block.cc, table.cc): the footer, block handles, block trailers (type
 * byte and masked CRC-32C of contents + type), snappy blocks, and the
 * entries of a block. */
#include "tf_table.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <snappy-c.h>
#include <txlm_status.h>

#include "tf_crc32c.h"
#include "tf_proto.h"

/* A block's trailer: its type byte and CRC. */
#define TRAILER 5u
/* Bundle index blocks are a few KiB (TensorFlow writes 4 KiB blocks);
 * a snappy header claiming more than this is refused, not allocated. */
#define MAX_BLOCK (256u << 20)

typedef struct block {
    const uint8_t *p;
    uint64_t len, at; /* at: the block's offset in the file */
    uint8_t *owned;   /* the decompressed copy of a snappy block */
} block;

typedef struct walk {
    const char *where;
    const uint8_t *data;
    uint64_t len;
    txlm_err *err;
    uint8_t *key;       /* the current key, rebuilt from shared prefixes */
    uint64_t key_cap;
    uint8_t *last;      /* the last key handed out, for the order check */
    uint64_t last_len, last_cap;
    int have_last;
} walk;

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static int bad(walk *w, uint64_t at, const char *what)
{
    return txlm_fail(w->err, TXLM_ERR_FORMAT, "%s: %s at byte %" PRIu64, w->where, what, at);
}

/* A block handle (two varints) read from p[*pos .. len). */
static int handle(const uint8_t *p, uint64_t len, uint64_t *pos, uint64_t *off, uint64_t *size)
{
    return txlm_pb_varint(p, len, pos, off) || txlm_pb_varint(p, len, pos, size);
}

static int read_block(walk *w, uint64_t off, uint64_t size, uint64_t handle_at, block *b)
{
    memset(b, 0, sizeof *b);
    if (off > w->len || size > w->len - off || w->len - off - size < TRAILER)
        return txlm_fail(w->err, TXLM_ERR_FORMAT,
                         "%s: the block handle at byte %" PRIu64 " points past the end (offset %" PRIu64 ", %" PRIu64
                         " bytes, file of %" PRIu64 ")",
                         w->where, handle_at, off, size, w->len);
    const uint8_t *p = w->data + off;
    uint32_t want = txlm_crc32c_unmask(le32(p + size + 1)), got = txlm_crc32c_extend(0, p, size + 1);
    if (want != got)
        return txlm_fail(w->err, TXLM_ERR_FORMAT, "%s: the block at byte %" PRIu64 " fails its CRC-32C (stored %08" PRIx32
                         ", computed %08" PRIx32 ")", w->where, off, want, got);
    b->at = off;
    if (p[size] == 0) {
        b->p = p;
        b->len = size;
        return 0;
    }
    if (p[size] != 1)
        return txlm_fail(w->err, TXLM_ERR_FORMAT, "%s: the block at byte %" PRIu64 " has type %u (0 plain or 1 snappy)",
                         w->where, off, p[size]);
    size_t n = 0;
    if (snappy_uncompressed_length((const char *)p, size, &n) != SNAPPY_OK)
        return bad(w, off, "a snappy block whose length header is corrupt");
    if (n > MAX_BLOCK) return bad(w, off, "a snappy block claiming more than 256 MiB");
    b->owned = malloc(n ? n : 1);
    if (!b->owned) return txlm_fail(w->err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory for a block", w->where);
    size_t got_n = n;
    if (snappy_uncompress((const char *)p, size, (char *)b->owned, &got_n) != SNAPPY_OK || got_n != n) {
        free(b->owned);
        b->owned = NULL;
        return bad(w, off, "a corrupt snappy block");
    }
    b->p = b->owned;
    b->len = n;
    return 0;
}

static int grow(uint8_t **buf, uint64_t *cap, uint64_t need)
{
    if (need <= *cap) return 0;
    uint64_t n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    uint8_t *q = realloc(*buf, n);
    if (!q) return -1;
    *buf = q;
    *cap = n;
    return 0;
}

const char *txlm_tf_key_text(const uint8_t *key, uint32_t n, char *out, size_t cap)
{
    size_t k = 0;
    for (uint32_t i = 0; i < n && i < 200 && k + 5 < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, key[i] >= 0x20 && key[i] < 0x7f ? "%c" : "\\x%02x", key[i]);
    out[k] = 0;
    return out;
}

static int key_order(walk *w, const txlm_tf_entry *e)
{
    if (w->have_last) {
        uint64_t m = w->last_len < e->klen ? w->last_len : e->klen;
        int c = m ? memcmp(w->last, e->key, m) : 0;
        char key[1024], last[1024];
        if (c > 0 || (c == 0 && w->last_len >= e->klen))
            return txlm_fail(w->err, TXLM_ERR_FORMAT, "%s: entry '%s' (byte %" PRIu64 " of the block at byte %" PRIu64
                             ") is not after the entry before it ('%s'): a table's keys are sorted",
                             w->where, txlm_tf_key_text(e->key, e->klen, key, sizeof key), e->in_block, e->at,
                             txlm_tf_key_text(w->last, (uint32_t)w->last_len, last, sizeof last));
    }
    if (grow(&w->last, &w->last_cap, e->klen)) return txlm_fail(w->err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    if (e->klen) memcpy(w->last, e->key, e->klen);
    w->last_len = e->klen;
    w->have_last = 1;
    return 0;
}

/* One entry's header and bytes at b->p[*pos ..end); builds the key. */
static int entry(walk *w, const block *b, uint64_t end, uint64_t *pos, uint64_t *klen, txlm_tf_entry *e)
{
    uint64_t at = *pos, shared, own, vlen;
    e->at = b->at;
    e->in_block = at;
    if (txlm_pb_varint(b->p, end, pos, &shared) || txlm_pb_varint(b->p, end, pos, &own) ||
        txlm_pb_varint(b->p, end, pos, &vlen) || shared > UINT32_MAX || own > UINT32_MAX || vlen > UINT32_MAX)
        return txlm_fail(w->err, TXLM_ERR_FORMAT, "%s: a corrupt entry header at byte %" PRIu64 " of the block at byte %"
                         PRIu64, w->where, at, b->at);
    if (shared > *klen || own > end - *pos || vlen > end - *pos - own)
        return txlm_fail(w->err, TXLM_ERR_FORMAT, "%s: the entry at byte %" PRIu64 " of the block at byte %" PRIu64
                         " shares %" PRIu64 " key bytes of %" PRIu64 " or runs past the block (%" PRIu64 " + %" PRIu64
                         " bytes)", w->where, at, b->at, shared, *klen, own, vlen);
    if (grow(&w->key, &w->key_cap, shared + own + 1)) return txlm_fail(w->err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(w->key + shared, b->p + *pos, own);
    *klen = shared + own;
    *pos += own;
    e->key = w->key;
    e->klen = (uint32_t)*klen;
    e->val = b->p + *pos;
    e->vlen = (uint32_t)vlen;
    *pos += vlen;
    return 0;
}

/* The entries of a block, each checked and handed to fn in order. */
static int each_entry(walk *w, const block *b, txlm_tf_table_fn fn, void *user)
{
    if (b->len < 4) return bad(w, b->at, "a block too short for its restart count");
    uint32_t n_restarts = le32(b->p + b->len - 4);
    if (n_restarts == 0 || n_restarts > (b->len - 4) / 4)
        return txlm_fail(w->err, TXLM_ERR_FORMAT, "%s: the block at byte %" PRIu64 " has %" PRIu32
                         " restart points, impossible in %" PRIu64 " bytes", w->where, b->at, n_restarts, b->len);
    uint64_t end = b->len - 4 - 4ull * n_restarts, pos = 0, klen = 0;
    for (uint32_t r = 0; r < n_restarts; r++)
        if (le32(b->p + end + 4ull * r) > end || (r == 0 && le32(b->p + end) != 0))
            return bad(w, b->at, "a block whose restart array points outside its entries");
    while (pos < end) {
        txlm_tf_entry e;
        int rc = entry(w, b, end, &pos, &klen, &e);
        if (!rc) rc = key_order(w, &e);
        if (!rc) rc = fn(user, &e, w->err);
        if (rc) return rc;
    }
    return 0;
}

typedef struct index_ctx {
    walk *w, *data; /* the index block's walk and the data blocks' (keys ordered across all blocks) */
    txlm_tf_table_fn fn;
    void *user;
} index_ctx;

/* An index entry: a separator key and the handle of its data block. */
static int index_entry(void *user, const txlm_tf_entry *e, txlm_err *err)
{
    (void)err;
    index_ctx *c = user;
    walk *w = c->w;
    uint64_t pos = 0, off, size;
    if (handle(e->val, e->vlen, &pos, &off, &size) || pos != e->vlen)
        return txlm_fail(w->err, TXLM_ERR_FORMAT, "%s: the index entry at byte %" PRIu64 " of the block at byte %" PRIu64
                         " is not a block handle", w->where, e->in_block, e->at);
    block b;
    int rc = read_block(w, off, size, e->at, &b);
    if (!rc) rc = each_entry(c->data, &b, c->fn, c->user);
    free(b.owned);
    return rc;
}

int txlm_tf_table_each(const char *where, const uint8_t *data, uint64_t len, txlm_tf_table_fn fn, void *user,
                       txlm_err *err)
{
    walk w = {where, data, len, err, NULL, 0, NULL, 0, 0, 0};
    if (len < TXLM_TF_FOOTER_LEN)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: %" PRIu64 " bytes, shorter than a table's 48-byte footer", where, len);
    const uint8_t *f = data + len - TXLM_TF_FOOTER_LEN;
    uint64_t magic = (uint64_t)le32(f + 40) | (uint64_t)le32(f + 44) << 32;
    if (magic != TXLM_TF_TABLE_MAGIC)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: no table magic at byte %" PRIu64 " (not a TensorFlow .index, or cut short)",
                         where, len - 8);
    uint64_t pos = 0, meta_off, meta_size, idx_off, idx_size;
    if (handle(f, 40, &pos, &meta_off, &meta_size) || handle(f, 40, &pos, &idx_off, &idx_size))
        return bad(&w, len - TXLM_TF_FOOTER_LEN, "a corrupt footer");
    block meta, index;
    int rc = read_block(&w, meta_off, meta_size, len - TXLM_TF_FOOTER_LEN, &meta);
    free(meta.owned); /* the metaindex is checked, not used: bundles write it empty */
    if (!rc) rc = read_block(&w, idx_off, idx_size, len - TXLM_TF_FOOTER_LEN, &index);
    if (rc) return rc;
    walk dw = w;
    index_ctx c = {&w, &dw, fn, user};
    rc = each_entry(&w, &index, index_entry, &c);
    free(index.owned);
    free(w.key);
    free(w.last);
    free(dw.key);
    free(dw.last);
    return rc;
}
