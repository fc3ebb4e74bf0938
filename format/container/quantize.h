/* Conversions from f32 to the stored dtypes, in the file layout of
 * docs/format.md (quantised: all values of the tensor, then all scales). */
#ifndef TXLM_QUANTIZE_H
#define TXLM_QUANTIZE_H

#include <stdint.h>

uint16_t txlm_f32_to_f16(float f);
float txlm_f16_to_f32(uint16_t h);
float txlm_bf16_to_f32(uint16_t h);

/* n must be a multiple of 32 for q8_0 / q4_0. `out` receives
 * txlm_tensor_nbytes() bytes. */
void txlm_quantize_f16(const float *x, uint64_t n, void *out);
void txlm_quantize_q8_0(const float *x, uint64_t n, void *out);
void txlm_quantize_q4_0(const float *x, uint64_t n, void *out);
/* The inverse of any of them (and a copy for f32), for tests and accuracy reports. */
void txlm_dequantize(uint32_t dtype, const void *in, uint64_t n, float *out);

#endif
