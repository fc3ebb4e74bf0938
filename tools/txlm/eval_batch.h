/* txlm eval --batch N: the authors' evaluation with bsz = N streams
 * (tools/txlm/eval_batch.c). */
#ifndef TXLM_EVAL_BATCH_H
#define TXLM_EVAL_BATCH_H

#include <stdint.h>

#include "cli_scoring.h"

typedef struct eval_batch_out {
    float *nll;        /* every target's NLL (nats), part 0's first, then part 1's, ... (malloc'd) */
    uint64_t n;        /* targets scored: streams x per_stream */
    uint64_t per_stream;
    uint64_t unk;      /* of them <unk> */
    uint64_t tokens;   /* the text's tokens */
    uint64_t dropped;  /* the remainder past streams x part length, not scored */
    double secs;       /* from the model loaded to the last segment scored */
} eval_batch_out;

/* The whole text of r tokenized (line by line, as eval streams it), cut
 * into `streams` contiguous parts of floor(tokens / streams) tokens (the
 * remainder dropped, as the authors' LMOrderedIterator does), each scored
 * in its own session, their segments fed together through one batch.
 * sc gets the device, the model, its parameters and the segment length
 * (no session: cli_scorer_free frees them). Ctrl-C stops after the
 * current step, with what was scored. 0, or 1 after printing why. */
int eval_batch_score(cli_text_run *r, uint32_t streams, cli_scorer *sc, eval_batch_out *out);

#endif
