/* TensorFlow checkpoints (V2, "TensorBundle"): PREFIX.index, a table
 * (tf_table.h) whose entry "" is a BundleHeaderProto and every other a
 * BundleEntryProto naming a tensor's dtype, shape, shard, offset, size and
 * CRC-32C, and the tensors' bytes in PREFIX.data-NNNNN-of-MMMMM. Read
 * without TensorFlow; nothing in the files is trusted unchecked. */
#ifndef TXLM_TF_BUNDLE_H
#define TXLM_TF_BUNDLE_H

#include <stdint.h>

#include "errmsg.h"

/* TensorFlow's DataType numbers (types.proto) txlm reads as floats. */
enum { TXLM_TF_FLOAT = 1, TXLM_TF_DOUBLE = 2, TXLM_TF_BFLOAT16 = 14, TXLM_TF_HALF = 19 };

#define TXLM_TF_MAX_RANK 8

typedef struct txlm_tf_tensor {
    char *name;         /* the variable's name, "transformer/layer_0/rel_attn/qkv/kernel" */
    uint32_t dtype;     /* a TensorFlow DataType */
    uint32_t rank;
    uint64_t dims[TXLM_TF_MAX_RANK];
    uint64_t n_elems;
    uint32_t shard;
    uint64_t offset, size;
    uint32_t crc;       /* CRC-32C of the bytes (unmasked) */
    uint64_t block_at, in_block; /* where its entry lies in the .index, for messages */
} txlm_tf_tensor;

typedef struct txlm_tf_bundle txlm_tf_bundle;

/* Opens PREFIX.index and maps every shard it names. */
int txlm_tf_bundle_open(const char *prefix, txlm_tf_bundle **out, txlm_err *err);
/* An index image alone (data must outlive the bundle; `where` names it in
 * messages): entries are listed, tensors' bytes cannot be read. */
int txlm_tf_bundle_open_memory(const char *where, const uint8_t *data, uint64_t len, txlm_tf_bundle **out, txlm_err *err);
void txlm_tf_bundle_free(txlm_tf_bundle *b);
uint32_t txlm_tf_bundle_count(const txlm_tf_bundle *b);
const txlm_tf_tensor *txlm_tf_bundle_at(const txlm_tf_bundle *b, uint32_t i);
/* NULL when absent. */
const txlm_tf_tensor *txlm_tf_bundle_find(const txlm_tf_bundle *b, const char *name);
/* The tensor's bytes in its shard, range and CRC checked (the CRC on
 * every call: callers take each tensor once). */
int txlm_tf_bundle_data(const txlm_tf_bundle *b, const txlm_tf_tensor *t, const uint8_t **data, txlm_err *err);
/* "float", "half", ... or "DataType N". */
const char *txlm_tf_dtype_name(uint32_t dtype, char *buf, unsigned cap);
/* Bytes per element of a float type txlm reads, else 0. */
uint32_t txlm_tf_float_size(uint32_t dtype);
/* Element i of a float tensor's bytes (txlm_tf_float_size(dtype) != 0). */
double txlm_tf_elem(const uint8_t *data, uint32_t dtype, uint64_t i);
/* The .index file's path (for messages). */
const char *txlm_tf_bundle_index_path(const txlm_tf_bundle *b);
/* The data shards mapped (0 for an index image alone) and their paths. */
uint32_t txlm_tf_bundle_shard_count(const txlm_tf_bundle *b);
const char *txlm_tf_bundle_shard_path(const txlm_tf_bundle *b, uint32_t i);

#endif
