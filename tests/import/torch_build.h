/* Test-side writers of the torch.save forms: a pickle opcode emitter, a zip
 * writer (stored entries, optionally zip64 records, optionally a wrong
 * compression method) and the legacy layout. They let tests build small
 * checkpoints and malformed variants of the golden ones. */
#ifndef TXLM_TEST_TORCH_BUILD_H
#define TXLM_TEST_TORCH_BUILD_H

#include <stddef.h>
#include <stdint.h>

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

void buf_put(buf *b, const void *data, size_t n);
void buf_le(buf *b, uint64_t v, int bytes);
void buf_free(buf *b);

/* ---- pickle opcodes (protocol 2) ---- */
void pk_begin(buf *b);                 /* PROTO 2 */
void pk_op(buf *b, uint8_t op);        /* any single-byte opcode */
void pk_global(buf *b, const char *module, const char *name);
void pk_str(buf *b, const char *s);    /* BINUNICODE */
void pk_int(buf *b, int64_t v);        /* BININT1/BININT2/BININT/LONG1 */
/* _rebuild_tensor_v2((storage pid), offset, size, stride, False, OrderedDict()).
 * type: "FloatStorage", "HalfStorage", ... `view` (legacy only): when
 * view_key is not NULL, the pid has a 6th item (view_key, view_off, view_n). */
void pk_tensor(buf *b, const char *type, const char *key, uint64_t numel, uint64_t offset, int rank,
               const uint64_t *dims, const uint64_t *strides);
void pk_tensor_view(buf *b, const char *type, const char *key, uint64_t numel, const char *view_key, uint64_t view_off,
                    uint64_t view_n, uint64_t offset, int rank, const uint64_t *dims, const uint64_t *strides);
void pk_ordered_dict_begin(buf *b);    /* OrderedDict() then MARK */
void pk_dict_end(buf *b);              /* SETITEMS then STOP */

/* ---- zip ---- */
typedef struct zip_in {
    const char *name;
    const void *data;
    size_t len;
} zip_in;

enum { ZIP_PLAIN = 0, ZIP_FORCE64 = 1 };
/* Entries stored in order; `method` is written as the compression method
 * of entry `method_entry` (-1: none altered). */
uint8_t *zip_build(const zip_in *e, int n, int flags, int method_entry, uint16_t method, size_t *len);

/* ---- legacy torch.save ---- */
/* magic, protocol version, sys info (little_endian as given), the object
 * pickle, then the key list and each storage (count + bytes). */
uint8_t *legacy_build(const buf *object, int little_endian, int n, const char *const *keys, const uint64_t *counts,
                      const void *const *data, const size_t *bytes, size_t *len);

#endif
