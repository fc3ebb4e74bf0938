#include "torch_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zip.h"

void buf_put(buf *b, const void *data, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) exit(1);
    }
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
}

void buf_le(buf *b, uint64_t v, int bytes)
{
    uint8_t t[8];
    for (int i = 0; i < bytes; i++) t[i] = (uint8_t)(v >> (8 * i));
    buf_put(b, t, (size_t)bytes);
}

void buf_free(buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

void pk_op(buf *b, uint8_t op) { buf_put(b, &op, 1); }

void pk_begin(buf *b)
{
    pk_op(b, 0x80);
    pk_op(b, 2);
}

void pk_global(buf *b, const char *module, const char *name)
{
    pk_op(b, 'c');
    buf_put(b, module, strlen(module));
    pk_op(b, '\n');
    buf_put(b, name, strlen(name));
    pk_op(b, '\n');
}

void pk_str(buf *b, const char *s)
{
    pk_op(b, 'X');
    buf_le(b, strlen(s), 4);
    buf_put(b, s, strlen(s));
}

void pk_int(buf *b, int64_t v)
{
    if (v >= 0 && v < 256) {
        pk_op(b, 'K');
        buf_le(b, (uint64_t)v, 1);
    } else if (v >= 0 && v < 65536) {
        pk_op(b, 'M');
        buf_le(b, (uint64_t)v, 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        pk_op(b, 'J');
        buf_le(b, (uint64_t)v, 4);
    } else {
        pk_op(b, 0x8a);
        pk_op(b, 8);
        buf_le(b, (uint64_t)v, 8);
    }
}

static void int_tuple(buf *b, int rank, const uint64_t *v)
{
    pk_op(b, '(');
    for (int i = 0; i < rank; i++) pk_int(b, (int64_t)v[i]);
    pk_op(b, 't');
}

void pk_tensor_view(buf *b, const char *type, const char *key, uint64_t numel, const char *view_key, uint64_t view_off,
                    uint64_t view_n, uint64_t offset, int rank, const uint64_t *dims, const uint64_t *strides)
{
    pk_global(b, "torch._utils", "_rebuild_tensor_v2");
    pk_op(b, '(');
    pk_op(b, '(');
    pk_str(b, "storage");
    pk_global(b, "torch", type);
    pk_str(b, key);
    pk_str(b, "cpu");
    pk_int(b, (int64_t)numel);
    if (view_key) {
        pk_str(b, view_key);
        pk_int(b, (int64_t)view_off);
        pk_int(b, (int64_t)view_n);
        pk_op(b, 0x87);
    }
    pk_op(b, 't');
    pk_op(b, 'Q');
    pk_int(b, (int64_t)offset);
    int_tuple(b, rank, dims);
    int_tuple(b, rank, strides);
    pk_op(b, 0x89);
    pk_global(b, "collections", "OrderedDict");
    pk_op(b, ')');
    pk_op(b, 'R');
    pk_op(b, 't');
    pk_op(b, 'R');
}

void pk_tensor(buf *b, const char *type, const char *key, uint64_t numel, uint64_t offset, int rank,
               const uint64_t *dims, const uint64_t *strides)
{
    pk_tensor_view(b, type, key, numel, NULL, 0, 0, offset, rank, dims, strides);
}

void pk_ordered_dict_begin(buf *b)
{
    pk_begin(b);
    pk_global(b, "collections", "OrderedDict");
    pk_op(b, ')');
    pk_op(b, 'R');
    pk_op(b, '(');
}

void pk_dict_end(buf *b)
{
    pk_op(b, 'u');
    pk_op(b, '.');
}

uint8_t *zip_build(const zip_in *e, int n, int flags, int method_entry, uint16_t method, size_t *len)
{
    buf b = {0}, cd = {0};
    int z64 = flags & ZIP_FORCE64;
    for (int i = 0; i < n; i++) {
        uint32_t crc = txlm_crc32(0, e[i].data, e[i].len);
        uint16_t m = i == method_entry ? method : 0;
        size_t nl = strlen(e[i].name);
        uint64_t local = b.n;
        buf_le(&b, 0x04034b50u, 4);
        buf_le(&b, 45, 2);
        buf_le(&b, 0, 2);
        buf_le(&b, m, 2);
        buf_le(&b, 0, 4); /* time, date */
        buf_le(&b, crc, 4);
        buf_le(&b, z64 ? 0xffffffffu : e[i].len, 4);
        buf_le(&b, z64 ? 0xffffffffu : e[i].len, 4);
        buf_le(&b, nl, 2);
        buf_le(&b, z64 ? 20 : 0, 2);
        buf_put(&b, e[i].name, nl);
        if (z64) {
            buf_le(&b, 1, 2);
            buf_le(&b, 16, 2);
            buf_le(&b, e[i].len, 8);
            buf_le(&b, e[i].len, 8);
        }
        buf_put(&b, e[i].data, e[i].len);

        buf_le(&cd, 0x02014b50u, 4);
        buf_le(&cd, 45, 2);
        buf_le(&cd, 45, 2);
        buf_le(&cd, 0, 2);
        buf_le(&cd, m, 2);
        buf_le(&cd, 0, 4);
        buf_le(&cd, crc, 4);
        buf_le(&cd, z64 ? 0xffffffffu : e[i].len, 4);
        buf_le(&cd, z64 ? 0xffffffffu : e[i].len, 4);
        buf_le(&cd, nl, 2);
        buf_le(&cd, z64 ? 28 : 0, 2);
        buf_le(&cd, 0, 2);  /* comment */
        buf_le(&cd, 0, 2);  /* disk */
        buf_le(&cd, 0, 2);  /* internal attributes */
        buf_le(&cd, 0, 4);  /* external attributes */
        buf_le(&cd, z64 ? 0xffffffffu : local, 4);
        buf_put(&cd, e[i].name, nl);
        if (z64) {
            buf_le(&cd, 1, 2);
            buf_le(&cd, 24, 2);
            buf_le(&cd, e[i].len, 8);
            buf_le(&cd, e[i].len, 8);
            buf_le(&cd, local, 8);
        }
    }
    uint64_t cd_at = b.n;
    buf_put(&b, cd.p, cd.n);
    if (z64) {
        uint64_t at = b.n;
        buf_le(&b, 0x06064b50u, 4);
        buf_le(&b, 44, 8);
        buf_le(&b, 45, 2);
        buf_le(&b, 45, 2);
        buf_le(&b, 0, 4);
        buf_le(&b, 0, 4);
        buf_le(&b, (uint64_t)n, 8);
        buf_le(&b, (uint64_t)n, 8);
        buf_le(&b, cd.n, 8);
        buf_le(&b, cd_at, 8);
        buf_le(&b, 0x07064b50u, 4);
        buf_le(&b, 0, 4);
        buf_le(&b, at, 8);
        buf_le(&b, 1, 4);
    }
    buf_le(&b, 0x06054b50u, 4);
    buf_le(&b, 0, 4);
    buf_le(&b, z64 ? 0xffff : (uint64_t)n, 2);
    buf_le(&b, z64 ? 0xffff : (uint64_t)n, 2);
    buf_le(&b, z64 ? 0xffffffffu : cd.n, 4);
    buf_le(&b, z64 ? 0xffffffffu : cd_at, 4);
    buf_le(&b, 0, 2);
    buf_free(&cd);
    *len = b.n;
    return b.p;
}

uint8_t *legacy_build(const buf *object, int little_endian, int n, const char *const *keys, const uint64_t *counts,
                      const void *const *data, const size_t *bytes, size_t *len)
{
    buf b = {0};
    buf_put(&b, "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19\x2e", 15);
    pk_begin(&b);
    pk_int(&b, 1001);
    pk_op(&b, '.');
    pk_begin(&b);
    pk_op(&b, '}');
    pk_op(&b, '(');
    pk_str(&b, "protocol_version");
    pk_int(&b, 1001);
    pk_str(&b, "little_endian");
    pk_op(&b, little_endian ? 0x88 : 0x89);
    pk_op(&b, 'u');
    pk_op(&b, '.');
    buf_put(&b, object->p, object->n);
    pk_begin(&b);
    pk_op(&b, ']');
    pk_op(&b, '(');
    for (int i = 0; i < n; i++) pk_str(&b, keys[i]);
    pk_op(&b, 'e');
    pk_op(&b, '.');
    for (int i = 0; i < n; i++) {
        buf_le(&b, counts[i], 8);
        buf_put(&b, data[i], bytes[i]);
    }
    *len = b.n;
    return b.p;
}
