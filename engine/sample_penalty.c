/* Sampling options checked before any work, and llama.cpp's repetition
 * penalty on a full distribution (txlm.h, txlm_sampling). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "sample.h"

int txlm_sampling_check(const txlm_sampling *o, uint32_t n_token, txlm_err *err)
{
    if (!isfinite(o->temperature))
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "sampling: temperature %g is not a finite number", o->temperature);
    if (o->top_k > INT32_MAX)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "sampling: top_k %u is out of range (a negative number?)", o->top_k);
    if (!(o->top_p >= 0 && o->top_p <= 1))
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "sampling: top_p %g is outside [0, 1] (0 or 1: off)", o->top_p);
    if (!(o->repeat_penalty >= 0) || !isfinite(o->repeat_penalty))
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT,
                         "sampling: repeat_penalty %g must be a finite number >= 0 (0 or 1: off)", o->repeat_penalty);
    if (o->n_penalty && !o->penalty_tokens)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "sampling: n_penalty is %u but penalty_tokens is NULL", o->n_penalty);
    for (uint32_t i = 0; txlm_sampling_penalized(o) && i < o->n_penalty; i++)
        if (o->penalty_tokens[i] < 0 || (uint32_t)o->penalty_tokens[i] >= n_token)
            return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "sampling: penalty_tokens[%u] = %d is outside the vocabulary (%u)",
                             i, o->penalty_tokens[i], n_token);
    return 0;
}

int txlm_sampling_penalized(const txlm_sampling *o)
{
    return o->repeat_penalty > 0 && o->repeat_penalty != 1 && o->n_penalty > 0;
}

int txlm_apply_penalty(float *lp, uint32_t n, const txlm_sampling *o, txlm_err *err)
{
    /* each distinct token once, as llama.cpp does */
    unsigned char *seen = calloc(n / 8 + 1, 1);
    if (!seen) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    for (uint32_t i = 0; i < o->n_penalty; i++) {
        uint32_t t = (uint32_t)o->penalty_tokens[i];
        if (seen[t / 8] & (1u << (t % 8))) continue;
        seen[t / 8] |= (unsigned char)(1u << (t % 8));
        lp[t] = lp[t] > 0 ? lp[t] / o->repeat_penalty : lp[t] * o->repeat_penalty;
    }
    free(seen);
    return 0;
}
