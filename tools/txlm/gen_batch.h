/* txlm generate --streams N: N continuations of one prompt generated in
 * one batch (tools/txlm/gen_batch.c). */
#ifndef TXLM_GEN_BATCH_H
#define TXLM_GEN_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "gen_common.h"

typedef struct gen_batch_job {
    txlm_model *m;
    const gen_opts *g;
    const txlm_session_options *so; /* max_segment set: the prompt's segments */
    const char *prompt;             /* as given (NULL or empty: none) */
    size_t prompt_len;              /* its bytes (a prompt file's may hold NUL bytes) */
    const int32_t *ids;             /* the prompt's ids, or the start of a text */
    size_t n_ids;
    int display_prompt;
    uint32_t streams;
    uint64_t seed;                  /* stream i is seeded with seed + i */
    int progress;                   /* a progress line on stderr (always on a terminal) */
} gen_batch_job;

typedef struct gen_batch_times {
    double prompt_s, gen_s;
    size_t made; /* tokens drawn, all streams together */
} gen_batch_times;

/* Feeds the prompt to every stream's session (one batch per segment),
 * then draws a token of each unfinished stream and feeds it, one batch a
 * step, until each has its -n tokens or a stop string; a stream that is
 * done leaves the batch. Each stream's text (prompt, continuation, line
 * break) is printed after the last, under a line "--- stream i (seed S)";
 * meanwhile a progress line (j->progress, or a terminal) follows the
 * prompt's segments and then the tokens made.
 * Stream i makes the text `txlm generate --seed S` makes alone. 0, 130
 * after Ctrl-C (what was made is printed), or 1 after printing why. */
int gen_batch_run(const gen_batch_job *j, gen_batch_times *t);

#endif
