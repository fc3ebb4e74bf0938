/* Session set-up: settings from the options and the model, the device
 * buffers sized for the longest segment, and the sinusoid table. */
#include "session.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inv_freq.h"
#include "nonfinite.h"

static int alloc_buf(txlm_session *s, txlm_buf *b, uint64_t elems, txlm_buf_kind kind, const char *what, txlm_err *err)
{
    txlm_vk *vk = &s->m->ctx->vk;
    uint64_t bytes = elems * 4;
    if (elems > (UINT64_MAX / 8) || bytes > vk->max_storage_range)
        return txlm_fail(err, TXLM_ERR_LIMIT,
                         "session buffer '%s' needs %llu bytes, more than one binding allows (%llu); "
                         "use a shorter segment or memory",
                         what, (unsigned long long)bytes, (unsigned long long)vk->max_storage_range);
    int rc = txlm_buf_create(vk, bytes, kind, b, err);
    if (rc) txlm_fail_prefix(err, "session buffer '%s': ", what);
    return rc;
}

/* Sinusoids exactly as the reference computes them in float32:
 * inv_freq = 1 / 10000^(2k/d), or the model's stored frequencies,
 * row p = [sin(p * inv_freq), cos(p * inv_freq)]. */
static int upload_positions(txlm_session *s, txlm_err *err)
{
    uint32_t d = s->m->h.d_model, ld = s->m->dev.d, rows = s->max_dist + 1;
    int rc = txlm_tensor_alloc(&s->m->ctx->vk, rows, ld, TXLM_DT_F32, TXLM_BUF_DEVICE, &s->pos, err);
    if (rc) return rc;
    float *t = calloc((size_t)rows * ld, sizeof *t); /* padding columns: zeros */
    if (!t) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    for (uint32_t k = 0; k < d / 2; k++) {
        float inv_freq = s->m->inv_freq ? s->m->inv_freq[k] : txlm_inv_freq_std(k, d);
        for (uint32_t p = 0; p < rows; p++) {
            float arg = (float)p * inv_freq;
            t[(size_t)p * ld + k] = sinf(arg);
            t[(size_t)p * ld + d / 2 + k] = cosf(arg);
        }
    }
    rc = txlm_buf_upload(&s->m->ctx->vk, &s->pos.buf, 0, t, (VkDeviceSize)rows * ld * 4, err);
    free(t);
    return rc;
}

static int alloc_all(txlm_session *s, txlm_err *err)
{
    const txlm_hparams *h = &s->m->h;
    txlm_vk *vk = &s->m->ctx->vk;
    const txlm_dims *dv = &s->m->dev;
    uint64_t M = s->mem_len, S = s->max_seg, K = M + S, d = dv->d, hd = (uint64_t)h->n_head * dv->dh;
    uint32_t max_dim = 0, max_cluster = 0;
    for (uint32_t c = 0; c < txlm_n_clusters(h); c++) {
        uint32_t dim = txlm_cluster_dim(h, c), n = txlm_cluster_end(h, c) - txlm_cluster_begin(h, c);
        if (dim > max_dim) max_dim = dim;
        if (n > max_cluster) max_cluster = n;
    }
    uint32_t head_n = h->n_cutoffs ? h->cutoffs[0] + h->n_cutoffs : h->n_token;

    /* Output rows per block: everything of the adaptive softmax must fit one binding. */
    uint64_t widest = h->n_token > txlm_logit_ld(max_cluster) ? h->n_token : txlm_logit_ld(max_cluster);
    uint64_t fit = vk->split_bytes / (widest * 4);
    s->out_rows = (uint32_t)(fit < S ? fit : S);
    if (s->out_rows == 0)
        return txlm_fail(err, TXLM_ERR_LIMIT, "one row of %llu log-probabilities exceeds the device's binding range",
                         (unsigned long long)widest);

    int rc = 0;
#define ALLOC(buf, elems, kind) \
    if (!rc) rc = alloc_buf(s, &s->buf, (elems), kind, #buf, err)
    ALLOC(ids, S, TXLM_BUF_STAGING);
    ALLOC(replay.step_host, 4, TXLM_BUF_STAGING);
    ALLOC(replay.step, 4, TXLM_BUF_DEVICE);
    ALLOC(targets, S, TXLM_BUF_STAGING);
    ALLOC(rowmap, S, TXLM_BUF_STAGING);
    ALLOC(kv_seg, S * 2 * hd, TXLM_BUF_DEVICE);
    ALLOC(hidden[0], S * d, TXLM_BUF_DEVICE);
    ALLOC(hidden[1], S * d, TXLM_BUF_DEVICE);
    ALLOC(z, S * d, TXLM_BUF_DEVICE);
    ALLOC(xn, S * d, TXLM_BUF_DEVICE);
    ALLOC(q, S * hd, TXLM_BUF_DEVICE);
    /* the scores, or the partial sums of the split attention for up to 4 queries */
    txlm_attn_shape few = {.qlen = S < 4 ? (uint32_t)S : 4, .mlen = (uint32_t)M, .H = h->n_head, .dh = dv->dh};
    uint64_t split = txlm_attn_split_bytes(&few) / 4;
    ALLOC(scores, h->n_head * S * K > split ? h->n_head * S * K : split, TXLM_BUF_DEVICE);
    ALLOC(attn, S * hd, TXLM_BUF_DEVICE);
    ALLOC(a, S * d, TXLM_BUF_DEVICE);
    ALLOC(ffin, S * d, TXLM_BUF_DEVICE);
    ALLOC(ffh, S * dv->di, TXLM_BUF_DEVICE);
    ALLOC(emb_tmp, S * max_dim, TXLM_BUF_DEVICE);
    ALLOC(zsel, (uint64_t)s->out_rows * d, TXLM_BUF_DEVICE);
    ALLOC(zp, (uint64_t)s->out_rows * max_dim, TXLM_BUF_DEVICE);
    ALLOC(head, (uint64_t)s->out_rows * txlm_logit_ld(head_n), TXLM_BUF_DEVICE);
    ALLOC(head_lp, (uint64_t)s->out_rows * txlm_logit_ld(head_n), TXLM_BUF_DEVICE);
    ALLOC(tail, (uint64_t)s->out_rows * txlm_logit_ld(max_cluster), TXLM_BUF_DEVICE);
    ALLOC(out, (uint64_t)s->out_rows * h->n_token, TXLM_BUF_READBACK);
#undef ALLOC
    if (rc) return rc;

    /* A ring of M + S rows holds the memory and a longest segment after
     * it wherever the memory starts: the memory slides by moving kv_base,
     * and its rows never move (forward.c). */
    s->kv_rows = (uint32_t)K;
    s->kv = calloc(h->n_layer, sizeof *s->kv);
    s->rk = calloc(h->n_layer, sizeof *s->rk);
    if (!s->kv || !s->rk) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    for (uint32_t n = 0; n < h->n_layer && !rc; n++) {
        rc = alloc_buf(s, &s->kv[n], (uint64_t)s->kv_rows * 2 * hd, TXLM_BUF_DEVICE, "layer memory (keys and values)", err);
        if (!rc) rc = txlm_tensor_alloc(vk, s->max_dist + 1, (uint32_t)hd, TXLM_DT_F32, TXLM_BUF_DEVICE, &s->rk[n], err);
        if (!rc && s->rk[n].buf.size > vk->max_storage_range)
            rc = txlm_fail(err, TXLM_ERR_LIMIT, "position keys for %u distances exceed one binding; lower clamp_len or mem_len",
                           s->max_dist + 1);
    }
    if (!rc) rc = alloc_buf(s, &s->sync, TXLM_SYNC_WORDS, TXLM_BUF_DEVICE, "workgroup counts", err);
    if (!rc) rc = upload_positions(s, err);
    return rc;
}

int txlm_session_open(txlm_model *m, const txlm_session_options *opts, txlm_session **out, txlm_err *err)
{
    *out = NULL;
    const txlm_hparams *h = &m->h;
    txlm_session *s = calloc(1, sizeof *s);
    if (!s) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    s->m = m;
    s->mem_len = opts && opts->mem_len ? opts->mem_len : h->mem_len;
    s->clamp_len = opts && opts->clamp_len ? opts->clamp_len : h->clamp_len;
    s->same_length = opts && opts->same_length >= 0 ? (opts->same_length != 0) : h->same_length;
    s->zero_memory = opts && opts->zero_memory;
    s->max_seg = opts && opts->max_segment ? opts->max_segment : (h->tgt_len > 512 ? h->tgt_len : 512);
    int rc = 0;
    if (s->mem_len > (1u << 20) || s->max_seg > (1u << 20))
        rc = txlm_fail(err, TXLM_ERR_LIMIT, "mem_len %u / segment length %u exceed 2^20", s->mem_len, s->max_seg);
    uint32_t longest = s->mem_len + s->max_seg - 1;
    s->max_dist = s->clamp_len > 0 && (uint32_t)s->clamp_len < longest ? (uint32_t)s->clamp_len : longest;

    if (!rc) rc = alloc_all(s, err);
    if (!rc && !(s->host_lp = malloc((size_t)h->n_token * sizeof *s->host_lp)))
        rc = txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    /* Every dispatch of a segment gets its own descriptor set. */
    uint32_t max_sets = 64 + h->n_layer * 16 + 8 * txlm_n_clusters(h) * 4;
    if (!rc) rc = txlm_rec_init(&s->rec, &m->ctx->vk, &m->ctx->kernels, max_sets, txlm_view_of(&s->replay.step), err);
    if (rc) {
        txlm_session_close(s);
        return rc;
    }
    s->ops.rec = &s->rec;
    s->ops.dummy = txlm_view_of(&m->ctx->dummy);
    s->ops.sync = txlm_view_of(&s->sync);
    *out = s;
    return 0;
}

size_t txlm_session_fixed_bufs(txlm_session *s, txlm_buf **out)
{
    txlm_buf *bufs[TXLM_SESSION_FIXED_BUFS] = {&s->ids, &s->replay.step_host, &s->replay.step, &s->targets, &s->rowmap, &s->kv_seg, &s->sync, &s->hidden[0], &s->hidden[1], &s->z, &s->xn, &s->q, &s->scores, &s->attn, &s->a, &s->ffin,
                        &s->ffh, &s->emb_tmp, &s->zsel, &s->zp, &s->head, &s->head_lp, &s->tail, &s->out};
    memcpy(out, bufs, sizeof bufs);
    return TXLM_SESSION_FIXED_BUFS;
}

void txlm_session_close(txlm_session *s)
{
    if (!s) return;
    txlm_vk *vk = &s->m->ctx->vk;
    txlm_rec_destroy(&s->rec);
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
        rc = alloc_buf(s, &s->cap_probs[n], plane, TXLM_BUF_READBACK, "attention capture", err);
        if (!rc && mode > 1) rc = alloc_buf(s, &s->cap_terms[n], 4 * plane, TXLM_BUF_READBACK, "attention terms capture", err);
    }
    if (rc) {
        free_capture(s);
        return rc;
    }
    s->capture = mode;
    return 0;
}
