/* A weight tensor on the device: one buffer, seen by the kernels as one
 * or more row chunks, each within maxStorageBufferRange. */
#ifndef TXLM_TENSOR_H
#define TXLM_TENSOR_H

#include "recorder.h"
#include "txlm_file.h"

typedef struct txlm_gpu_tensor {
    txlm_buf buf;
    uint32_t rows, cols;    /* 1-D tensors: rows = 1 */
    uint32_t chunk_rows;    /* rows per binding */
} txlm_gpu_tensor;

/* Uploads a 1-D or 2-D f32 tensor from a mapped .txlm file. */
int txlm_tensor_upload(txlm_vk *vk, const txlm_file *f, const txlm_tensor_info *t, txlm_gpu_tensor *out, txlm_err *err);
/* Allocates an uninitialised rows x cols f32 tensor. */
int txlm_tensor_alloc(txlm_vk *vk, uint32_t rows, uint32_t cols, txlm_buf_kind kind, txlm_gpu_tensor *out, txlm_err *err);
void txlm_tensor_free(txlm_vk *vk, txlm_gpu_tensor *t);
uint32_t txlm_tensor_n_chunks(const txlm_gpu_tensor *t);
/* Chunk c as a view; *row0 receives its first row. */
txlm_view txlm_tensor_chunk(const txlm_gpu_tensor *t, uint32_t c, uint32_t *row0);
/* The whole tensor as one view (it must fit one binding). */
txlm_view txlm_tensor_view(const txlm_gpu_tensor *t);

#endif
