/* txlm_session_generate: draw, feed, tell, for up to n tokens. The
 * repetition penalty's window slides over the tokens drawn, so a long
 * generation is penalised as a loop of txlm_session_sample_penalized calls
 * with the last n ids would be. */
#include <stdlib.h>
#include <string.h>

#include "sample.h"
#include "session.h"
#include "txlm_api_error.h"

static txlm_status cancelled(size_t made, size_t n)
{
    txlm_err e = {0};
    txlm_fail(&e, TXLM_ERR_CANCELLED, "generation cancelled after %zu of %zu tokens", made, n);
    return txlm_api_fail(&e);
}

txlm_status txlm_session_generate(txlm_session *s, const txlm_sampling *opts, const txlm_repeat_penalty *penalty,
                                  size_t n, int32_t *tokens, txlm_progress_fn progress, void *user, size_t *made)
{
    if (made) *made = 0;
    if (!s || (!tokens && n)) return txlm_api_bad_arg("txlm_session_generate: NULL argument");
    txlm_sampling o = opts ? *opts : (txlm_sampling){.temperature = 1.0f};
    txlm_repeat_penalty pen = penalty ? *penalty : (txlm_repeat_penalty){0};
    txlm_err e = {0};
    if (txlm_sampling_check(&o, &pen, s->m->h.n_token, &e)) return txlm_api_fail(&e);
    int32_t *window = NULL;
    uint32_t w = txlm_sampling_penalized(&pen) ? pen.n : 0;
    if (w) {
        if (!(window = malloc((size_t)w * sizeof *window)))
            return txlm_fail(&e, TXLM_ERR_OUT_OF_MEMORY, "txlm_session_generate: out of host memory"), txlm_api_fail(&e);
        memcpy(window, pen.tokens, (size_t)w * sizeof *window);
        pen.tokens = window;
    }
    txlm_status st = TXLM_OK;
    for (size_t i = 0; i < n && !st; i++) {
        if ((st = txlm_session_sample_penalized(s, &o, &pen, &tokens[i])) || (st = txlm_session_feed_rows(s, &tokens[i], 1, 1, NULL))) break;
        if (made) *made = i + 1;
        if (w) {
            memmove(window, window + 1, (size_t)(w - 1) * sizeof *window);
            window[w - 1] = tokens[i];
        }
        if (progress && progress(user, (double)(i + 1) / (double)n)) st = i + 1 < n ? cancelled(i + 1, n) : TXLM_OK;
    }
    free(window);
    return st;
}
