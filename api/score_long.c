/* Scoring any number of positions in segments of at most max_segment, the
 * memory carried, progress told and cancelling honoured between them (as
 * txlm_session_feed_long feeds). */
#include "session.h"
#include "txlm_api_error.h"

txlm_status txlm_session_score_long(txlm_session *s, const int32_t *tokens, const int32_t *targets, size_t n,
                                   float *target_logprobs, txlm_progress_fn progress, void *user, size_t *done)
{
    if (done) *done = 0;
    if (!s || ((!tokens || !targets || !target_logprobs) && n)) return txlm_api_bad_arg("txlm_session_score_long: NULL argument");
    for (size_t at = 0; at < n;) {
        uint32_t len = n - at < s->max_seg ? (uint32_t)(n - at) : s->max_seg;
        txlm_status st = txlm_session_score(s, tokens + at, targets + at, len, target_logprobs + at);
        if (st) return st;
        at += len;
        if (done) *done = at;
        if (progress && progress(user, (double)at / (double)n) && at < n) {
            txlm_err e = {0};
            txlm_fail(&e, TXLM_ERR_CANCELLED, "scoring cancelled after %zu of %zu positions", at, n);
            return txlm_api_fail(&e);
        }
    }
    return TXLM_OK;
}
