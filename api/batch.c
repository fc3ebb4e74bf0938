/* The batch API (include/txlm.h, "several streams in one pass"):
 * argument checks, and each session claimed for the call so that one
 * already inside another call is refused rather than raced. */
#include <stdlib.h>

#include "batch.h"
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
    txlm_memory_use u;
    txlm_status st = txlm_session_memory(b->w, &u);
    if (st == TXLM_OK) *out = (txlm_memory_use){u.device_bytes, u.host_bytes + sizeof *b};
    return st;
}

/* Claims sessions [0, n) for this call, or none of them. */
static int claim(txlm_session *const *s, uint32_t n, txlm_err *err)
{
    for (uint32_t i = 0; i < n; i++) {
        int free_ = 0;
        if (!__atomic_compare_exchange_n(&s[i]->busy, &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            while (i-- > 0) __atomic_store_n(&s[i]->busy, 0, __ATOMIC_RELEASE);
            return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "stream %u: its session is inside another batch call", i);
        }
    }
    return 0;
}

static void release(txlm_session *const *s, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) __atomic_store_n(&s[i]->busy, 0, __ATOMIC_RELEASE);
}

txlm_status txlm_batch_feed(txlm_batch *b, const txlm_stream_feed *feeds, uint32_t n)
{
    if (!b || (!feeds && n)) return txlm_api_bad_arg("txlm_batch_feed: NULL argument");
    txlm_err e = {0};
    if (txlm_batch_check(b, feeds, n, &e)) return txlm_api_fail(&e);
    txlm_session **s = malloc(n * sizeof *s);
    if (!s) return txlm_api_fail(&(txlm_err){TXLM_ERR_OUT_OF_MEMORY, "out of host memory"});
    for (uint32_t i = 0; i < n; i++) s[i] = feeds[i].session;
    int rc = claim(s, n, &e);
    if (!rc) {
        rc = txlm_batch_forward(b, feeds, n, &e);
        release(s, n);
    }
    free(s);
    return rc ? txlm_api_fail(&e) : TXLM_OK;
}

txlm_status txlm_batch_sample(txlm_batch *b, txlm_session *const *sessions, uint32_t n, const txlm_sampling *opts,
                              const txlm_repeat_penalty *const *penalties, int32_t *tokens)
{
    if (!b || !sessions || !tokens) return txlm_api_bad_arg("txlm_batch_sample: NULL argument");
    if (n == 0 || n > b->max_streams) return txlm_api_bad_arg("txlm_batch_sample: n must be 1..the batch's max_streams");
    for (uint32_t i = 0; i < n; i++) {
        if (!sessions[i]) return txlm_api_bad_arg("txlm_batch_sample: NULL session");
        if (sessions[i]->m != b->m) return txlm_api_bad_arg("txlm_batch_sample: a session of another model than the batch's");
        for (uint32_t j = 0; j < i; j++)
            if (sessions[j] == sessions[i]) return txlm_api_bad_arg("txlm_batch_sample: the same session twice");
    }
    txlm_sampling def = {.temperature = 1.0f};
    txlm_err e = {0};
    int rc = claim(sessions, n, &e);
    if (!rc) {
        rc = txlm_batch_sample_next(b, sessions, n, opts ? opts : &def, penalties, tokens, &e);
        release(sessions, n);
    }
    return rc ? txlm_api_fail(&e) : TXLM_OK;
}
