/* A batch: its workspace, the plan of what it and its sessions take on
 * the device, and the checks of a batched call. */
#include "batch.h"

#include <stdlib.h>

#include "pass.h"
#include "sample.h"

/* Device memory free now: the context's budget left, else the heaps less what is allocated. */
static uint64_t available(const txlm_vk *vk)
{
    uint64_t used = __atomic_load_n(&vk->memory_used, __ATOMIC_RELAXED);
    uint64_t cap = vk->memory_budget ? vk->memory_budget : txlm_vk_heap_bytes(vk);
    return used < cap ? cap - used : 0;
}

/* The plan of `streams` streams settled from opts (*like). */
static int plan(txlm_model *m, uint32_t streams, const txlm_session_options *opts, txlm_batch_sizes *out,
                txlm_session *like, txlm_err *err)
{
    *like = (txlm_session){0};
    int rc = txlm_stream_settle(like, m, opts, err);
    if (!rc) rc = txlm_workspace_plan(m, like, streams, &out->batch_bytes, err);
    if (rc) return rc;
    out->stream_ring_bytes = txlm_stream_ring_bytes(like);
    out->stream_scratch_bytes = txlm_stream_rest_bytes(like);
    out->total_bytes = streams * (out->stream_ring_bytes + out->stream_scratch_bytes) + out->batch_bytes;
    out->available_bytes = available(&m->ctx->vk);
    return 0;
}

int txlm_batch_plan_sizes(txlm_model *m, uint32_t streams, const txlm_session_options *opts, txlm_batch_sizes *out,
                          txlm_err *err)
{
    txlm_session like;
    return plan(m, streams, opts, out, &like, err);
}

int txlm_batch_open(txlm_model *m, uint32_t max_streams, const txlm_session_options *opts, txlm_batch **out,
                    txlm_err *err)
{
    *out = NULL;
    txlm_batch_sizes z;
    txlm_session like;
    int rc = plan(m, max_streams, opts, &z, &like, err);
    if (rc) return rc;
    if (z.batch_bytes > z.available_bytes)
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY,
                         "a batch of %u streams needs %llu bytes of device memory for its rows; %llu are free "
                         "(fewer streams or a shorter max_segment need less)",
                         max_streams, (unsigned long long)z.batch_bytes, (unsigned long long)z.available_bytes);
    txlm_batch *b = calloc(1, sizeof *b);
    if (!b) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    *b = (txlm_batch){.m = m, .max_streams = max_streams, .max_seg = like.max_seg, .failed_stream = -1};
    rc = txlm_workspace_open(m, &like, max_streams, &b->w, err);
    if (rc) {
        txlm_batch_close(b);
        return rc;
    }
    *out = b;
    return 0;
}

void txlm_batch_close(txlm_batch *b)
{
    if (!b) return;
    txlm_workspace_close(b->w);
    free(b);
}

/* One feed's arguments; the error names nothing (the caller names the stream). */
static int check_feed_args(const txlm_batch *b, const txlm_stream_feed *f, txlm_err *err)
{
    const txlm_session *s = f->session;
    if (!f->tokens && f->n) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "NULL tokens");
    if (f->n == 0 || f->n > s->max_seg || f->n > b->max_seg)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "segment of %u tokens: must be 1..%u", f->n,
                         s->max_seg < b->max_seg ? s->max_seg : b->max_seg);
    if (f->first_row > f->n) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "first_row %u > n %u", f->first_row, f->n);
    if (s->capture)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "its session captures attention; feed it alone (txlm_session_feed)");
    if (f->logprobs && f->targets)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "logprobs and targets both given (one or the other)");
    if (f->targets && !f->target_logprobs) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "targets without target_logprobs");
    return txlm_check_segment(s, f->tokens, f->n, f->first_row, f->targets, err);
}

int txlm_batch_check_sessions(const txlm_batch *b, txlm_session *const *s, uint32_t n, txlm_blame *blame, txlm_err *err)
{
    if (n == 0 || n > b->max_streams)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%u streams: the batch takes 1..%u", n, b->max_streams);
    for (uint32_t i = 0; i < n; i++) {
        int rc = !s[i] ? txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "NULL session")
               : s[i]->m != b->m ? txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "its session is of another model than the batch's")
               : 0;
        if (rc) return txlm_blame_stream(blame, err, i);
        for (uint32_t j = 0; j < i; j++)
            if (s[j] == s[i]) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "streams %u and %u are the same session", j, i);
    }
    return 0;
}

int txlm_batch_check(const txlm_batch *b, const txlm_stream_feed *f, uint32_t n, txlm_blame *blame, txlm_err *err)
{
    for (uint32_t i = 0; i < n; i++) {
        if (check_feed_args(b, &f[i], err)) return txlm_blame_stream(blame, err, i);
    }
    return 0;
}

int txlm_batch_forward(txlm_batch *b, const txlm_stream_feed *f, uint32_t n, txlm_blame *blame, txlm_err *err)
{
    return txlm_pass_feed(b->w, f, n, blame, err);
}

int txlm_batch_sample_next(txlm_batch *b, txlm_session *const *s, uint32_t n, const txlm_sampling *o,
                           const txlm_repeat_penalty *const *pen, int32_t *tokens, txlm_blame *blame, txlm_err *err)
{
    return txlm_sample_streams(b->w, s, n, o, pen, blame, tokens, err);
}

int txlm_batch_next_rows(txlm_batch *b, txlm_session *const *s, uint32_t n, float *logprobs, txlm_blame *blame,
                         txlm_err *err)
{
    return txlm_next_rows(b->w, s, n, blame, logprobs, err);
}
