/* Sampling the next token from a session (engine/sample.c). */
#ifndef TXLM_SAMPLE_H
#define TXLM_SAMPLE_H

#include <stdint.h>

#include "errmsg.h"
#include "txlm.h"

uint64_t txlm_rng_next(uint64_t *state);
int txlm_sample_next(txlm_session *s, const txlm_sampling *o, int32_t *token, txlm_err *err);

#endif
