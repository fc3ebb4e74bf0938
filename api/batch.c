/* The batch API (include/txlm.h, "several streams in one pass"):
 * argument checks, and each session claimed for the call so that one
 * already inside another call is refused rather than raced. */
#include <stdlib.h>

#include "batch.h"
#include "session_claim.h"
#include "txlm_api_error.h"

txlm_status txlm_batch_plan(const txlm_model *m, uint32_t streams, const txlm_session_options *opts,
                            txlm_batch_sizes *out)
{
    if (!m || !out) return txlm_api_bad_arg("txlm_batch_plan: NULL argument");
    txlm_err e = {0};
    return txlm_batch_plan_sizes((txlm_model *)m, streams, opts, out, &e) ? txlm_api_fail(&e) : TXLM_OK;
}

txlm_status txlm_batch_create(txlm_model *m, uint32_t max_streams, const txlm_session_options *opts, txlm_batch **out)
{
    if (out) *out = NULL;
    if (!m || !out) return txlm_api_bad_arg("txlm_batch_create: NULL argument");
    txlm_err e = {0};
    return txlm_batch_open(m, max_streams, opts, out, &e) ? txlm_api_fail(&e) : TXLM_OK;
}

void txlm_batch_free(txlm_batch *b) { txlm_batch_close(b); }

txlm_status txlm_batch_memory(const txlm_batch *b, txlm_memory_use *out)
{
    if (!b || !out) return txlm_api_bad_arg("txlm_batch_memory: NULL argument");
    uint64_t host = sizeof *b + sizeof *b->w + (uint64_t)b->m->h.n_token * sizeof *b->w->host_lp;
    *out = (txlm_memory_use){txlm_workspace_bytes(b->w), host};
    return TXLM_OK;
}

/* The end of a batched call: the stream its error named is kept for txlm_batch_failed_stream. */
static txlm_status finish(txlm_batch *b, int rc, const txlm_blame *blame, txlm_err *e)
{
    b->failed_stream = rc ? blame->stream : -1;
    return rc ? txlm_api_fail(e) : TXLM_OK;
}

/* A NULL argument: refused before anything is read, no stream to name. */
static txlm_status refused(txlm_batch *b, const char *msg)
{
    if (b) b->failed_stream = -1;
    return txlm_api_bad_arg(msg);
}

txlm_status txlm_batch_feed(txlm_batch *b, const txlm_stream_feed *feeds, uint32_t n)
{
    if (!b || (!feeds && n)) return refused(b, "txlm_batch_feed: NULL argument");
    txlm_err e = {0};
    txlm_blame blame = {.stream = -1};
    uint32_t k = n <= b->max_streams ? n : 0; /* more streams are refused below, before they are read */
    txlm_session **s = malloc((k ? k : 1) * sizeof *s);
    if (!s) return finish(b, txlm_fail(&e, TXLM_ERR_OUT_OF_MEMORY, "out of host memory"), &blame, &e);
    for (uint32_t i = 0; i < k; i++) s[i] = feeds[i].session;
    int rc = txlm_batch_check_sessions(b, s, n, &blame, &e) || txlm_batch_check(b, feeds, n, &blame, &e) ? e.code : 0;
    if (!rc) rc = txlm_sessions_claim(s, n, &blame, &e);
    if (!rc) {
        rc = txlm_batch_forward(b, feeds, n, &blame, &e);
        txlm_sessions_release(s, n);
    }
    free(s);
    return finish(b, rc, &blame, &e);
}

txlm_status txlm_batch_sample(txlm_batch *b, txlm_session *const *sessions, uint32_t n, const txlm_sampling *opts,
                              const txlm_repeat_penalty *const *penalties, int32_t *tokens)
{
    if (!b || !sessions || !tokens) return refused(b, "txlm_batch_sample: NULL argument");
    txlm_sampling def = {.temperature = 1.0f};
    txlm_err e = {0};
    txlm_blame blame = {.stream = -1};
    int rc = txlm_batch_check_sessions(b, sessions, n, &blame, &e);
    if (!rc) rc = txlm_sessions_claim(sessions, n, &blame, &e);
    if (!rc) {
        rc = txlm_batch_sample_next(b, sessions, n, opts ? opts : &def, penalties, tokens, &blame, &e);
        txlm_sessions_release(sessions, n);
    }
    return finish(b, rc, &blame, &e);
}

txlm_status txlm_batch_next_logprobs(txlm_batch *b, txlm_session *const *sessions, uint32_t n, float *logprobs)
{
    if (!b || !sessions || !logprobs) return refused(b, "txlm_batch_next_logprobs: NULL argument");
    txlm_err e = {0};
    txlm_blame blame = {.stream = -1};
    int rc = txlm_batch_check_sessions(b, sessions, n, &blame, &e);
    if (!rc) rc = txlm_sessions_claim(sessions, n, &blame, &e);
    if (!rc) {
        rc = txlm_batch_next_rows(b, sessions, n, logprobs, &blame, &e);
        txlm_sessions_release(sessions, n);
    }
    return finish(b, rc, &blame, &e);
}

int32_t txlm_batch_failed_stream(const txlm_batch *b) { return b ? b->failed_stream : -1; }
