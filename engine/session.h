/* A session's lone calls (session.c): each a batch of one stream through
 * the same pass driver and sampler as a batch's, in the session's own
 * workspace, made at its first lone call (a session fed only in batches
 * never holds one). */
#ifndef TXLM_SESSION_H
#define TXLM_SESSION_H

#include "stream.h"
#include "workspace.h"

int txlm_session_open(txlm_model *m, const txlm_session_options *opts, txlm_session **out, txlm_err *err);
void txlm_session_close(txlm_session *s);
/* One segment fed alone (txlm_session_feed, _feed_rows, _score): f is one
 * stream's request, f->session s. */
int txlm_session_run(txlm_session *s, const txlm_stream_feed *f, txlm_err *err);
/* The next token drawn alone. */
int txlm_session_draw(txlm_session *s, const txlm_sampling *o, const txlm_repeat_penalty *pen, int32_t *token,
                      txlm_err *err);
/* The next token's log-probabilities into s->next_vk (made at the first
 * call), left on the device (txlm_vulkan.h). */
int txlm_session_next_vk(txlm_session *s, txlm_err *err);
/* The next token's log-probabilities (n_token), valid until s's next call. */
int txlm_session_next(txlm_session *s, const float **lp, txlm_err *err);
/* Device and host bytes s holds: its memory, its last row, its capture
 * buffers, its own workspace once made. */
void txlm_session_memory_use(const txlm_session *s, uint64_t *device, uint64_t *host);

#endif
