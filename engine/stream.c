/* A stream (stream.h): its settings, its memory on the device, and how
 * its state moves on as segments are fed. */
#include "stream.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "attention.h"
#include "inv_freq.h"
#include "nonfinite.h"
#include "workspace.h"

int txlm_stream_settle(txlm_session *s, txlm_model *m, const txlm_session_options *opts, txlm_err *err)
{
    const txlm_hparams *h = &m->h;
    s->m = m;
    s->mem_len = opts && opts->mem_len ? opts->mem_len : h->mem_len;
    s->clamp_len = opts && opts->clamp_len ? opts->clamp_len : h->clamp_len;
    s->same_length = opts && opts->same_length >= 0 ? (opts->same_length != 0) : h->same_length;
    /* 0 takes the model's default (HPRM 1.2, docs/format.md), -1 is off */
    s->zero_memory = opts && opts->zero_memory ? opts->zero_memory > 0 : h->zero_memory != 0;
    s->max_seg = opts && opts->max_segment ? opts->max_segment : (h->tgt_len > 512 ? h->tgt_len : 512);
    if (s->mem_len > (1u << 20) || s->max_seg > (1u << 20))
        return txlm_fail(err, TXLM_ERR_LIMIT, "mem_len %u / segment length %u exceed 2^20", s->mem_len, s->max_seg);
    uint32_t longest = s->mem_len + s->max_seg - 1;
    s->max_dist = s->clamp_len > 0 && (uint32_t)s->clamp_len < longest ? (uint32_t)s->clamp_len : longest;
    s->kv_rows = s->mem_len + s->max_seg;
    s->scratch = txlm_stream_scratch(s);
    return 0;
}

uint64_t txlm_stream_scratch(const txlm_session *s)
{
    const txlm_hparams *h = &s->m->h;
    uint64_t M = s->mem_len, S = s->max_seg;
    txlm_attn_shape few = {.qlen = S < 4 ? (uint32_t)S : 4, .mlen = (uint32_t)M, .H = h->n_head, .dh = s->m->dev.dh};
    uint64_t split = txlm_attn_split_bytes(&few), scores = 4 * h->n_head * S * (M + S);
    return scores > split ? scores : split;
}

uint64_t txlm_stream_ring_bytes(const txlm_session *s)
{
    const txlm_hparams *h = &s->m->h;
    uint64_t hd = (uint64_t)h->n_head * s->m->dev.dh;
    uint64_t per_layer = (uint64_t)s->kv_rows * 2 * hd + (uint64_t)(s->max_dist + 1) * hd;
    return 4 * (per_layer * h->n_layer + (uint64_t)(s->max_dist + 1) * s->m->dev.d);
}

uint64_t txlm_stream_rest_bytes(const txlm_session *s) { return 4 * (uint64_t)s->m->dev.d; }

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

/* A ring of M + S rows per layer holds the memory and a longest segment
 * after it wherever the memory starts: the memory slides by moving
 * kv_base, and its rows never move. Position keys per layer. */
static int alloc_memory(txlm_session *s, txlm_err *err)
{
    const txlm_hparams *h = &s->m->h;
    txlm_vk *vk = &s->m->ctx->vk;
    uint64_t hd = (uint64_t)h->n_head * s->m->dev.dh;
    s->kv = calloc(h->n_layer, sizeof *s->kv);
    s->rk = calloc(h->n_layer, sizeof *s->rk);
    if (!s->kv || !s->rk) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    int rc = txlm_buf_binding(vk, &s->last, s->m->dev.d, TXLM_BUF_DEVICE, "last row", err);
    for (uint32_t n = 0; n < h->n_layer && !rc; n++) {
        rc = txlm_buf_binding(vk, &s->kv[n], (uint64_t)s->kv_rows * 2 * hd, TXLM_BUF_DEVICE, "layer memory (keys and values)",
                              err);
        if (!rc) rc = txlm_tensor_alloc(vk, s->max_dist + 1, (uint32_t)hd, TXLM_DT_F32, TXLM_BUF_DEVICE, &s->rk[n], err);
        if (!rc && s->rk[n].buf.size > vk->max_storage_range)
            rc = txlm_fail(err, TXLM_ERR_LIMIT, "position keys for %u distances exceed one binding; lower clamp_len or mem_len",
                           s->max_dist + 1);
    }
    return rc ? rc : upload_positions(s, err);
}

int txlm_stream_open(txlm_model *m, const txlm_session_options *opts, txlm_session **out, txlm_err *err)
{
    static _Atomic uint64_t serials;
    *out = NULL;
    txlm_session *s = calloc(1, sizeof *s);
    if (!s) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    s->serial = ++serials;
    int rc = txlm_stream_settle(s, m, opts, err);
    if (!rc) rc = alloc_memory(s, err);
    if (rc) txlm_stream_close(s); /* what was made so far */
    else *out = s;
    return rc;
}

void txlm_stream_close(txlm_session *s)
{
    if (!s) return;
    txlm_vk *vk = &s->m->ctx->vk;
    txlm_workspace_close(s->own);
    for (uint32_t n = 0; s->kv && n < s->m->h.n_layer; n++)
        if (s->kv[n].buf) txlm_buf_destroy(vk, &s->kv[n]);
    for (uint32_t n = 0; s->rk && n < s->m->h.n_layer; n++) txlm_tensor_free(vk, &s->rk[n]);
    if (s->last.buf) txlm_buf_destroy(vk, &s->last);
    if (s->next_vk.buf) txlm_buf_destroy(vk, &s->next_vk);
    txlm_tensor_free(vk, &s->pos);
    txlm_session_set_capture(s, 0, NULL);
    free(s->kv);
    free(s->rk);
    free(s);
}

void txlm_session_forget(txlm_session *s, int failed)
{
    s->mlen = 0;
    s->kv_base = 0;
    s->z_rows = 0;
    s->cap_qlen = 0; /* nor show a half-computed attention */
    if (failed) s->rk_rows = 0; /* recomputed, the same bits (TXLM_LIN_BLOCK) */
    else s->segments = 0;
}

/* What a fed segment leaves behind, recorded or replayed: the shape its
 * attention capture has, the memory for the next one (the keys and values
 * of the last mem_len rows of every layer, which stay where they are in
 * the ring while kv_base moves on), the rows of its output. */
void txlm_stream_fed(txlm_session *s, uint32_t qlen)
{
    s->segments++;
    s->cap_qlen = qlen;
    s->cap_mlen = s->mlen;
    s->z_rows = qlen;
    uint32_t klen = s->mlen + qlen;
    if (klen <= s->mem_len) {
        s->mlen = klen;
        return;
    }
    /* nothing kept: the next segment starts at row 0 and does not wrap */
    s->kv_base = s->mem_len ? (s->kv_base + klen - s->mem_len) % s->kv_rows : 0;
    s->mlen = s->mem_len;
}

txlm_attn_shape txlm_stream_shape(const txlm_session *s, uint32_t qlen)
{
    const txlm_hparams *h = &s->m->h;
    return (txlm_attn_shape){
        .qlen = qlen, .mlen = s->mlen, .H = h->n_head, .dh = s->m->dev.dh, .dh_real = h->d_head,
        .clamp_max = s->max_dist, .same_length = s->same_length,
        .mem_len = s->mem_len + h->same_length_rule, /* NVIDIA's rule: one key more (hparams.h) */
        .kv_rows = s->kv_rows, .kv_row0 = s->kv_base,
        /* an f32 model's attention stays in f32; others may multiply in f16 on the matrix units */
        .f16 = s->m->layers[0].qkv->dtype != TXLM_DT_F32,
    };
}

int txlm_check_segment(const txlm_session *s, const int32_t *tokens, uint32_t qlen, uint32_t first_row,
                       const int32_t *targets, txlm_err *err)
{
    uint32_t V = s->m->h.n_token;
    if (qlen == 0 || qlen > s->max_seg)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "segment of %u tokens: must be 1..%u", qlen, s->max_seg);
    for (uint32_t i = 0; i < qlen; i++)
        if (tokens[i] < 0 || (uint32_t)tokens[i] >= V)
            return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "token %d at position %u is outside the vocabulary [0, %u)",
                             tokens[i], i, V);
    for (uint32_t i = first_row; targets && i < qlen; i++)
        if (targets[i - first_row] < 0 || (uint32_t)targets[i - first_row] >= V)
            return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "target %d at position %u is outside the vocabulary [0, %u)",
                             targets[i - first_row], i, V);
    return 0;
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
    txlm_vk *vk = &s->m->ctx->vk;
    uint64_t plane = (uint64_t)h->n_head * s->max_seg * (s->mem_len + s->max_seg);
    s->cap_probs = calloc(h->n_layer, sizeof *s->cap_probs);
    s->cap_terms = calloc(h->n_layer, sizeof *s->cap_terms);
    int rc = s->cap_probs && s->cap_terms ? 0 : txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    for (uint32_t n = 0; n < h->n_layer && !rc; n++) {
        rc = txlm_buf_binding(vk, &s->cap_probs[n], plane, TXLM_BUF_READBACK, "attention capture", err);
        if (!rc && mode > 1)
            rc = txlm_buf_binding(vk, &s->cap_terms[n], 4 * plane, TXLM_BUF_READBACK, "attention terms capture", err);
    }
    if (rc) {
        free_capture(s);
        return rc;
    }
    s->capture = mode;
    return 0;
}
