/* The sorted string tables TensorFlow writes for a bundle's .index (the
 * LevelDB table format: data blocks of prefix-compressed keys with restart
 * arrays, an index block of separator keys, a metaindex block, a 48-byte
 * footer). Every block's CRC is checked, snappy blocks are decompressed
 * (libsnappy), and every length, varint and offset is bounded. */
#ifndef TXLM_TF_TABLE_H
#define TXLM_TF_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "errmsg.h"

#define TXLM_TF_TABLE_MAGIC 0xdb4775248b80fb57ull
#define TXLM_TF_FOOTER_LEN 48u

/* One entry, in key order. `at` is the byte offset of its block in the
 * file and `in_block` the entry's offset in the block's (uncompressed)
 * contents. Non-zero stops the walk and is passed on. */
typedef struct txlm_tf_entry {
    const uint8_t *key, *val;
    uint32_t klen, vlen;
    uint64_t at, in_block;
} txlm_tf_entry;
typedef int (*txlm_tf_table_fn)(void *user, const txlm_tf_entry *e, txlm_err *err);

/* Walks every entry of the table data[0 .. len), each key strictly after
 * the one before it in LevelDB's bytewise order (memcmp, then the shorter
 * first; a table out of that order is refused naming the entry), so that
 * a reader may look keys up by binary search; `where` (the file) begins
 * every message. */
int txlm_tf_table_each(const char *where, const uint8_t *data, uint64_t len, txlm_tf_table_fn fn, void *user,
                       txlm_err *err);

/* A key as text for messages: bytes outside printable ASCII as \xNN, at
 * most its first 200 bytes; returns out (cap bytes). */
const char *txlm_tf_key_text(const uint8_t *key, uint32_t n, char *out, size_t cap);

#endif
