/* Element types of stored tensors. Block-quantised types are described by
 * their block shape so a reader can size any tensor without knowing the type. */
#ifndef TXLM_DTYPE_H
#define TXLM_DTYPE_H

#include <stdint.h>

typedef enum txlm_dtype {
    TXLM_DT_F32 = 0,
    TXLM_DT_F16 = 1,
    TXLM_DT_BF16 = 2,  /* accepted from checkpoints; converted before packing */
    TXLM_DT_Q8_0 = 3,  /* blocks of 32: 32 x int8 + one f16 scale (34 bytes); values and scales stored apart, docs/format.md */
    TXLM_DT_Q4_0 = 4,  /* blocks of 32: 16 bytes of nibbles + one f16 scale (18 bytes), stored apart likewise */
    TXLM_DT_COUNT
} txlm_dtype;

typedef struct txlm_dtype_info {
    const char *name;
    uint32_t block_elems;  /* elements per block (1 for plain types) */
    uint32_t block_bytes;  /* bytes per block */
} txlm_dtype_info;

/* NULL for an unknown dtype. */
const txlm_dtype_info *txlm_dtype_get(uint32_t dtype);

/* The dtype a file packed for dtype `want` (txlm-pack --dtype) stores
 * tensor `name` of that shape in: only weight matrices take the smaller
 * type (the kernels read vectors, r biases and the cluster weights as
 * f32), and a block type only where rows are whole blocks; the rest f32. */
uint32_t txlm_dtype_stored(uint32_t want, const char *name, uint32_t rank, const uint64_t *dims);

#endif
