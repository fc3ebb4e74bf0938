/* txlm logprobs over several token streams: their segments fed as one
 * batch per step (tools/txlm/logprobs_streams.c). */
#ifndef TXLM_LOGPROBS_STREAMS_H
#define TXLM_LOGPROBS_STREAMS_H

#include <stdint.h>

#include "txlm.h"

typedef struct lp_streams {
    int32_t **tokens;   /* stream k: tokens[k][0..lens[k]) */
    uint32_t *lens, n;
    int32_t **segs;     /* stream k's segment lengths segs[k][0..n_segs[k]), or NULL: seg_len each */
    uint32_t *n_segs;
    uint32_t seg_len;
} lp_streams;

/* Step j feeds the j-th segment of every stream that has one, as one
 * batch (a stream whose segments ran out leaves it), each stream its own
 * session of options so; lp gets float [stream][token][n_token], streams
 * in order. 0, or 1 after printing why. */
int lp_streams_feed(txlm_model *m, const txlm_session_options *so, const lp_streams *x, uint32_t n_token, float *lp);

#endif
