/* Finding NaN and infinity. A float is non-finite exactly when its
 * exponent bits are all ones; testing those bits as integers needs no
 * floating-point compare, vectorises, and is exact for NaNs of any payload. */
#include "nonfinite.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include <txlm_status.h>

#include "dtype.h"
#include "quantize.h"

#define F32_EXP 0x7f800000u
#define F16_EXP 0x7c00u
#define CHUNK 4096 /* elements per counting pass, so that a clean tensor costs one pass */

/* Non-finite float32 among n at p (p may be unaligned). */
static uint64_t count_f32(const uint8_t *p, uint64_t n)
{
    uint64_t bad = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, p + 4 * i, 4);
        bad += (u & F32_EXP) == F32_EXP;
    }
    return bad;
}

/* 16-bit values whose exponent field (mask) is all ones: f16 (0x7c00), bf16 (0x7f80). */
static uint64_t count_16(const uint8_t *p, uint64_t n, uint16_t mask)
{
    uint64_t bad = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint16_t u = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
        bad += (u & mask) == mask;
    }
    return bad;
}

uint64_t txlm_first_nonfinite(const float *p, uint64_t n)
{
    for (uint64_t at = 0; at < n; at += CHUNK) {
        uint64_t len = n - at < CHUNK ? n - at : CHUNK;
        if (!count_f32((const uint8_t *)(p + at), len)) continue;
        for (uint64_t i = at; i < at + len; i++)
            if (!isfinite(p[i])) return i;
    }
    return n;
}

const char *txlm_nonfinite_name(float v) { return isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"; }

static float value_at(uint32_t dtype, const uint8_t *p, uint64_t i)
{
    if (dtype == TXLM_DT_F32) {
        float f;
        memcpy(&f, p + 4 * i, 4);
        return f;
    }
    uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
    return dtype == TXLM_DT_BF16 ? txlm_bf16_to_f32(h) : txlm_f16_to_f32(h);
}

int txlm_nonfinite_scan(uint32_t dtype, const void *data, uint64_t n_elems, txlm_nonfinite *out)
{
    const uint8_t *p = data;
    memset(out, 0, sizeof *out);
    uint64_t n = n_elems, per = 1;
    uint16_t mask = F16_EXP;
    switch (dtype) {
    case TXLM_DT_F32: break;
    case TXLM_DT_F16: break;
    case TXLM_DT_BF16: mask = 0x7f80; break;
    case TXLM_DT_Q8_0: p += n_elems, n = n_elems / 32, per = 32; break;     /* the scales follow the values */
    case TXLM_DT_Q4_0: p += n_elems / 2, n = n_elems / 32, per = 32; break; /* and the nibbles */
    default: return TXLM_ERR_UNSUPPORTED;
    }
    uint32_t kind = per > 1 ? TXLM_DT_F16 : dtype;
    for (uint64_t at = 0; at < n; at += CHUNK) {
        uint64_t len = n - at < CHUNK ? n - at : CHUNK;
        uint64_t bad = kind == TXLM_DT_F32 ? count_f32(p + 4 * at, len) : count_16(p + 2 * at, len, mask);
        if (bad && !out->count)
            for (uint64_t i = at; i < at + len; i++)
                if (!isfinite(value_at(kind, p, i))) {
                    out->first = i * per;
                    out->value = value_at(kind, p, i);
                    break;
                }
        out->count += bad * per;
    }
    return 0;
}
