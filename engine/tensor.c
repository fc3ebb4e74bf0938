#include "tensor.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of `rows` rows of `cols` elements: values plus scales. */
static uint64_t rows_bytes(uint32_t dtype, uint64_t rows, uint64_t cols)
{
    const txlm_dtype_info *di = txlm_dtype_get(dtype);
    return rows * cols / di->block_elems * di->block_bytes;
}

/* Bytes of the values alone (quantised dtypes keep scales after them). */
static uint64_t values_bytes(uint32_t dtype, uint64_t n)
{
    switch (dtype) {
    case TXLM_DT_Q8_0: return n;
    case TXLM_DT_Q4_0: return n / 2;
    default: return rows_bytes(dtype, 1, n);
    }
}

static int quantised(uint32_t dtype) { return dtype == TXLM_DT_Q8_0 || dtype == TXLM_DT_Q4_0; }

/* Largest row count whose bytes fit one binding and keep the next chunk's
 * offset aligned as the device requires. */
static uint32_t rows_per_chunk(const txlm_vk *vk, uint32_t dtype, uint32_t cols, uint32_t rows)
{
    uint64_t row_bytes = rows_bytes(dtype, 1, cols);
    uint64_t n = vk->split_bytes / row_bytes;
    if (n >= rows) return rows;
    uint64_t step = 1;
    while ((step * row_bytes) % vk->storage_align || (step * row_bytes) % 4) step++;
    n -= n % step;
    return n ? (uint32_t)n : 1;
}

int txlm_tensor_alloc(txlm_vk *vk, uint32_t rows, uint32_t cols, uint32_t dtype, txlm_buf_kind kind,
                      txlm_gpu_tensor *out, txlm_err *err)
{
    memset(out, 0, sizeof *out);
    const txlm_dtype_info *di = txlm_dtype_get(dtype);
    if (!di || dtype == TXLM_DT_BF16)
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "dtype %u cannot be used on the device", dtype);
    if (cols % di->block_elems)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s rows of %u elements are not a whole number of blocks", di->name, cols);
    out->dtype = dtype;
    out->rows = rows;
    out->cols = cols;
    if (rows_bytes(dtype, 1, cols) > vk->max_storage_range)
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "a row of %u elements exceeds the device's storage-buffer range", cols);
    out->chunk_rows = rows_per_chunk(vk, dtype, cols, rows);
    return txlm_buf_create(vk, rows_bytes(dtype, rows, cols), kind, &out->buf, err);
}

int txlm_tensor_write(txlm_vk *vk, txlm_gpu_tensor *t, const void *data, txlm_err *err)
{
    uint64_t total = rows_bytes(t->dtype, t->rows, t->cols);
    if (!quantised(t->dtype) || txlm_tensor_n_chunks(t) == 1) /* one chunk: file and device layouts agree */
        return txlm_buf_upload(vk, &t->buf, 0, data, total, err);
    uint8_t *dev = malloc(total);
    if (!dev) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    const uint8_t *vals = data, *scales = vals + values_bytes(t->dtype, (uint64_t)t->rows * t->cols);
    uint64_t at = 0;
    for (uint32_t r0 = 0; r0 < t->rows; r0 += t->chunk_rows) {
        uint64_t nr = t->rows - r0 < t->chunk_rows ? t->rows - r0 : t->chunk_rows;
        uint64_t vb = values_bytes(t->dtype, nr * t->cols), sb = nr * t->cols / 32 * 2;
        memcpy(dev + at, vals + values_bytes(t->dtype, (uint64_t)r0 * t->cols), vb);
        memcpy(dev + at + vb, scales + (uint64_t)r0 * t->cols / 32 * 2, sb);
        at += vb + sb;
    }
    int rc = txlm_buf_upload(vk, &t->buf, 0, dev, total, err);
    free(dev);
    return rc;
}

int txlm_tensor_upload(txlm_vk *vk, const txlm_file *f, const txlm_tensor_info *t, txlm_gpu_tensor *out, txlm_err *err)
{
    uint32_t rows = t->rank == 1 ? 1 : (uint32_t)t->dims[0];
    uint32_t cols = (uint32_t)t->dims[t->rank - 1];
    int rc = txlm_tensor_alloc(vk, rows, cols, t->dtype, TXLM_BUF_DEVICE, out, err);
    if (!rc) rc = txlm_tensor_write(vk, out, txlm_file_data(f, t), err);
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

txlm_view txlm_tensor_chunk(const txlm_gpu_tensor *t, uint32_t c, uint32_t *row0, uint32_t *soff)
{
    uint32_t r0 = c * t->chunk_rows;
    uint32_t n = t->rows - r0 < t->chunk_rows ? t->rows - r0 : t->chunk_rows;
    *row0 = r0;
    if (soff) *soff = (uint32_t)(values_bytes(t->dtype, (uint64_t)n * t->cols) / 4);
    VkDeviceSize off = rows_bytes(t->dtype, r0, t->cols);
    /* whole uints: f16 tensors with an odd element count end mid-word */
    VkDeviceSize size = (rows_bytes(t->dtype, n, t->cols) + 3) & ~(VkDeviceSize)3;
    if (size > t->buf.size - off) size = t->buf.size - off;
    return (txlm_view){t->buf.buf, off, size};
}

txlm_view txlm_tensor_view(const txlm_gpu_tensor *t)
{
    uint32_t r0;
    return txlm_tensor_chunk(t, 0, &r0, NULL);
}
