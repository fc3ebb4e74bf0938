/* Saving and restoring a session: its memory (every layer's keys and values), the
 * last output row (so sampling can continue) and the sampler state.
 *
 * Layout, little-endian: "TXLMSTAT", u32 version (1), u32 header bytes,
 * u64 model id, u32 n_layer, u32 d_model, u32 mem_len, u32 mlen,
 * i32 clamp_len, u32 same_length, u32 has_z, u32 reserved, u64 rng,
 * then n_layer * mlen * 2*n_head*d_head f32 (layer by layer; each row the
 * keys then the values of one memory position), then d_model f32 of
 * the last output row when has_z, then the XXH3-64 of everything before. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "atomic_write.h"
#include "open_input.h"
#include "state.h"

#define STATE_VERSION 1

typedef struct state_header {
    char magic[8];
    uint32_t version, header_bytes;
    uint64_t model_id;
    uint32_t n_layer, d_model, mem_len, mlen;
    int32_t clamp_len;
    uint32_t same_length, has_z, reserved;
    uint64_t rng;
} state_header;

static size_t payload_floats(const txlm_hparams *h, uint32_t mlen, uint32_t has_z)
{
    return (size_t)h->n_layer * mlen * 2 * h->n_head * h->d_head + (has_z ? h->d_model : 0);
}

/* A saved state holds the model's real widths; a padded device layout
 * (model_pad.c) has each head's keys and values, and z, in wider runs.
 * These copy n runs of `real` floats between the two, zeroing the padding. */
static void unpad(float *dst, const float *src, size_t n, uint32_t real, uint32_t padded)
{
    for (size_t i = 0; i < n; i++) memmove(dst + i * real, src + i * padded, real * sizeof *dst);
}

static void pad_out(float *dst, const float *src, size_t n, uint32_t real, uint32_t padded)
{
    for (size_t i = n; i-- > 0;) {
        memmove(dst + i * padded, src + i * real, real * sizeof *dst);
        memset(dst + i * padded + real, 0, (padded - real) * sizeof *dst);
    }
}

size_t txlm_state_size(const txlm_session *s)
{
    const txlm_hparams *h = &s->m->h;
    return sizeof(state_header) + payload_floats(h, s->mlen, s->z_rows > 0) * 4 + 8;
}

int txlm_state_save(txlm_session *s, void *buf, size_t cap, size_t *written, txlm_err *err)
{
    const txlm_hparams *h = &s->m->h;
    txlm_vk *vk = &s->m->ctx->vk;
    size_t need = txlm_state_size(s);
    if (cap < need) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "state buffer of %zu bytes, %zu needed", cap, need);
    state_header hd = {.version = STATE_VERSION, .header_bytes = sizeof hd, .model_id = s->m->id,
                       .n_layer = h->n_layer, .d_model = h->d_model, .mem_len = s->mem_len, .mlen = s->mlen,
                       .clamp_len = s->clamp_len, .same_length = s->same_length, .has_z = s->z_rows > 0, .rng = s->rng};
    memcpy(hd.magic, "TXLMSTAT", 8);
    uint8_t *p = buf;
    memcpy(p, &hd, sizeof hd);
    p += sizeof hd;
    const txlm_dims *dv = &s->m->dev;
    VkDeviceSize kv_row = (VkDeviceSize)2 * h->n_head * dv->dh * 4, rows = s->mlen * kv_row, row = (VkDeviceSize)dv->d * 4;
    /* padded rows are read whole into tmp, then compacted into the state */
    float *tmp = NULL;
    if ((dv->dh != h->d_head && rows) || (dv->d != h->d_model && hd.has_z)) {
        tmp = malloc(rows > row ? rows : row);
        if (!tmp) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    int rc = 0;
    /* the memory's rows from kv_base, wrapping past the ring's end to row 0 */
    VkDeviceSize first = (VkDeviceSize)(s->kv_rows - s->kv_base) * kv_row;
    if (first > rows) first = rows;
    for (uint32_t n = 0; n < h->n_layer && !rc && rows; n++) {
        uint8_t *dst = dv->dh != h->d_head ? (uint8_t *)tmp : p;
        rc = txlm_buf_download(vk, &s->kv[n], s->kv_base * kv_row, dst, first, err);
        if (!rc && rows > first) rc = txlm_buf_download(vk, &s->kv[n], 0, dst + first, rows - first, err);
        if (!rc && dv->dh != h->d_head) unpad((float *)p, tmp, (size_t)s->mlen * 2 * h->n_head, h->d_head, dv->dh);
        p += (size_t)s->mlen * 2 * h->n_head * h->d_head * 4;
    }
    if (!rc && hd.has_z) {
        rc = txlm_buf_download(vk, &s->last, 0, dv->d != h->d_model ? (void *)tmp : p, row, err);
        if (!rc && dv->d != h->d_model) memcpy(p, tmp, (size_t)h->d_model * 4);
        p += (size_t)h->d_model * 4;
    }
    free(tmp);
    if (rc) return rc;
    uint64_t sum = XXH3_64bits(buf, (size_t)(p - (uint8_t *)buf));
    memcpy(p, &sum, 8);
    *written = need;
    return 0;
}

int txlm_state_load(txlm_session *s, const void *buf, size_t size, txlm_err *err)
{
    const txlm_hparams *h = &s->m->h;
    txlm_vk *vk = &s->m->ctx->vk;
    state_header hd;
    if (size < sizeof hd + 8) return txlm_fail(err, TXLM_ERR_FORMAT, "session state: %zu bytes is too short", size);
    memcpy(&hd, buf, sizeof hd);
    if (memcmp(hd.magic, "TXLMSTAT", 8)) return txlm_fail(err, TXLM_ERR_FORMAT, "session state: bad magic");
    if (hd.version != STATE_VERSION || hd.header_bytes != sizeof hd)
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "session state: version %u not supported (this build reads %u)",
                         hd.version, STATE_VERSION);
    /* a cut file: its header, intact, says how long the state was */
    size_t want = sizeof hd + payload_floats(h, hd.mlen, hd.has_z > 0) * 4 + 8;
    if (hd.model_id == s->m->id && size < want)
        return txlm_fail(err, TXLM_ERR_FORMAT, "session state: %zu bytes, but its header describes %zu: the file is truncated",
                         size, want);
    uint64_t sum;
    memcpy(&sum, (const uint8_t *)buf + size - 8, 8);
    if (XXH3_64bits(buf, size - 8) != sum) return txlm_fail(err, TXLM_ERR_CHECKSUM, "session state: checksum mismatch");
    if (hd.model_id != s->m->id || hd.n_layer != h->n_layer || hd.d_model != h->d_model)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "session state was saved with a different model");
    if (hd.mlen > s->mem_len || hd.mlen > hd.mem_len || hd.has_z > 1)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "session state holds %u memory rows; this session keeps %u",
                         hd.mlen, s->mem_len);
    if (size != sizeof hd + payload_floats(h, hd.mlen, hd.has_z) * 4 + 8)
        return txlm_fail(err, TXLM_ERR_FORMAT, "session state: size %zu does not match its header", size);
    const uint8_t *p = (const uint8_t *)buf + sizeof hd;
    const txlm_dims *dv = &s->m->dev;
    size_t runs = (size_t)hd.mlen * 2 * h->n_head;
    VkDeviceSize rows = runs * h->d_head * 4, dev_rows = runs * dv->dh * 4, row = (VkDeviceSize)dv->d * 4;
    float *tmp = NULL;
    if ((dv->dh != h->d_head && rows) || (dv->d != h->d_model && hd.has_z)) {
        tmp = malloc(dev_rows > row ? dev_rows : row);
        if (!tmp) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    int rc = 0;
    for (uint32_t n = 0; n < h->n_layer && !rc && rows; n++, p += rows) {
        if (dv->dh != h->d_head) pad_out(tmp, memcpy(tmp, p, rows), runs, h->d_head, dv->dh);
        rc = txlm_buf_upload(vk, &s->kv[n], 0, dv->dh != h->d_head ? (const void *)tmp : p, dev_rows, err);
    }
    s->z_rows = 0;
    if (!rc && hd.has_z) {
        if (dv->d != h->d_model) pad_out(tmp, memcpy(tmp, p, (size_t)h->d_model * 4), 1, h->d_model, dv->d);
        rc = txlm_buf_upload(vk, &s->last, 0, dv->d != h->d_model ? (const void *)tmp : p, row, err);
        if (!rc) s->z_rows = 1;
    }
    free(tmp);
    if (rc) return rc;
    s->mlen = hd.mlen;
    s->kv_base = 0;
    s->rng = hd.rng;
    return 0;
}

int txlm_state_save_file(txlm_session *s, const char *path, txlm_err *err)
{
    size_t n = txlm_state_size(s), written;
    void *buf = malloc(n);
    if (!buf) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    int rc = txlm_state_save(s, buf, n, &written, err);
    if (!rc && (rc = txlm_atomic_write_file(path, buf, n, err))) txlm_fail_prefix(err, "saving the session state: ");
    free(buf);
    return rc;
}

int txlm_state_load_file(txlm_session *s, const char *path, txlm_err *err)
{
    FILE *f;
    int open_rc = txlm_fopen_input(path, &f, err);
    if (open_rc) return open_rc;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    void *buf = n > 0 && (size_t)n < ((size_t)1 << 40) ? malloc((size_t)n) : NULL;
    int ok = buf && fseek(f, 0, SEEK_SET) == 0 && fread(buf, 1, (size_t)n, f) == (size_t)n;
    fclose(f);
    int rc = ok ? txlm_state_load(s, buf, (size_t)n, err) : txlm_fail(err, TXLM_ERR_IO, "%s: cannot read", path);
    if (rc && ok) txlm_fail_prefix(err, "%s: ", path);
    free(buf);
    return rc;
}
