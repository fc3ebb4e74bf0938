/* TensorBundle reading (TensorFlow's tensor_bundle.cc, naming.cc): the
 * header entry, one BundleEntryProto per tensor, the data shards. */
#include "tf_bundle.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm_status.h>

#include "file_map.h"
#include "quantize.h"
#include "tf_crc32c.h"
#include "tf_proto.h"
#include "tf_table.h"

/* naming.cc writes the shard number and count with %05d; more shards
 * than that would be a hostile header. */
#define MAX_SHARDS 99999u
#define MAX_NAME 1024u

struct txlm_tf_bundle {
    char *index_path, *prefix;
    txlm_file_map index;
    txlm_tf_tensor *t;
    uint32_t n, cap;
    uint32_t n_shards;
    int have_header;
    txlm_file_map *shards;
    char **shard_paths;
    txlm_err *err;
};

/* Names the file, the entry (its key) and where the entry lies. */
static int entry_fail(const txlm_tf_bundle *b, const txlm_tf_entry *e, const char *what, uint64_t at)
{
    char pos[64] = "", key[1024];
    if (at != UINT64_MAX) snprintf(pos, sizeof pos, ", byte %" PRIu64 " of its value", at);
    return txlm_fail(b->err, TXLM_ERR_FORMAT, "%s: entry '%s' (byte %" PRIu64 " of the block at byte %" PRIu64 "%s): %s",
                     b->index_path, txlm_tf_key_text(e->key, e->klen, key, sizeof key), e->in_block, e->at, pos, what);
}

/* A key that begins with a 0 byte is a slice of a partitioned variable
 * (saved_tensor_slice_util.cc, EncodeTensorNameSlice: the number 0, then
 * the name as OrderedCode writes a string: 0x00 as 00 ff, 0xff as ff 00,
 * ended by 00 01); slices sort before every whole variable. */
static int slice_fail(const txlm_tf_bundle *b, const txlm_tf_entry *e)
{
    uint8_t name[256];
    uint32_t n = 0;
    for (uint32_t i = 1; i < e->klen && n < sizeof name; i++) {
        uint8_t c = e->key[i];
        if ((c == 0x00 || c == 0xff) && i + 1 < e->klen && e->key[i + 1] == (c ? 0x00 : 0xff)) i++;
        else if (c == 0x00) break; /* 00 01: the name's end */
        name[n++] = c;
    }
    char text[1024], what[1200];
    snprintf(what, sizeof what, "a slice of the partitioned variable '%s', which txlm does not read: save the variable whole",
             txlm_tf_key_text(name, n, text, sizeof text));
    return entry_fail(b, e, what, UINT64_MAX);
}

static int header(txlm_tf_bundle *b, const txlm_tf_entry *e)
{
    txlm_pb r = {e->val, e->vlen, 0};
    txlm_pb_field f;
    const char *why = "";
    int rc;
    uint64_t shards = 0;
    while ((rc = txlm_pb_next(&r, &f, &why)) > 0) {
        if (f.num == 1 && f.wire == TXLM_PB_VARINT) shards = f.u;
        else if (f.num == 2 && f.wire == TXLM_PB_VARINT && f.u != 0)
            return entry_fail(b, e, "the bundle is big-endian (its tensors' bytes are not little-endian)", UINT64_MAX);
        else if (f.num == 3 && f.wire == TXLM_PB_LEN) {
            txlm_pb v = {f.bytes, f.n, 0};
            txlm_pb_field g;
            while ((rc = txlm_pb_next(&v, &g, &why)) > 0)
                if (g.num == 2 && g.wire == TXLM_PB_VARINT && g.u > 1) /* min_consumer: format version 1 is all there is */
                    return entry_fail(b, e, "the bundle needs a newer reader (min_consumer > 1)", UINT64_MAX);
            if (rc < 0) return entry_fail(b, e, why, f.bytes - e->val + v.pos);
        }
    }
    if (rc < 0) return entry_fail(b, e, why, r.pos);
    if (shards == 0 || shards > MAX_SHARDS) return entry_fail(b, e, "a header naming no shards, or more than 99999", UINT64_MAX);
    b->n_shards = (uint32_t)shards;
    b->have_header = 1;
    return 0;
}

/* TensorShapeProto: dims (field 2, each a Dim with size in field 1). */
static int shape(txlm_tf_bundle *b, const txlm_tf_entry *e, const txlm_pb_field *sf, txlm_tf_tensor *t)
{
    txlm_pb r = {sf->bytes, sf->n, 0};
    txlm_pb_field f;
    const char *why = "";
    int rc;
    uint64_t base = (uint64_t)(sf->bytes - e->val);
    while ((rc = txlm_pb_next(&r, &f, &why)) > 0) {
        if (f.num == 3 && f.wire == TXLM_PB_VARINT && f.u) return entry_fail(b, e, "a shape of unknown rank", base + f.at);
        if (f.num != 2 || f.wire != TXLM_PB_LEN) continue;
        if (t->rank == TXLM_TF_MAX_RANK) return entry_fail(b, e, "a shape of more than 8 dimensions", base + f.at);
        txlm_pb d = {f.bytes, f.n, 0};
        txlm_pb_field g;
        uint64_t size = 0;
        while ((rc = txlm_pb_next(&d, &g, &why)) > 0)
            if (g.num == 1 && g.wire == TXLM_PB_VARINT) size = g.u;
        if (rc < 0) return entry_fail(b, e, why, base + (uint64_t)(f.bytes - sf->bytes) + d.pos);
        if (size > (1ull << 40)) return entry_fail(b, e, "a negative or huge dimension", base + f.at);
        t->dims[t->rank++] = size;
    }
    if (rc < 0) return entry_fail(b, e, why, base + r.pos);
    t->n_elems = 1;
    for (uint32_t i = 0; i < t->rank; i++) {
        if (t->dims[i] && t->n_elems > (1ull << 40) / t->dims[i])
            return entry_fail(b, e, "a shape of more than 2^40 elements", UINT64_MAX);
        t->n_elems *= t->dims[i];
    }
    return 0;
}

/* A field of the wrong wire type or out of range: the shard id's own message, or the general one. */
static int bad_field(const txlm_tf_bundle *b, const txlm_tf_entry *e, const txlm_pb_field *f)
{
    return entry_fail(b, e, f->num == 3 ? "a shard id outside the header's shards" : "a field of the wrong type or range",
                      f->at);
}

/* A BundleEntryProto (tensor_bundle.proto): dtype (1), shape (2),
 * shard_id (3), offset (4), size (5), crc32c (6); slices (7) are refused,
 * other fields skipped. */
static int fields(txlm_tf_bundle *b, const txlm_tf_entry *e, txlm_tf_tensor *t)
{
    txlm_pb r = {e->val, e->vlen, 0};
    txlm_pb_field f;
    const char *why = "";
    int rc;
    while ((rc = txlm_pb_next(&r, &f, &why)) > 0) {
        int varint = f.wire == TXLM_PB_VARINT;
        switch (f.num) {
        case 1:
            if (!varint || f.u >= 1000) return bad_field(b, e, &f);
            t->dtype = (uint32_t)f.u;
            break;
        case 2: {
            if (f.wire != TXLM_PB_LEN) return bad_field(b, e, &f);
            int shape_rc = shape(b, e, &f, t);
            if (shape_rc) return shape_rc;
            break;
        }
        case 3:
            if (!varint || f.u >= b->n_shards) return bad_field(b, e, &f);
            t->shard = (uint32_t)f.u;
            break;
        case 4:
            if (!varint || f.u >= (1ull << 62)) return bad_field(b, e, &f);
            t->offset = f.u;
            break;
        case 5:
            if (!varint || f.u >= (1ull << 62)) return bad_field(b, e, &f);
            t->size = f.u;
            break;
        case 6:
            if (f.wire != TXLM_PB_I32) return bad_field(b, e, &f);
            t->crc = txlm_crc32c_unmask((uint32_t)f.u);
            break;
        case 7:
            return entry_fail(b, e, "a partitioned tensor (saved in slices), which txlm does not read: save the variable whole",
                              f.at);
        }
    }
    if (rc < 0) return entry_fail(b, e, why, r.pos);
    uint32_t es = txlm_tf_float_size(t->dtype);
    if (es && t->size != t->n_elems * es) return entry_fail(b, e, "a size that does not match its dtype and shape", UINT64_MAX);
    return 0;
}

static int add(void *user, const txlm_tf_entry *e, txlm_err *err)
{
    (void)err;
    txlm_tf_bundle *b = user;
    if (e->klen == 0) return b->have_header ? entry_fail(b, e, "a second header", UINT64_MAX) : header(b, e);
    if (!b->have_header) return entry_fail(b, e, "an entry before the header", UINT64_MAX);
    if (e->key[0] == 0) return slice_fail(b, e);
    if (e->klen >= MAX_NAME || memchr(e->key, 0, e->klen))
        return entry_fail(b, e, "a name with a NUL byte or of 1024 bytes or more", UINT64_MAX);
    if (b->n == b->cap) {
        uint32_t cap = b->cap ? b->cap * 2 : 64;
        txlm_tf_tensor *t = realloc(b->t, cap * sizeof *t);
        if (!t) return txlm_fail(b->err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
        b->t = t;
        b->cap = cap;
    }
    txlm_tf_tensor *t = &b->t[b->n];
    memset(t, 0, sizeof *t);
    t->block_at = e->at;
    t->in_block = e->in_block;
    int rc = fields(b, e, t);
    if (rc) return rc;
    if (!(t->name = malloc(e->klen + 1u))) return txlm_fail(b->err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(t->name, e->key, e->klen);
    t->name[e->klen] = 0;
    b->n++;
    return 0;
}

static char *cat(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s%s", a, b);
    return p;
}

static int map_shards(txlm_tf_bundle *b)
{
    b->shards = calloc(b->n_shards, sizeof *b->shards);
    b->shard_paths = calloc(b->n_shards, sizeof *b->shard_paths);
    if (!b->shards || !b->shard_paths) return txlm_fail(b->err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    for (uint32_t i = 0; i < b->n_shards; i++) {
        char tail[40];
        snprintf(tail, sizeof tail, ".data-%05" PRIu32 "-of-%05" PRIu32, i, b->n_shards);
        if (!(b->shard_paths[i] = cat(b->prefix, tail))) return txlm_fail(b->err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
        int rc = txlm_file_map_open(b->shard_paths[i], &b->shards[i], b->err);
        if (rc)
            return txlm_fail_prefix(b->err, "%s names %" PRIu32 " data shard%s: ", b->index_path, b->n_shards,
                                    b->n_shards == 1 ? "" : "s");
    }
    return 0;
}

static int parse(txlm_tf_bundle *b, const uint8_t *data, uint64_t len)
{
    int rc = txlm_tf_table_each(b->index_path, data, len, add, b, b->err);
    if (!rc && !b->have_header)
        rc = txlm_fail(b->err, TXLM_ERR_FORMAT, "%s: no header entry (an empty table)", b->index_path);
    return rc;
}

static txlm_tf_bundle *new_bundle(const char *prefix, const char *index_path)
{
    txlm_tf_bundle *b = calloc(1, sizeof *b);
    if (b && (!(b->prefix = strdup(prefix)) || !(b->index_path = index_path ? strdup(index_path) : cat(prefix, ".index")))) {
        txlm_tf_bundle_free(b);
        b = NULL;
    }
    return b;
}

int txlm_tf_bundle_open_memory(const char *where, const uint8_t *data, uint64_t len, txlm_tf_bundle **out, txlm_err *err)
{
    *out = NULL;
    txlm_tf_bundle *b = new_bundle(where, where);
    if (!b) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    txlm_err local = {0, ""};
    b->err = err ? err : &local;
    int rc = parse(b, data, len);
    if (rc) {
        txlm_tf_bundle_free(b);
        return rc;
    }
    b->err = NULL;
    *out = b;
    return 0;
}

int txlm_tf_bundle_open(const char *prefix, txlm_tf_bundle **out, txlm_err *err)
{
    *out = NULL;
    txlm_tf_bundle *b = new_bundle(prefix, NULL);
    if (!b) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    txlm_err local = {0, ""};
    b->err = err ? err : &local;
    int rc = txlm_file_map_open(b->index_path, &b->index, b->err);
    if (!rc) rc = parse(b, b->index.data, b->index.len);
    if (!rc) rc = map_shards(b);
    if (rc) {
        txlm_tf_bundle_free(b);
        return rc;
    }
    b->err = NULL;
    *out = b;
    return 0;
}

void txlm_tf_bundle_free(txlm_tf_bundle *b)
{
    if (!b) return;
    for (uint32_t i = 0; i < b->n; i++) free(b->t[i].name);
    free(b->t);
    for (uint32_t i = 0; b->shards && i < b->n_shards; i++) txlm_file_map_close(&b->shards[i]);
    for (uint32_t i = 0; b->shard_paths && i < b->n_shards; i++) free(b->shard_paths[i]);
    free(b->shards);
    free(b->shard_paths);
    txlm_file_map_close(&b->index);
    free(b->index_path);
    free(b->prefix);
    free(b);
}

uint32_t txlm_tf_bundle_count(const txlm_tf_bundle *b) { return b->n; }
const txlm_tf_tensor *txlm_tf_bundle_at(const txlm_tf_bundle *b, uint32_t i) { return i < b->n ? &b->t[i] : NULL; }
const char *txlm_tf_bundle_index_path(const txlm_tf_bundle *b) { return b->index_path; }
uint32_t txlm_tf_bundle_shard_count(const txlm_tf_bundle *b) { return b->shard_paths ? b->n_shards : 0; }
const char *txlm_tf_bundle_shard_path(const txlm_tf_bundle *b, uint32_t i)
{
    return b->shard_paths && i < b->n_shards ? b->shard_paths[i] : NULL;
}

/* The entries are in the table's order, which the table reader checked is
 * strictly increasing bytewise (tf_table.h); names hold no NUL byte (add),
 * so strcmp orders them alike and a binary search finds any of them. */
const txlm_tf_tensor *txlm_tf_bundle_find(const txlm_tf_bundle *b, const char *name)
{
    uint32_t lo = 0, hi = b->n; /* the name, if there, is at an index in [lo, hi) */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(b->t[mid].name, name);
        if (c == 0) return &b->t[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

int txlm_tf_bundle_data(const txlm_tf_bundle *b, const txlm_tf_tensor *t, const uint8_t **data, txlm_err *err)
{
    if (!b->shards) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: an index without its data shards", b->index_path);
    const txlm_file_map *m = &b->shards[t->shard];
    const char *path = b->shard_paths[t->shard];
    if (t->offset > m->len || t->size > m->len - t->offset)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: tensor '%s' (entry at byte %" PRIu64 " of the block at byte %" PRIu64
                         " of %s) lies at bytes %" PRIu64 "..%" PRIu64 ", past the shard's end (%" PRIu64 " bytes)",
                         path, t->name, t->in_block, t->block_at, b->index_path, t->offset, t->offset + t->size, m->len);
    uint32_t got = txlm_crc32c_extend(0, m->data + t->offset, t->size);
    if (got != t->crc)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: tensor '%s' at byte %" PRIu64 " fails its CRC-32C (stored %08" PRIx32
                         ", computed %08" PRIx32 "): the file is damaged", path, t->name, t->offset, t->crc, got);
    *data = m->data + t->offset;
    return 0;
}

uint32_t txlm_tf_float_size(uint32_t dtype)
{
    switch (dtype) {
    case TXLM_TF_FLOAT: return 4;
    case TXLM_TF_DOUBLE: return 8;
    case TXLM_TF_BFLOAT16:
    case TXLM_TF_HALF: return 2;
    default: return 0;
    }
}

const char *txlm_tf_dtype_name(uint32_t dtype, char *buf, unsigned cap)
{
    static const char *const names[] = {"invalid", "float", "double", "int32", "uint8", "int16", "int8", "string",
                                        "complex64", "int64", "bool", "qint8", "quint8", "qint32", "bfloat16", "qint16",
                                        "quint16", "uint16", "complex128", "half", "resource", "variant", "uint32",
                                        "uint64"};
    if (dtype < sizeof names / sizeof *names) return names[dtype];
    snprintf(buf, cap, "DataType %" PRIu32, dtype);
    return buf;
}

double txlm_tf_elem(const uint8_t *data, uint32_t dtype, uint64_t i)
{
    const uint8_t *p = data + i * txlm_tf_float_size(dtype);
    if (dtype == TXLM_TF_DOUBLE) {
        uint64_t u = 0;
        for (int k = 7; k >= 0; k--) u = u << 8 | p[k];
        double v;
        memcpy(&v, &u, 8);
        return v;
    }
    if (dtype == TXLM_TF_HALF) return txlm_f16_to_f32((uint16_t)(p[0] | p[1] << 8));
    if (dtype == TXLM_TF_BFLOAT16) return txlm_bf16_to_f32((uint16_t)(p[0] | p[1] << 8));
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    float v;
    memcpy(&v, &u, 4);
    return v;
}
