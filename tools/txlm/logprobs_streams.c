/* txlm logprobs over several token streams (logprobs_streams.h). */
#include "logprobs_streams.h"

#include <stdlib.h>

#include "cli.h"
#include "cli_batch.h"

/* Stream k's j-th segment: its start in *at and its length, 0 when it has no more. */
static uint32_t segment_of(const lp_streams *x, uint32_t k, uint32_t j, uint64_t *at)
{
    uint64_t start = 0;
    if (x->segs) {
        if (j >= x->n_segs[k]) return 0;
        for (uint32_t i = 0; i < j; i++) start += (uint32_t)x->segs[k][i];
        *at = start;
        return (uint32_t)x->segs[k][j];
    }
    start = (uint64_t)j * x->seg_len;
    if (start >= x->lens[k]) return 0;
    *at = start;
    return x->lens[k] - start < x->seg_len ? (uint32_t)(x->lens[k] - start) : x->seg_len;
}

/* The feeds of step j (streams with a j-th segment), in stream order; how many. */
static uint32_t step_feeds(const cli_batch *cb, const lp_streams *x, uint32_t j, uint32_t n_token, float *const *out,
                           txlm_stream_feed *f)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < x->n; k++) {
        uint64_t at = 0;
        uint32_t len = segment_of(x, k, j, &at);
        if (!len) continue;
        f[n++] = (txlm_stream_feed){.session = cb->s[k], .tokens = x->tokens[k] + at, .n = len,
                                    .logprobs = out[k] + at * n_token};
    }
    return n;
}

int lp_streams_feed(txlm_model *m, const txlm_session_options *so, const lp_streams *x, uint32_t n_token, float *lp)
{
    cli_batch cb;
    if (cli_batch_open(&cb, m, x->n, so)) return 1;
    txlm_stream_feed *f = malloc(x->n * sizeof *f);
    float **out = malloc(x->n * sizeof *out);
    int rc = !f || !out ? cli_error("out of memory") : 0;
    for (uint32_t k = 0, at = 0; !rc && k < x->n; at += x->lens[k], k++) out[k] = lp + (size_t)at * n_token;
    for (uint32_t j = 0, n; !rc && (n = step_feeds(&cb, x, j, n_token, out, f)) > 0; j++) {
        txlm_status st = txlm_batch_feed(cb.b, f, n);
        if (st) rc = cli_lib_error(st, "running the model");
    }
    free(f);
    free(out);
    cli_batch_free(&cb);
    return rc;
}
