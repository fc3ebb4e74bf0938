/* What a session allocates: its settings from the options and the model,
 * then every device buffer it holds with its size, in one table. The same
 * table allocates a session, sizes a batch's shared rows (a session with
 * no memory of its own) and plans a batch without allocating. */
#include "session_layout.h"

#include <math.h>
#include <stdlib.h>

#include "attn_streams.h"
#include "inv_freq.h"

static void widest_cluster(const txlm_hparams *h, uint32_t *max_dim, uint32_t *max_cluster)
{
    *max_dim = *max_cluster = 0;
    for (uint32_t c = 0; c < txlm_n_clusters(h); c++) {
        uint32_t dim = txlm_cluster_dim(h, c), n = txlm_cluster_end(h, c) - txlm_cluster_begin(h, c);
        if (dim > *max_dim) *max_dim = dim;
        if (n > *max_cluster) *max_cluster = n;
    }
}

int txlm_session_settle(txlm_session *s, txlm_model *m, const txlm_session_options *opts, txlm_err *err)
{
    const txlm_hparams *h = &m->h;
    s->m = m;
    s->mem_len = opts && opts->mem_len ? opts->mem_len : h->mem_len;
    s->clamp_len = opts && opts->clamp_len ? opts->clamp_len : h->clamp_len;
    s->same_length = opts && opts->same_length >= 0 ? (opts->same_length != 0) : h->same_length;
    s->zero_memory = opts && opts->zero_memory;
    s->max_seg = opts && opts->max_segment ? opts->max_segment : (h->tgt_len > 512 ? h->tgt_len : 512);
    if (s->mem_len > (1u << 20) || s->max_seg > (1u << 20))
        return txlm_fail(err, TXLM_ERR_LIMIT, "mem_len %u / segment length %u exceed 2^20", s->mem_len, s->max_seg);
    uint32_t longest = s->mem_len + s->max_seg - 1;
    s->max_dist = s->clamp_len > 0 && (uint32_t)s->clamp_len < longest ? (uint32_t)s->clamp_len : longest;
    s->kv_rows = s->mem_len + s->max_seg;

    /* Output rows per block: everything of the adaptive softmax must fit one binding. */
    uint32_t max_dim, max_cluster;
    widest_cluster(h, &max_dim, &max_cluster);
    uint64_t widest = h->n_token > txlm_logit_ld(max_cluster) ? h->n_token : txlm_logit_ld(max_cluster);
    uint64_t fit = m->ctx->vk.split_bytes / (widest * 4);
    s->out_rows = (uint32_t)(fit < s->max_seg ? fit : s->max_seg);
    if (s->out_rows == 0)
        return txlm_fail(err, TXLM_ERR_LIMIT, "one row of %llu log-probabilities exceeds the device's binding range",
                         (unsigned long long)widest);
    return 0;
}

/* The scores, or the partial sums of the split attention for up to 4
 * queries, whichever is more. */
uint64_t txlm_session_scores_bytes(const txlm_session *s)
{
    const txlm_hparams *h = &s->m->h;
    uint64_t M = s->mem_len, S = s->max_seg;
    txlm_attn_shape few = {.qlen = S < 4 ? (uint32_t)S : 4, .mlen = (uint32_t)M, .H = h->n_head, .dh = s->m->dev.dh};
    uint64_t split = txlm_attn_split_bytes(&few), scores = 4 * h->n_head * S * (M + S);
    return scores > split ? scores : split;
}

size_t txlm_session_bufs(txlm_session *s, txlm_buf_spec *out)
{
    const txlm_hparams *h = &s->m->h;
    const txlm_dims *dv = &s->m->dev;
    uint64_t S = s->max_seg, d = dv->d, hd = (uint64_t)h->n_head * dv->dh, R = s->out_rows;
    uint32_t max_dim, max_cluster, head_ld = txlm_logit_ld(h->n_cutoffs ? h->cutoffs[0] + h->n_cutoffs : h->n_token);
    widest_cluster(h, &max_dim, &max_cluster);
    /* a batch's shared rows: the partial sums of one dispatch of several
     * streams' attention, the step values and the streams' entries */
    uint64_t scores = (s->rows_only ? s->attn_scratch : txlm_session_scores_bytes(s)) / 4;
    uint64_t step = s->rows_only ? TXLM_ENTRY_TABLE + (uint64_t)s->streams * TXLM_ENTRY_WORDS : 4;
    const txlm_buf_kind DEV = TXLM_BUF_DEVICE, STAGE = TXLM_BUF_STAGING;
    txlm_buf_spec t[TXLM_SESSION_FIXED_BUFS] = {
        {&s->ids, S, STAGE, "ids", 0},
        {&s->replay.step_host, step, STAGE, "replay.step_host", 0},
        {&s->replay.step, step, DEV, "replay.step", 0},
        {&s->targets, S, STAGE, "targets", 0},
        {&s->rowmap, S, STAGE, "rowmap", 0},
        {&s->kv_seg, S * 2 * hd, DEV, "kv_seg", 0},
        {&s->sync, TXLM_SYNC_WORDS, DEV, "workgroup counts", 0},
        {&s->hidden[0], S * d, DEV, "hidden[0]", 0},
        {&s->hidden[1], S * d, DEV, "hidden[1]", 0},
        {&s->z, S * d, DEV, "z", 0},
        {&s->xn, S * d, DEV, "xn", 0},
        {&s->q, S * hd, DEV, "q", 0},
        {&s->scores, scores, DEV, "scores", 0},
        {&s->attn, S * hd, DEV, "attn", 0},
        {&s->a, S * d, DEV, "a", 0},
        {&s->ffin, S * d, DEV, "ffin", 0},
        {&s->ffh, S * dv->di, DEV, "ffh", 0},
        {&s->emb_tmp, S * max_dim, DEV, "emb_tmp", 0},
        {&s->zsel, R * d, DEV, "zsel", 1},
        {&s->zp, R * max_dim, DEV, "zp", 1},
        {&s->head, R * head_ld, DEV, "head", 1},
        {&s->head_lp, R * head_ld, DEV, "head_lp", 1},
        {&s->tail, R * txlm_logit_ld(max_cluster), DEV, "tail", 1},
        {&s->out, R * h->n_token, TXLM_BUF_READBACK, "out", 1},
    };
    for (size_t i = 0; i < TXLM_SESSION_FIXED_BUFS; i++) out[i] = t[i];
    return TXLM_SESSION_FIXED_BUFS;
}

uint64_t txlm_session_ring_bytes(const txlm_session *s)
{
    const txlm_hparams *h = &s->m->h;
    uint64_t hd = (uint64_t)h->n_head * s->m->dev.dh;
    uint64_t per_layer = (uint64_t)s->kv_rows * 2 * hd + (uint64_t)(s->max_dist + 1) * hd;
    return 4 * (per_layer * h->n_layer + (uint64_t)(s->max_dist + 1) * s->m->dev.d);
}

uint64_t txlm_session_fixed_bytes(txlm_session *s, int with_output)
{
    txlm_buf_spec t[TXLM_SESSION_FIXED_BUFS];
    uint64_t sum = 0;
    for (size_t i = 0, n = txlm_session_bufs(s, t); i < n; i++)
        if (with_output || !t[i].output) sum += 4 * t[i].elems;
    return sum;
}

static int alloc_buf(txlm_session *s, const txlm_buf_spec *b, txlm_err *err)
{
    txlm_vk *vk = &s->m->ctx->vk;
    uint64_t bytes = b->elems * 4;
    if (b->elems > (UINT64_MAX / 8) || bytes > vk->max_storage_range)
        return txlm_fail(err, TXLM_ERR_LIMIT,
                         "session buffer '%s' needs %llu bytes, more than one binding allows (%llu); "
                         "use a shorter segment or memory",
                         b->what, (unsigned long long)bytes, (unsigned long long)vk->max_storage_range);
    int rc = txlm_buf_create(vk, bytes, b->kind, b->buf, err);
    if (rc) txlm_fail_prefix(err, "session buffer '%s': ", b->what);
    return rc;
}

int txlm_session_alloc_buf(txlm_session *s, txlm_buf *b, uint64_t elems, txlm_buf_kind kind, const char *what, txlm_err *err)
{
    return alloc_buf(s, &(txlm_buf_spec){b, elems, kind, what, 0}, err);
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

/* A ring of M + S rows per layer holds the memory and a longest segment
 * after it wherever the memory starts: the memory slides by moving
 * kv_base, and its rows never move (forward.c). Position keys per layer. */
static int alloc_memory(txlm_session *s, txlm_err *err)
{
    const txlm_hparams *h = &s->m->h;
    txlm_vk *vk = &s->m->ctx->vk;
    uint64_t hd = (uint64_t)h->n_head * s->m->dev.dh;
    s->kv = calloc(h->n_layer, sizeof *s->kv);
    s->rk = calloc(h->n_layer, sizeof *s->rk);
    if (!s->kv || !s->rk) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    int rc = 0;
    for (uint32_t n = 0; n < h->n_layer && !rc; n++) {
        rc = alloc_buf(s, &(txlm_buf_spec){&s->kv[n], (uint64_t)s->kv_rows * 2 * hd, TXLM_BUF_DEVICE,
                                           "layer memory (keys and values)", 0}, err);
        if (!rc) rc = txlm_tensor_alloc(vk, s->max_dist + 1, (uint32_t)hd, TXLM_DT_F32, TXLM_BUF_DEVICE, &s->rk[n], err);
        if (!rc && s->rk[n].buf.size > vk->max_storage_range)
            rc = txlm_fail(err, TXLM_ERR_LIMIT, "position keys for %u distances exceed one binding; lower clamp_len or mem_len",
                           s->max_dist + 1);
    }
    return rc ? rc : upload_positions(s, err);
}

int txlm_session_alloc(txlm_session *s, txlm_err *err)
{
    txlm_buf_spec t[TXLM_SESSION_FIXED_BUFS];
    int rc = 0;
    for (size_t i = 0, n = txlm_session_bufs(s, t); i < n && !rc; i++)
        if (t[i].elems && (s->rows_only || !t[i].output)) rc = alloc_buf(s, &t[i], err);
    return rc || s->rows_only ? rc : alloc_memory(s, err);
}

/* A session that only ever runs in batches (whose shared rows compute
 * the output) never needs these: up to hundreds of MB with a large
 * vocabulary and long segments. */
int txlm_session_need_out(txlm_session *s, txlm_err *err)
{
    txlm_buf_spec t[TXLM_SESSION_FIXED_BUFS];
    int rc = 0;
    for (size_t i = 0, n = txlm_session_bufs(s, t); i < n && !rc; i++)
        if (t[i].output && !t[i].buf->buf) rc = alloc_buf(s, &t[i], err);
    return rc;
}
