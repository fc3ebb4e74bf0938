/* Several sessions of one model fed and drawn in one pass (include/txlm.h,
 * "several streams in one pass"; docs/batching.md): a workspace for up to
 * max_streams streams, and the checks of a batched call. The pass and the
 * draws are the lone calls' own (pass.h, sample.h). */
#ifndef TXLM_BATCH_H
#define TXLM_BATCH_H

#include "blame.h"
#include "workspace.h"

struct txlm_batch {
    txlm_model *m;
    uint32_t max_streams;
    uint32_t max_seg;        /* longest segment of one stream */
    txlm_workspace *w;
    int32_t failed_stream;   /* the stream the last feed or draw failed on, or -1 (txlm_batch_failed_stream) */
};

int txlm_batch_plan_sizes(txlm_model *m, uint32_t streams, const txlm_session_options *opts, txlm_batch_sizes *out,
                          txlm_err *err);
int txlm_batch_open(txlm_model *m, uint32_t max_streams, const txlm_session_options *opts, txlm_batch **out,
                    txlm_err *err);
void txlm_batch_close(txlm_batch *b);
/* Each takes the call's blame: an error that is one stream's names it
 * ("stream i: ") and records it there (blame.h). */
/* The sessions of a batched call: 1..max_streams of them, none NULL,
 * each of b's model, no two the same. */
int txlm_batch_check_sessions(const txlm_batch *b, txlm_session *const *s, uint32_t n, txlm_blame *blame, txlm_err *err);
/* Each feed of those sessions (segment, rows asked for, tokens and targets
 * in range, no attention capture), before any work. */
int txlm_batch_check(const txlm_batch *b, const txlm_stream_feed *f, uint32_t n, txlm_blame *blame, txlm_err *err);
/* One segment of each stream in one pass; the next token of each session. */
int txlm_batch_forward(txlm_batch *b, const txlm_stream_feed *f, uint32_t n, txlm_blame *blame, txlm_err *err);
int txlm_batch_sample_next(txlm_batch *b, txlm_session *const *s, uint32_t n, const txlm_sampling *o,
                           const txlm_repeat_penalty *const *pen, int32_t *tokens, txlm_blame *blame, txlm_err *err);
/* The next token's whole distribution of each session, in the batch's workspace. */
int txlm_batch_next_rows(txlm_batch *b, txlm_session *const *s, uint32_t n, float *logprobs, txlm_blame *blame,
                         txlm_err *err);

#endif
