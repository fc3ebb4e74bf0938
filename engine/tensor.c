#include "tensor.h"

#include <string.h>

/* Largest row count whose bytes fit one binding and keep the next chunk's
 * offset aligned as the device requires. */
static uint32_t rows_per_chunk(const txlm_vk *vk, uint32_t cols, uint32_t rows)
{
    uint64_t row_bytes = (uint64_t)cols * 4;
    uint64_t n = vk->max_storage_range / row_bytes;
    if (n >= rows) return rows;
    uint64_t step = 1;
    while ((step * row_bytes) % vk->storage_align) step++;
    n -= n % step;
    return n ? (uint32_t)n : 1;
}

int txlm_tensor_alloc(txlm_vk *vk, uint32_t rows, uint32_t cols, txlm_buf_kind kind, txlm_gpu_tensor *out, txlm_err *err)
{
    memset(out, 0, sizeof *out);
    out->rows = rows;
    out->cols = cols;
    if ((uint64_t)cols * 4 > vk->max_storage_range)
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "a row of %u floats exceeds the device's storage-buffer range", cols);
    out->chunk_rows = rows_per_chunk(vk, cols, rows);
    return txlm_buf_create(vk, (VkDeviceSize)rows * cols * 4, kind, &out->buf, err);
}

int txlm_tensor_upload(txlm_vk *vk, const txlm_file *f, const txlm_tensor_info *t, txlm_gpu_tensor *out, txlm_err *err)
{
    if (t->dtype != TXLM_DT_F32)
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "tensor %s: dtype %u not supported by this engine build", t->name, t->dtype);
    uint32_t rows = t->rank == 1 ? 1 : (uint32_t)t->dims[0];
    uint32_t cols = (uint32_t)t->dims[t->rank - 1];
    int rc = txlm_tensor_alloc(vk, rows, cols, TXLM_BUF_DEVICE, out, err);
    if (!rc) rc = txlm_buf_upload(vk, &out->buf, 0, txlm_file_data(f, t), t->nbytes, err);
    if (rc) {
        txlm_tensor_free(vk, out);
        return txlm_fail_prefix(err, "tensor %s: ", t->name);
    }
    return 0;
}

void txlm_tensor_free(txlm_vk *vk, txlm_gpu_tensor *t)
{
    if (t->buf.buf || t->buf.mem) txlm_buf_destroy(vk, &t->buf);
    memset(t, 0, sizeof *t);
}

uint32_t txlm_tensor_n_chunks(const txlm_gpu_tensor *t)
{
    return t->chunk_rows ? (t->rows + t->chunk_rows - 1) / t->chunk_rows : 0;
}

txlm_view txlm_tensor_chunk(const txlm_gpu_tensor *t, uint32_t c, uint32_t *row0)
{
    uint32_t r0 = c * t->chunk_rows;
    uint32_t n = t->rows - r0 < t->chunk_rows ? t->rows - r0 : t->chunk_rows;
    *row0 = r0;
    VkDeviceSize row_bytes = (VkDeviceSize)t->cols * 4;
    return (txlm_view){t->buf.buf, r0 * row_bytes, n * row_bytes};
}

txlm_view txlm_tensor_view(const txlm_gpu_tensor *t)
{
    uint32_t r0;
    return txlm_tensor_chunk(t, 0, &r0);
}
