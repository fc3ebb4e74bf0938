/* One stream of a request (serve.h's srv_job): its input fed in
 * segments, with targets scored (a text scored) or full rows kept (a
 * prompt echoed with log-probabilities), then tokens drawn, fed and
 * turned into text exactly as txlm generate does (gen_common.h: the
 * prompt's last line through the detokenizer, the penalty window, the
 * stop strings). The scheduler thread alone calls these once a job is
 * queued. */
#ifndef TXLM_SRV_JOB_H
#define TXLM_SRV_JOB_H

#include "serve.h"
#include "srv_json.h"

/* A completion's choice: prompt ids[0..n) (echo: their text, or NULL for
 * ids), the choice index; user: the session it continues, or NULL. 0, or
 * -1 after filling e. Nothing sized by the vocabulary is allocated yet:
 * that waits for the job's start (srv_job_buffers). */
int srv_job_completion(srv *sv, srv_job *j, const int32_t *ids, size_t n, int from_request, uint32_t index, srv_err *e);
/* A text's ids scored: every token's log-probability given all before it
 * (the first from the session's last row when it has fed tokens). */
int srv_job_score(srv *sv, srv_job *j, const int32_t *ids, size_t n, srv_err *e);
void srv_job_free(srv_job *j);

/* At the job's start (scheduler thread): its log-probability buffers,
 * sized by its input. 0, or -1 (j->error set). */
int srv_job_buffers(srv *sv, srv_job *j);
/* Whether the job needs its session's next-token distribution this step:
 * before its first feed, for the first input token's log-probability when
 * it goes on from a session; before each draw, with logprobs. */
int srv_job_wants_row(const srv_job *j);
/* That distribution (n_token floats, valid for this step): kept for the
 * draw, or the first input token's log-probability and top list read. */
void srv_job_row(srv *sv, srv_job *j, const float *row);
/* The next segment to feed: a txlm_stream_feed for the batch (targets or
 * rows as the job needs). 0 when the input is all fed. */
uint32_t srv_job_segment(srv *sv, srv_job *j, txlm_stream_feed *f);
/* After the segment fed by f: log-probabilities kept, j->fed moved on. */
void srv_job_segment_done(srv *sv, srv_job *j, const txlm_stream_feed *f);
/* The prompt all fed: with echo and logprobs, its tokens' entries. */
void srv_job_prompt_done(srv *sv, srv_job *j);
/* A token drawn: text through the detokenizer and stop strings, its
 * log-probabilities, j->made; sets j->finishing (a stop string or
 * max_tokens) and j->pending. 0 or -1 (j->error set). */
int srv_job_take(srv *sv, srv_job *j, int32_t tok);
/* The end of the stream: what the detokenizer and stop strings held back
 * is let out. */
void srv_job_end(srv *sv, srv_job *j, const char *finish);
/* Fails the job with an HTTP status and a message. */
void srv_job_fail(srv_job *j, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The N most likely of row[0..v) into top (ties: the lower id first). */
void srv_top_of(const float *row, uint32_t v, uint32_t n, srv_top *top);

#endif
