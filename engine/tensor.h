/* A weight tensor on the device: one buffer, seen by the kernels as one
 * or more row chunks, each within maxStorageBufferRange. Quantised
 * tensors hold superblocks of 512 values each followed by their scales
 * (shaders/quant.glsl), so one binding holds everything a dispatch over
 * those rows reads. */
#ifndef TXLM_TENSOR_H
#define TXLM_TENSOR_H

#include "recorder.h"
#include "txlm_file.h"

typedef struct txlm_gpu_tensor {
    txlm_buf buf;
    uint32_t dtype;         /* TXLM_DT_F32, F16, Q8_0 or Q4_0 */
    uint32_t rows, cols;    /* 1-D tensors: rows = 1 */
    uint32_t chunk_rows;    /* rows per binding */
} txlm_gpu_tensor;

/* How one axis of a tensor grows on the device: every run of n values is
 * stored as `to` values, the last to - n of them zeros (n = 0: as is). */
typedef struct txlm_pad {
    uint32_t n, to;
} txlm_pad;

/* Uploads a 1-D or 2-D tensor from a mapped .txlm file; pad (NULL: none)
 * widens its rows and columns (f32 and f16 only; a 1-D tensor is one row). */
int txlm_tensor_upload(txlm_vk *vk, const txlm_file *f, const txlm_tensor_info *t, const txlm_pad pad[2],
                       txlm_gpu_tensor *out, txlm_err *err);
/* Allocates an uninitialised rows x cols tensor of a dtype. */
int txlm_tensor_alloc(txlm_vk *vk, uint32_t rows, uint32_t cols, uint32_t dtype, txlm_buf_kind kind,
                      txlm_gpu_tensor *out, txlm_err *err);
/* Copies host data in the file's layout (docs/format.md) into the device layout. */
int txlm_tensor_write(txlm_vk *vk, txlm_gpu_tensor *t, const void *data, txlm_err *err);
void txlm_tensor_free(txlm_vk *vk, txlm_gpu_tensor *t);
uint32_t txlm_tensor_n_chunks(const txlm_gpu_tensor *t);
/* Device bytes of the first `rows` rows (NULL: 0); a pass over them reads that much. */
uint64_t txlm_tensor_bytes(const txlm_gpu_tensor *t, uint32_t rows);
/* A buffer of elems 4-byte elements that one binding covers, refused
 * (naming `what`) where it would not. */
int txlm_buf_binding(txlm_vk *vk, txlm_buf *b, uint64_t elems, txlm_buf_kind kind, const char *what, txlm_err *err);
/* Chunk c as a view; *row0 receives its first row. */
txlm_view txlm_tensor_chunk(const txlm_gpu_tensor *t, uint32_t c, uint32_t *row0);
/* The whole tensor as one view (it must fit one binding). */
txlm_view txlm_tensor_view(const txlm_gpu_tensor *t);

#endif
