/* NaN and infinity in weights and in what the device returns (nonfinite.c). */
#ifndef TXLM_NONFINITE_H
#define TXLM_NONFINITE_H

#include <stdint.h>
#include <stdio.h>

#include "errmsg.h"

typedef struct txlm_nonfinite {
    uint64_t count; /* elements that are NaN or infinite */
    uint64_t first; /* the index of the first of them (when count > 0) */
    float value;    /* its value: NaN, +inf or -inf */
} txlm_nonfinite;

/* The first non-finite value of n floats, or n when all are finite. One
 * pass of integer tests on the exponent bits, which compilers vectorise:
 * cheaper than the copy that brought the values to the host. */
uint64_t txlm_first_nonfinite(const float *p, uint64_t n);
/* The non-finite elements of a tensor of any stored dtype (f32, f16, bf16;
 * for q8_0 and q4_0 the block scales: every element of a block whose scale
 * is not finite counts). Data need not be aligned. 0, or UNSUPPORTED for an
 * unknown dtype. */
int txlm_nonfinite_scan(uint32_t dtype, const void *data, uint64_t n_elems, txlm_nonfinite *out);
/* "nan", "inf" or "-inf", for messages. */
const char *txlm_nonfinite_name(float v);

#endif
