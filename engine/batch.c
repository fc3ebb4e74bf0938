/* A batch: its shared rows, the plan of what it and its sessions take on
 * the device, and the checks of a batched call. */
#include "batch.h"

#include <stdlib.h>

#include "attention.h"
#include "session_layout.h"

/* Device memory free now: the context's budget left, else the heaps less what is allocated. */
static uint64_t available(const txlm_vk *vk)
{
    uint64_t used = __atomic_load_n(&vk->memory_used, __ATOMIC_RELAXED);
    uint64_t cap = vk->memory_budget ? vk->memory_budget : txlm_vk_heap_bytes(vk);
    return used < cap ? cap - used : 0;
}

/* The partial results of one dispatch of several streams' attention
 * (attn_streams.h): as many streams as a dispatch takes, each with the
 * most its kernel can take for sessions settled as s. */
static uint64_t attn_scratch(const txlm_session *s, uint32_t streams)
{
    uint64_t own = txlm_session_scores_bytes(s);
    uint64_t per = txlm_attn_scratch_most(&s->m->ctx->vk, s->m->h.n_head, s->m->dev.dh, s->mem_len, s->max_seg, own);
    return per * (streams < TXLM_STREAM_SLOTS ? streams : TXLM_STREAM_SLOTS);
}

/* The shared rows of a batch: streams * max_seg rows, no memory. */
static int settle_rows(txlm_model *m, uint32_t streams, const txlm_session *s, txlm_session *w, txlm_err *err)
{
    uint32_t max_seg = s->max_seg;
    uint64_t rows = (uint64_t)streams * max_seg;
    if (rows > (1u << 20))
        return txlm_fail(err, TXLM_ERR_LIMIT, "%u streams of %u-token segments: %llu rows exceed 2^20", streams, max_seg,
                         (unsigned long long)rows);
    txlm_session_options o = txlm_rows_options((uint32_t)rows);
    w->rows_only = 1;
    w->streams = streams;
    w->attn_scratch = attn_scratch(s, streams);
    return txlm_session_settle(w, m, &o, err);
}

/* The plan, and the longest segment of one stream (*max_seg) it is for. */
static int plan(txlm_model *m, uint32_t streams, const txlm_session_options *opts, txlm_batch_sizes *out,
                uint32_t *max_seg, uint64_t *scratch, txlm_err *err)
{
    if (streams == 0) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "a batch needs at least one stream");
    txlm_session s = {0}, w = {0};
    int rc = txlm_session_settle(&s, m, opts, err);
    if (!rc) rc = settle_rows(m, streams, &s, &w, err);
    if (rc) return rc;
    *max_seg = s.max_seg;
    *scratch = w.attn_scratch;
    out->stream_ring_bytes = txlm_session_ring_bytes(&s);
    out->stream_scratch_bytes = txlm_session_fixed_bytes(&s, 0);
    out->batch_bytes = txlm_session_fixed_bytes(&w, 1);
    out->total_bytes = streams * (out->stream_ring_bytes + out->stream_scratch_bytes) + out->batch_bytes;
    out->available_bytes = available(&m->ctx->vk);
    return 0;
}

int txlm_batch_plan_sizes(txlm_model *m, uint32_t streams, const txlm_session_options *opts, txlm_batch_sizes *out,
                          txlm_err *err)
{
    uint32_t max_seg;
    uint64_t scratch;
    return plan(m, streams, opts, out, &max_seg, &scratch, err);
}

int txlm_batch_open(txlm_model *m, uint32_t max_streams, const txlm_session_options *opts, txlm_batch **out,
                    txlm_err *err)
{
    *out = NULL;
    txlm_batch_sizes z;
    uint32_t max_seg;
    uint64_t scratch;
    int rc = plan(m, max_streams, opts, &z, &max_seg, &scratch, err);
    if (rc) return rc;
    if (z.batch_bytes > z.available_bytes)
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY,
                         "a batch of %u streams needs %llu bytes of device memory for its rows; %llu are free "
                         "(fewer streams or a shorter max_segment need less)",
                         max_streams, (unsigned long long)z.batch_bytes, (unsigned long long)z.available_bytes);
    txlm_batch *b = calloc(1, sizeof *b);
    if (!b) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    *b = (txlm_batch){.m = m, .max_streams = max_streams, .max_seg = max_seg};
    rc = txlm_session_open_rows(m, max_streams * max_seg, max_streams, scratch, &b->w, err);
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
    txlm_session_close(b->w);
    free(b);
}

static int check_feed(const txlm_batch *b, const txlm_stream_feed *f, uint32_t i, txlm_err *err)
{
    const txlm_session *s = f->session;
    if (!f->tokens && f->n) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "stream %u: NULL tokens", i);
    if (f->n == 0 || f->n > s->max_seg || f->n > b->max_seg)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "stream %u: segment of %u tokens: must be 1..%u", i, f->n,
                         s->max_seg < b->max_seg ? s->max_seg : b->max_seg);
    if (f->first_row > f->n) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "stream %u: first_row %u > n %u", i, f->first_row, f->n);
    if (s->capture)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT,
                         "stream %u: its session captures attention; feed it alone (txlm_session_feed)", i);
    if (f->logprobs && f->targets)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "stream %u: logprobs and targets both given (one or the other)", i);
    if (f->targets && !f->target_logprobs)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "stream %u: targets without target_logprobs", i);
    txlm_out_req req = {.first_row = f->first_row, .targets = f->targets};
    int rc = txlm_check_segment(s, f->tokens, f->n, &req, err);
    if (rc) txlm_fail_prefix(err, "stream %u: ", i);
    return rc;
}

int txlm_batch_check_sessions(const txlm_batch *b, txlm_session *const *s, uint32_t n, txlm_err *err)
{
    if (n == 0 || n > b->max_streams)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%u streams: the batch takes 1..%u", n, b->max_streams);
    for (uint32_t i = 0; i < n; i++) {
        if (!s[i]) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "stream %u: NULL session", i);
        if (s[i]->m != b->m)
            return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "stream %u: its session is of another model than the batch's", i);
        for (uint32_t j = 0; j < i; j++)
            if (s[j] == s[i]) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "streams %u and %u are the same session", j, i);
    }
    return 0;
}

int txlm_batch_check(const txlm_batch *b, const txlm_stream_feed *f, uint32_t n, txlm_err *err)
{
    for (uint32_t i = 0; i < n; i++) {
        int rc = check_feed(b, &f[i], i, err);
        if (rc) return rc;
    }
    return 0;
}
