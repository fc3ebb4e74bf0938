#include "tensor.h"

#include <stdlib.h>
#include <string.h>

static int quantised(uint32_t dtype) { return dtype == TXLM_DT_Q8_0 || dtype == TXLM_DT_Q4_0; }

/* Quantised tensors are stored on the device in superblocks of SB_ELEMS
 * values (16 blocks), each followed by its 16 f16 scales (shaders/quant.glsl).
 * A row's scales then travel with its values: kept in a region of their
 * own, they were a second, distant stream per row that made single-row
 * products 1.7x slower on lavapipe (docs/performance-history.md,
 * "Quantised layout and huge pages"). */
#define SB_ELEMS 512u
#define SB_SCALE_BYTES 32u

/* Bytes of the values of n elements. */
static uint64_t values_bytes(uint32_t dtype, uint64_t n)
{
    switch (dtype) {
    case TXLM_DT_Q8_0: return n;
    case TXLM_DT_Q4_0: return n / 2;
    default: {
        const txlm_dtype_info *di = txlm_dtype_get(dtype);
        return n / di->block_elems * di->block_bytes;
    }
    }
}

/* Device bytes of n consecutive elements that start a chunk; a last,
 * partial superblock keeps the full superblock's place for its scales. */
static uint64_t device_bytes(uint32_t dtype, uint64_t n)
{
    if (!quantised(dtype)) return values_bytes(dtype, n);
    return (n + SB_ELEMS - 1) / SB_ELEMS * (values_bytes(dtype, SB_ELEMS) + SB_SCALE_BYTES);
}

uint64_t txlm_tensor_bytes(const txlm_gpu_tensor *t, uint32_t rows)
{
    return t ? device_bytes(t->dtype, (uint64_t)rows * t->cols) : 0;
}

/* Largest row count whose bytes fit one binding and keep the next chunk's
 * offset aligned as the device requires; quantised chunks also end on a
 * superblock, so each chunk's layout is that of the whole tensor. */
static uint32_t rows_per_chunk(const txlm_vk *vk, uint32_t dtype, uint32_t cols, uint32_t rows)
{
    if (device_bytes(dtype, (uint64_t)rows * cols) <= vk->split_bytes) return rows;
    uint64_t step = 1;
    while (device_bytes(dtype, step * cols) % vk->storage_align || device_bytes(dtype, step * cols) % 4 ||
           (quantised(dtype) && step * cols % SB_ELEMS))
        step++;
    uint64_t n = vk->split_bytes / device_bytes(dtype, step * cols) * step;
    if (n == 0) n = step;
    return n < rows ? (uint32_t)n : rows;
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
    out->chunk_rows = rows_per_chunk(vk, dtype, cols, rows);
    if (device_bytes(dtype, (uint64_t)out->chunk_rows * cols) > vk->max_storage_range)
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "rows of %u elements exceed the device's storage-buffer range", cols);
    /* no rows: no chunks, and a minimal buffer */
    uint32_t full = out->chunk_rows ? rows / out->chunk_rows : 0, rest = out->chunk_rows ? rows % out->chunk_rows : 0;
    uint64_t bytes = full * device_bytes(dtype, (uint64_t)out->chunk_rows * cols) + device_bytes(dtype, (uint64_t)rest * cols);
    return txlm_buf_create(vk, bytes, kind, &out->buf, err);
}

int txlm_tensor_write(txlm_vk *vk, txlm_gpu_tensor *t, const void *data, txlm_err *err)
{
    uint64_t n = (uint64_t)t->rows * t->cols, per_chunk = (uint64_t)t->chunk_rows * t->cols;
    if (!quantised(t->dtype)) return txlm_buf_upload(vk, &t->buf, 0, data, values_bytes(t->dtype, n), err);
    /* re-laid straight into mapped memory; otherwise through a host copy */
    uint8_t *dev = t->buf.map ? t->buf.map : malloc(t->buf.size);
    if (!dev) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    /* the file keeps all values, then all scales (docs/format.md) */
    const uint8_t *vals = data, *scales = vals + values_bytes(t->dtype, n);
    uint64_t sb_vals = values_bytes(t->dtype, SB_ELEMS), at = 0;
    for (uint64_t e0 = 0; e0 < n; e0 += per_chunk) {
        uint64_t chunk_end = n - e0 < per_chunk ? n : e0 + per_chunk;
        for (uint64_t e = e0; e < chunk_end; e += SB_ELEMS) {
            uint64_t m = chunk_end - e < SB_ELEMS ? chunk_end - e : SB_ELEMS;
            uint64_t vb = values_bytes(t->dtype, m), sb = m / 32 * 2;
            memcpy(dev + at, vals + values_bytes(t->dtype, e), vb);
            memset(dev + at + vb, 0, sb_vals - vb);
            memcpy(dev + at + sb_vals, scales + e / 32 * 2, sb);
            memset(dev + at + sb_vals + sb, 0, SB_SCALE_BYTES - sb);
            at += sb_vals + SB_SCALE_BYTES;
        }
    }
    memset(dev + at, 0, t->buf.size - at);
    if (t->buf.map) return txlm_buf_flush(vk, &t->buf, err);
    int rc = txlm_buf_upload(vk, &t->buf, 0, dev, t->buf.size, err);
    free(dev);
    return rc;
}

static uint32_t padded(txlm_pad p, uint32_t n) { return p.n ? n / p.n * p.to : n; }

/* Device element i of a padded axis: its source index, or -1 for padding. */
static int64_t source_of(txlm_pad p, uint32_t i)
{
    if (!p.n) return i;
    return i % p.to < p.n ? (int64_t)(i / p.to) * p.n + i % p.to : -1;
}

/* Writes a padded copy of an f32 or f16 tensor: plain row-major on the
 * device (its chunks are contiguous), straight into mapped memory. */
static int write_padded(txlm_vk *vk, txlm_gpu_tensor *t, const void *data, uint32_t src_cols, const txlm_pad pad[2],
                        txlm_err *err)
{
    size_t es = t->dtype == TXLM_DT_F16 ? 2 : 4;
    uint8_t *dev = t->buf.map ? t->buf.map : malloc(t->buf.size);
    if (!dev) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    const uint8_t *src = data;
    for (uint32_t r = 0; r < t->rows; r++) {
        uint8_t *row = dev + (size_t)r * t->cols * es;
        int64_t sr = source_of(pad[0], r);
        if (sr < 0) {
            memset(row, 0, (size_t)t->cols * es);
            continue;
        }
        for (uint32_t c = 0; c < t->cols;) {
            int64_t sc = source_of(pad[1], c);
            /* a run of real values is copied at once */
            uint32_t run = pad[1].n ? (sc < 0 ? pad[1].to - c % pad[1].to : pad[1].n - c % pad[1].to) : t->cols;
            if (sc < 0)
                memset(row + (size_t)c * es, 0, (size_t)run * es);
            else
                memcpy(row + (size_t)c * es, src + ((size_t)sr * src_cols + (size_t)sc) * es, (size_t)run * es);
            c += run;
        }
    }
    size_t used = (size_t)t->rows * t->cols * es;
    memset(dev + used, 0, t->buf.size - used);
    if (t->buf.map) return txlm_buf_flush(vk, &t->buf, err);
    int rc = txlm_buf_upload(vk, &t->buf, 0, dev, t->buf.size, err);
    free(dev);
    return rc;
}

int txlm_tensor_upload(txlm_vk *vk, const txlm_file *f, const txlm_tensor_info *t, const txlm_pad pad[2],
                       txlm_gpu_tensor *out, txlm_err *err)
{
    uint32_t rows = t->rank == 1 ? 1 : (uint32_t)t->dims[0];
    uint32_t cols = (uint32_t)t->dims[t->rank - 1];
    int pads = pad && (pad[0].n || pad[1].n);
    int rc = 0;
    if (pads && ((pad[0].n && (rows % pad[0].n || pad[0].to < pad[0].n)) ||
                 (pad[1].n && (cols % pad[1].n || pad[1].to < pad[1].n))))
        rc = txlm_fail(err, TXLM_ERR_FORMAT, "%u rows of %u do not match the model's hyper-parameters", rows, cols);
    else if (pads && t->dtype != TXLM_DT_F32 && t->dtype != TXLM_DT_F16)
        rc = txlm_fail(err, TXLM_ERR_UNSUPPORTED, "internal: a %s tensor cannot be widened", txlm_dtype_get(t->dtype)->name);
    if (!rc) rc = txlm_tensor_alloc(vk, pads ? padded(pad[0], rows) : rows, pads ? padded(pad[1], cols) : cols, t->dtype,
                                    TXLM_BUF_DEVICE, out, err);
    if (!rc) rc = pads ? write_padded(vk, out, txlm_file_data(f, t), cols, pad, err)
                       : txlm_tensor_write(vk, out, txlm_file_data(f, t), err);
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
    VkDeviceSize off = c * device_bytes(t->dtype, (uint64_t)t->chunk_rows * t->cols);
    /* whole uints: f16 tensors with an odd element count end mid-word */
    VkDeviceSize size = (device_bytes(t->dtype, (uint64_t)n * t->cols) + 3) & ~(VkDeviceSize)3;
    if (size > t->buf.size - off) size = t->buf.size - off;
    return (txlm_view){t->buf.buf, off, size};
}

txlm_view txlm_tensor_view(const txlm_gpu_tensor *t)
{
    uint32_t r0;
    return txlm_tensor_chunk(t, 0, &r0);
}

int txlm_buf_binding(txlm_vk *vk, txlm_buf *b, uint64_t elems, txlm_buf_kind kind, const char *what, txlm_err *err)
{
    uint64_t bytes = elems * 4;
    if (elems > (UINT64_MAX / 8) || bytes > vk->max_storage_range)
        return txlm_fail(err, TXLM_ERR_LIMIT,
                         "session buffer '%s' needs %llu bytes, more than one binding allows (%llu); "
                         "use a shorter segment or memory",
                         what, (unsigned long long)bytes, (unsigned long long)vk->max_storage_range);
    int rc = txlm_buf_create(vk, bytes, kind, b, err);
    if (rc) txlm_fail_prefix(err, "session buffer '%s': ", what);
    return rc;
}
