/* Sampling options checked before any work, and llama.cpp's repetition
 * penalty on a full distribution (txlm.h, txlm_sampling and
 * txlm_repeat_penalty). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "sample.h"

int txlm_sampling_check(const txlm_sampling *o, const txlm_repeat_penalty *pen, uint32_t n_token, txlm_err *err)
{
    if (!isfinite(o->temperature))
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "sampling: temperature %g is not a finite number", o->temperature);
    if (o->top_k > INT32_MAX)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "sampling: top_k %u is out of range (a negative number?)", o->top_k);
    /* the rule txlm serve's top_k follows too (0 .. the vocabulary's size) */
    if (o->top_k > n_token)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "sampling: top_k %u is more than the vocabulary's %u tokens (0: off)",
                         o->top_k, n_token);
    if (!(o->top_p >= 0 && o->top_p <= 1))
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "sampling: top_p %g is outside [0, 1] (0 or 1: off)", o->top_p);
    if (!pen) return 0;
    if (!(pen->penalty >= 0) || !isfinite(pen->penalty))
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT,
                         "repetition penalty %g: must be a finite number >= 0 (0 or 1: off)", pen->penalty);
    if (pen->n && !pen->tokens)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "repetition penalty: n is %u but tokens is NULL", pen->n);
    for (uint32_t i = 0; txlm_sampling_penalized(pen) && i < pen->n; i++)
        if (pen->tokens[i] < 0 || (uint32_t)pen->tokens[i] >= n_token)
            return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "repetition penalty: tokens[%u] = %d is outside the vocabulary (%u)",
                             i, pen->tokens[i], n_token);
    return 0;
}

int txlm_sampling_penalized(const txlm_repeat_penalty *pen)
{
    return pen && pen->penalty > 0 && pen->penalty != 1 && pen->n > 0;
}

int txlm_apply_penalty(float *lp, uint32_t n, const txlm_repeat_penalty *pen, txlm_err *err)
{
    /* each distinct token once, as llama.cpp does */
    unsigned char *seen = calloc(n / 8 + 1, 1);
    if (!seen) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    for (uint32_t i = 0; i < pen->n; i++) {
        uint32_t t = (uint32_t)pen->tokens[i];
        if (seen[t / 8] & (1u << (t % 8))) continue;
        seen[t / 8] |= (unsigned char)(1u << (t % 8));
        lp[t] = lp[t] > 0 ? lp[t] / pen->penalty : lp[t] * pen->penalty;
    }
    free(seen);
    return 0;
}
