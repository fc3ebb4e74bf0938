#include "quantize.h"

#include <math.h>
#include <string.h>

#include "dtype.h"

uint16_t txlm_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, man = x & 0x7fffff;
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0)); /* inf / nan */
    int e = (int)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7c00);                         /* overflow -> inf */
    if (e <= 0) {                                                           /* subnormal or zero */
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) half++; /* may carry into the exponent: correct */
    return (uint16_t)half;
}

float txlm_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, x;
    if (exp == 0) {
        if (man == 0) {
            x = sign;
        } else {
            int e = -1;
            do {
                man <<= 1;
                e++;
            } while (!(man & 0x400));
            x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else if (exp == 31) {
        x = sign | 0x7f800000 | (man << 13);
    } else {
        x = sign | ((exp - 15 + 127) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

float txlm_bf16_to_f32(uint16_t h)
{
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

void txlm_quantize_f16(const float *x, uint64_t n, void *out)
{
    uint8_t *o = out;
    for (uint64_t i = 0; i < n; i++) {
        uint16_t h = txlm_f32_to_f16(x[i]);
        o[2 * i] = (uint8_t)h;
        o[2 * i + 1] = (uint8_t)(h >> 8);
    }
}

static void put_scale(uint8_t *scales, uint64_t blk, float d)
{
    uint16_t h = txlm_f32_to_f16(d);
    scales[2 * blk] = (uint8_t)h;
    scales[2 * blk + 1] = (uint8_t)(h >> 8);
}

void txlm_quantize_q8_0(const float *x, uint64_t n, void *out)
{
    int8_t *q = out;
    uint8_t *scales = (uint8_t *)out + n;
    for (uint64_t b = 0; b < n / 32; b++) {
        const float *v = x + b * 32;
        float amax = 0;
        for (int i = 0; i < 32; i++) amax = fmaxf(amax, fabsf(v[i]));
        float d = amax / 127.0f, id = d ? 1.0f / d : 0.0f;
        for (int i = 0; i < 32; i++) q[b * 32 + i] = (int8_t)lrintf(v[i] * id);
        put_scale(scales, b, d);
    }
}

void txlm_quantize_q4_0(const float *x, uint64_t n, void *out)
{
    uint8_t *q = out;
    uint8_t *scales = (uint8_t *)out + n / 2;
    for (uint64_t b = 0; b < n / 32; b++) {
        const float *v = x + b * 32;
        /* the value of largest magnitude maps to -8, so its sign gets the full range */
        float max = 0;
        for (int i = 0; i < 32; i++)
            if (fabsf(v[i]) > fabsf(max)) max = v[i];
        float d = max / -8.0f, id = d ? 1.0f / d : 0.0f;
        for (int i = 0; i < 32; i += 2) {
            int a = (int)(v[i] * id + 8.5f), c = (int)(v[i + 1] * id + 8.5f);
            a = a < 0 ? 0 : a > 15 ? 15 : a;
            c = c < 0 ? 0 : c > 15 ? 15 : c;
            q[b * 16 + (uint64_t)i / 2] = (uint8_t)(a | (c << 4));
        }
        put_scale(scales, b, d);
    }
}

static float get_scale(const uint8_t *scales, uint64_t blk)
{
    return txlm_f16_to_f32((uint16_t)(scales[2 * blk] | (scales[2 * blk + 1] << 8)));
}

void txlm_dequantize(uint32_t dtype, const void *in, uint64_t n, float *out)
{
    const uint8_t *b = in;
    switch (dtype) {
    case TXLM_DT_F32:
        memcpy(out, in, n * 4);
        break;
    case TXLM_DT_F16:
        for (uint64_t i = 0; i < n; i++) out[i] = txlm_f16_to_f32((uint16_t)(b[2 * i] | (b[2 * i + 1] << 8)));
        break;
    case TXLM_DT_BF16:
        for (uint64_t i = 0; i < n; i++) out[i] = txlm_bf16_to_f32((uint16_t)(b[2 * i] | (b[2 * i + 1] << 8)));
        break;
    case TXLM_DT_Q8_0:
        for (uint64_t i = 0; i < n; i++) out[i] = (float)(int8_t)b[i] * get_scale(b + n, i / 32);
        break;
    case TXLM_DT_Q4_0:
        for (uint64_t i = 0; i < n; i++) {
            int q = (b[i / 2] >> ((i & 1) * 4)) & 15;
            out[i] = (float)(q - 8) * get_scale(b + n / 2, i / 32);
        }
        break;
    }
}
