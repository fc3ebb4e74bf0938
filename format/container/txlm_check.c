/* Content rules of .txlm files that the reader enforces and the writer
 * checks up front, so that the writer never produces a file the reader refuses. */
#include <inttypes.h>

#include <txlm_status.h>

#include "txlm_file.h"
#include "txlm_layout.h"
#include "vocab_check.h"

uint64_t txlm_tensor_nbytes(uint32_t dtype, uint32_t rank, const uint64_t *dims, txlm_err *err)
{
    const txlm_dtype_info *di = txlm_dtype_get(dtype);
    if (!di) {
        txlm_fail(err, TXLM_ERR_UNSUPPORTED, "unknown dtype %" PRIu32, dtype);
        return 0;
    }
    if (rank < 1 || rank > TXLM_MAX_RANK) {
        txlm_fail(err, TXLM_ERR_FORMAT, "rank %" PRIu32 " out of range [1, %d]", rank, TXLM_MAX_RANK);
        return 0;
    }
    uint64_t n = 1;
    for (uint32_t i = 0; i < rank; i++) {
        if (dims[i] < 1 || dims[i] > TXLM_MAX_DIM) {
            txlm_fail(err, TXLM_ERR_FORMAT, "dims[%" PRIu32 "] = %" PRIu64 " out of range [1, 2^40]", i, dims[i]);
            return 0;
        }
        if (__builtin_mul_overflow(n, dims[i], &n) || n > TXLM_MAX_ELEMS) {
            txlm_fail(err, TXLM_ERR_FORMAT, "element count exceeds 2^40 at dims[%" PRIu32 "]", i);
            return 0;
        }
    }
    if (dims[rank - 1] % di->block_elems) {
        txlm_fail(err, TXLM_ERR_FORMAT, "last dimension %" PRIu64 " is not a multiple of the %s block size %" PRIu32,
                  dims[rank - 1], di->name, di->block_elems);
        return 0;
    }
    uint64_t bytes;
    if (__builtin_mul_overflow(n / di->block_elems, (uint64_t)di->block_bytes, &bytes)) {
        txlm_fail(err, TXLM_ERR_FORMAT, "byte size overflows");
        return 0;
    }
    return bytes;
}

uint64_t txlm_utf8_valid_prefix(const uint8_t *s, uint64_t len)
{
    uint64_t i = 0;
    while (i < len) {
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        uint32_t need, cp, min;
        if (c >= 0xC2 && c <= 0xDF) need = 1, cp = c & 0x1F, min = 0x80;
        else if (c >= 0xE0 && c <= 0xEF) need = 2, cp = c & 0x0F, min = 0x800;
        else if (c >= 0xF0 && c <= 0xF4) need = 3, cp = c & 0x07, min = 0x10000;
        else return i;
        if (len - i <= need) return i;
        for (uint32_t k = 1; k <= need; k++) {
            uint8_t cc = s[i + k];
            if ((cc & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (cc & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += need + 1;
    }
    return i;
}

int txlm_vocab_check(const txlm_vocab *v, const char *where, int code, txlm_err *err)
{
    if (v->n < 1 || v->n > TXLM_VOCB_MAX_N)
        return txlm_fail(err, code, "%s: n = %" PRIu32 " out of range [1, 2^24]", where, v->n);
    if (v->blob_size > TXLM_VOCB_MAX_BLOB)
        return txlm_fail(err, code, "%s: blob of %" PRIu32 " bytes exceeds 1 GiB", where, v->blob_size);
    if (v->kind > TXLM_TOK_CHAR_TEXT8)
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "%s: unknown tokenizer kind %" PRIu32, where, v->kind);
    if (v->flags & ~(uint32_t)TXLM_VOCAB_KNOWN_FLAGS)
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "%s: unknown flags 0x%" PRIx32, where, v->flags);
    if (v->eos_id < -1 || v->eos_id >= (int64_t)v->n)
        return txlm_fail(err, code, "%s: eos_id %" PRId32 " not -1 and not in [0, %" PRIu32 ")", where, v->eos_id, v->n);
    if (v->unk_id < -1 || v->unk_id >= (int64_t)v->n)
        return txlm_fail(err, code, "%s: unk_id %" PRId32 " not -1 and not in [0, %" PRIu32 ")", where, v->unk_id, v->n);
    if (!v->offsets || (v->blob_size && !v->blob))
        return txlm_fail(err, code, "%s: missing offsets or blob", where);
    if (v->offsets[0] != 0)
        return txlm_fail(err, code, "%s: offsets[0] = %" PRIu32 ", must be 0", where, v->offsets[0]);
    if (v->offsets[v->n] != v->blob_size)
        return txlm_fail(err, code, "%s: offsets[n] = %" PRIu32 " differs from blob size %" PRIu32, where,
                         v->offsets[v->n], v->blob_size);
    for (uint32_t i = 0; i < v->n; i++) {
        uint32_t a = v->offsets[i], b = v->offsets[i + 1];
        if (b < a || b > v->blob_size)
            return txlm_fail(err, code, "%s: offsets[%" PRIu32 "] = %" PRIu32 " after %" PRIu32 " (must ascend, <= blob size)",
                             where, i + 1, b, a);
        if (b - a > TXLM_VOCB_MAX_SYM)
            return txlm_fail(err, TXLM_ERR_LIMIT, "%s: symbol %" PRIu32 " is %" PRIu32 " bytes long, more than %u", where, i,
                             b - a, TXLM_VOCB_MAX_SYM);
        if (v->kind == TXLM_TOK_CHAR_BYTE) continue;
        uint64_t ok = txlm_utf8_valid_prefix((const uint8_t *)v->blob + a, b - a);
        if (ok != b - a)
            return txlm_fail(err, code, "%s: symbol %" PRIu32 " is not valid UTF-8 (blob byte %" PRIu64 ")", where, i,
                             (uint64_t)a + ok);
    }
    return txlm_vocab_check_symbols(v, where, &txlm_vocab_ids, code, err);
}
