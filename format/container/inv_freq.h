/* The sinusoid frequencies of the relative position embedding. The
 * engine computes 1 / 10000^(2k/d_model) in float32; a checkpoint that
 * carries pos_emb.inv_freq rounded to 16 bits (a half-precision save, as
 * apex O2 leaves even this buffer) computes with the rounded values, so
 * those are stored in the .txlm and used instead (docs/tensors.md). */
#ifndef TXLM_INV_FREQ_H
#define TXLM_INV_FREQ_H

#include <math.h>
#include <stdint.h>


#define TXLM_INV_FREQ_NAME "pos_emb.inv_freq"

/* The engine's own value of frequency k for d_model d. */
static inline float txlm_inv_freq_std(uint32_t k, uint32_t d) { return 1.0f / powf(10000.0f, (float)(2 * k) / (float)d); }

#endif
