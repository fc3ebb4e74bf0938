/* The whole Transformer-XL forward pass on the CPU, from a .txlm file,
 * following /docs' exact computation step by step: per-layer memory of
 * layer inputs, the sinusoid table recomputed for every segment, the
 * rel-shift by index, clamping, causal and same_length masks, and the
 * adaptive log-softmax in forward cluster order. Weights of any stored
 * dtype are dequantised to f32 once; sums are accumulated in double. */
#ifndef TXLM_REF_MODEL_H
#define TXLM_REF_MODEL_H

#include <stdint.h>

#include "errmsg.h"
#include "hparams.h"

typedef struct ref_model ref_model;
typedef struct ref_session ref_session;

int ref_model_open(const char *path, ref_model **out, txlm_err *err);
void ref_model_free(ref_model *m);
const txlm_hparams *ref_model_hparams(const ref_model *m);

/* Same meaning as txlm_session_options: mem_len 0 and clamp_len 0 take the
 * model's (clamp_len -1: none), same_length -1 takes the model's. */
typedef struct ref_session_options {
    uint32_t mem_len;
    int32_t clamp_len;
    int same_length;
} ref_session_options;

/* opts may be NULL (everything from the model). A session starts with empty memory. */
int ref_session_new(const ref_model *m, const ref_session_options *opts, ref_session **out, txlm_err *err);
void ref_session_free(ref_session *s);
/* Rows each layer's memory holds now. */
uint32_t ref_session_memory_len(const ref_session *s);

/* Feeds one segment and keeps each layer's memory for the next one.
 * logprobs (may be NULL) receives [qlen, n_token] log-probabilities. */
int ref_forward(ref_session *s, const int32_t *tokens, uint32_t qlen, float *logprobs, txlm_err *err);

#endif
