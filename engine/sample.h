/* Drawing the next token: the output layer over n >= 1 streams' last
 * rows in a workspace (sample.c), the draws on the host (sample_draw.c),
 * the options and the repetition penalty (sample_penalty.c). */
#ifndef TXLM_SAMPLE_H
#define TXLM_SAMPLE_H

#include <stdint.h>

#include "blame.h"
#include "errmsg.h"
#include "hparams.h"
#include "txlm.h"

struct txlm_workspace;

/* The next token of each of s[0..n) (1..w->max_streams of them, each fed
 * at least once), each drawn with its own sampler as the options say
 * (pen: NULL or n entries, each may be NULL), the output layer run once
 * for all of them: hierarchical at temperature 1 with no filter or
 * penalty (the head for every row in one submission, then each tail
 * cluster drawn for the rows that fell in it, in a second), else from the
 * whole distribution of each row. A stream's failure (a non-finite
 * distribution, a bad penalty) fails the call naming it (with a blame:
 * "stream i: "); it gets token -1 and the others are still drawn. */
int txlm_sample_streams(struct txlm_workspace *w, txlm_session *const *s, uint32_t n, const txlm_sampling *o,
                        const txlm_repeat_penalty *const *pen, txlm_blame *blame, int32_t *tokens, txlm_err *err);
/* The whole distribution after each of s[0..n)'s last token (each fed at
 * least once), checked finite, into out (n x n_token floats, stream i's
 * at i x n_token): their last rows through the output layer, w->out_rows
 * of them a submission. A stream's non-finite row fails the call naming
 * it (with a blame: "stream i: "); the others' rows are still written. */
int txlm_next_rows(struct txlm_workspace *w, txlm_session *const *s, uint32_t n, txlm_blame *blame, float *out,
                   txlm_err *err);
/* One session's, into w->host_lp: what the lone next-token calls read. */
int txlm_next_row(struct txlm_workspace *w, txlm_session *s, txlm_err *err);
/* The same into dst (n_token floats), on the device only, nothing
 * checked; its commands wait first for all earlier work on the queue. */
struct txlm_buf;
int txlm_next_row_to(struct txlm_workspace *w, txlm_session *s, struct txlm_buf *dst, txlm_err *err);

uint64_t txlm_rng_next(uint64_t *state);
/* The draw at temperature 1 with no filter or penalty is hierarchical:
 * head, then one tail cluster (needs clusters). */
int txlm_sample_exact(const txlm_hparams *h, const txlm_sampling *o, const txlm_repeat_penalty *pen);
/* Index drawn with probability proportional to exp(lp[i] / t) over [0, n). */
uint32_t txlm_draw(const float *lp, uint32_t n, double t, uint64_t *rng);
/* Temperature, then top-k, then top-p on a full distribution of n. */
int txlm_draw_filtered(const float *lp, uint32_t n, const txlm_sampling *o, uint64_t *rng, int32_t *token, txlm_err *err);
/* TXLM_ERR_NONFINITE naming the token or tail cluster where head row lp (n values) is not finite. */
int txlm_check_head(const txlm_session *s, const float *lp, uint32_t row, uint32_t n, txlm_err *err);

/* sample_penalty.c: the options refused before any work (non-finite
 * temperature, top_k above the vocabulary's n_token, top_p outside [0, 1],
 * a bad penalty or penalty token); whether the repetition penalty is on;
 * applying it to n log-probabilities. */
int txlm_sampling_check(const txlm_sampling *o, const txlm_repeat_penalty *pen, uint32_t n_token, txlm_err *err);
int txlm_sampling_penalized(const txlm_repeat_penalty *pen);
int txlm_apply_penalty(float *lp, uint32_t n, const txlm_repeat_penalty *pen, txlm_err *err);

#endif
