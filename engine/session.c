/* Session set-up: settings from the options and the model, the device
 * buffers sized for the longest segment, and the sinusoid table. */
#include "session.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_layout.h"
#include "nonfinite.h"

/* Opens s (settled) with its buffers and recorder. */
static int open_settled(txlm_session *s, txlm_err *err)
{
    const txlm_hparams *h = &s->m->h;
    int rc = txlm_session_alloc(s, err);
    if (!rc && !(s->host_lp = malloc((size_t)h->n_token * sizeof *s->host_lp)))
        rc = txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    if (!rc) rc = txlm_rec_init(&s->rec, &s->m->ctx->vk, &s->m->ctx->kernels, txlm_view_of(&s->replay.step), err);
    if (rc) return rc;
    s->ops.rec = &s->rec;
    s->ops.dummy = txlm_view_of(&s->m->ctx->dummy);
    s->ops.sync = txlm_view_of(&s->sync);
    return 0;
}

/* A session settled from opts, with a recorder for `streams` streams. */
static int open_session(txlm_model *m, const txlm_session_options *opts, int rows_only, uint32_t streams,
                        uint64_t attn_scratch, txlm_session **out, txlm_err *err)
{
    static _Atomic uint64_t serials;
    *out = NULL;
    txlm_session *s = calloc(1, sizeof *s);
    if (!s) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    s->rows_only = (uint32_t)rows_only;
    s->streams = streams;
    s->attn_scratch = attn_scratch;
    s->serial = ++serials;
    int rc = txlm_session_settle(s, m, opts, err);
    if (!rc) rc = open_settled(s, err);
    if (rc) {
        txlm_session_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

int txlm_session_open(txlm_model *m, const txlm_session_options *opts, txlm_session **out, txlm_err *err)
{
    return open_session(m, opts, 0, 1, 0, out, err);
}

int txlm_session_open_rows(txlm_model *m, uint32_t rows, uint32_t streams, uint64_t attn_scratch, txlm_session **out,
                           txlm_err *err)
{
    txlm_session_options o = txlm_rows_options(rows);
    return open_session(m, &o, 1, streams, attn_scratch, out, err);
}

size_t txlm_session_fixed_bufs(txlm_session *s, txlm_buf **out)
{
    txlm_buf_spec t[TXLM_SESSION_FIXED_BUFS];
    size_t n = txlm_session_bufs(s, t);
    for (size_t i = 0; i < n; i++) out[i] = t[i].buf;
    return n;
}

void txlm_session_close(txlm_session *s)
{
    if (!s) return;
    txlm_vk *vk = &s->m->ctx->vk;
    txlm_rec_destroy(&s->rec);
    txlm_replay_free(&s->replay);
    txlm_buf *bufs[TXLM_SESSION_FIXED_BUFS];
    for (size_t i = 0, n = txlm_session_fixed_bufs(s, bufs); i < n; i++)
        if (bufs[i]->buf) txlm_buf_destroy(vk, bufs[i]);
    for (uint32_t n = 0; s->kv && n < s->m->h.n_layer; n++)
        if (s->kv[n].buf) txlm_buf_destroy(vk, &s->kv[n]);
    for (uint32_t n = 0; s->rk && n < s->m->h.n_layer; n++) txlm_tensor_free(vk, &s->rk[n]);
    txlm_tensor_free(vk, &s->pos);
    txlm_session_set_capture(s, 0, NULL);
    free(s->kv);
    free(s->rk);
    free(s->host_lp);
    free(s);
}

int txlm_session_submit(txlm_session *s, txlm_err *err)
{
    /* txlm_vk_submit_wait serialises on the context's queue. */
    return txlm_rec_submit(&s->rec, err);
}

int txlm_session_read_out(txlm_session *s, float *dst, size_t n, txlm_err *err)
{
    int rc = txlm_buf_invalidate(&s->m->ctx->vk, &s->out, err);
    if (!rc) memcpy(dst, s->out.map, n * sizeof(float));
    return rc;
}

int txlm_session_check_finite(const txlm_session *s, const float *lp, uint64_t n, uint32_t r0, uint32_t rows,
                              uint32_t first_id, const int32_t *targets, txlm_err *err)
{
    uint64_t i = txlm_first_nonfinite(lp, n);
    if (i == n) return 0;
    uint64_t per_row = n / rows, token = targets ? (uint64_t)targets[i] : first_id + i % per_row;
    char what[32];
    snprintf(what, sizeof what, "token %llu", (unsigned long long)token);
    return txlm_session_nonfinite(s, r0 + i / per_row, what, lp[i], err);
}

int txlm_session_nonfinite(const txlm_session *s, uint64_t position, const char *what, float v, txlm_err *err)
{
    return txlm_fail(err, TXLM_ERR_NONFINITE,
                     "segment %llu, position %llu: the log-probability of %s is %s (the model computes NaN or infinity: "
                     "its weights may hold non-finite or huge values, see txlm info --check)",
                     (unsigned long long)(s->segments ? s->segments - 1 : 0), (unsigned long long)position, what,
                     txlm_nonfinite_name(v));
}

static void free_capture(txlm_session *s)
{
    for (uint32_t n = 0; n < s->m->h.n_layer; n++) {
        if (s->cap_probs && s->cap_probs[n].buf) txlm_buf_destroy(&s->m->ctx->vk, &s->cap_probs[n]);
        if (s->cap_terms && s->cap_terms[n].buf) txlm_buf_destroy(&s->m->ctx->vk, &s->cap_terms[n]);
    }
    free(s->cap_probs);
    free(s->cap_terms);
    s->cap_probs = s->cap_terms = NULL;
    s->capture = 0;
    s->cap_qlen = 0;
}

int txlm_session_set_capture(txlm_session *s, int mode, txlm_err *err)
{
    free_capture(s);
    if (mode <= 0) return 0;
    const txlm_hparams *h = &s->m->h;
    uint64_t plane = (uint64_t)h->n_head * s->max_seg * (s->mem_len + s->max_seg);
    s->cap_probs = calloc(h->n_layer, sizeof *s->cap_probs);
    s->cap_terms = calloc(h->n_layer, sizeof *s->cap_terms);
    int rc = s->cap_probs && s->cap_terms ? 0 : txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    for (uint32_t n = 0; n < h->n_layer && !rc; n++) {
        rc = txlm_session_alloc_buf(s, &s->cap_probs[n], plane, TXLM_BUF_READBACK, "attention capture", err);
        if (!rc && mode > 1) rc = txlm_session_alloc_buf(s, &s->cap_terms[n], 4 * plane, TXLM_BUF_READBACK, "attention terms capture", err);
    }
    if (rc) {
        free_capture(s);
        return rc;
    }
    s->capture = mode;
    return 0;
}
