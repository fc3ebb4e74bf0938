/* Feeding text of any length: whole segments of at most max_segment tokens,
 * the memory carried, progress told and cancelling honoured between them. */
#include "session.h"
#include "txlm.h"
#include "txlm_api_error.h"

txlm_status txlm_session_feed_long(txlm_session *s, const int32_t *tokens, size_t n, txlm_progress_fn progress,
                                   void *user, size_t *fed)
{
    if (fed) *fed = 0;
    if (!s || (!tokens && n)) return txlm_api_bad_arg("txlm_session_feed_long: NULL argument");
    for (size_t at = 0; at < n;) {
        uint32_t len = n - at < s->max_seg ? (uint32_t)(n - at) : s->max_seg;
        txlm_status st = txlm_session_feed_rows(s, tokens + at, len, len, NULL);
        if (st) return st;
        at += len;
        if (fed) *fed = at;
        if (progress && progress(user, (double)at / (double)n)) {
            txlm_err e = {0};
            txlm_fail(&e, TXLM_ERR_CANCELLED, "feeding cancelled after %zu of %zu tokens", at, n);
            return txlm_api_fail(&e);
        }
    }
    return TXLM_OK;
}

txlm_status txlm_session_feed_text(txlm_session *s, const char *text, size_t len, txlm_progress_fn progress,
                                   void *user, size_t *fed)
{
    if (fed) *fed = 0;
    if (!s || (!text && len)) return txlm_api_bad_arg("txlm_session_feed_text: NULL argument");
    int32_t *ids = NULL;
    size_t n = 0;
    txlm_status st = txlm_tokenize(s->m, text ? text : "", len, &ids, &n);
    if (!st) st = txlm_session_feed_long(s, ids, n, progress, user, fed);
    txlm_free(ids);
    return st;
}
