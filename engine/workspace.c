/* A workspace (workspace.h): its sizes from the streams it serves, and
 * every device buffer it holds, in one table that allocates it, frees it,
 * counts it, and plans one without allocating. */
#include "workspace.h"

#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "output.h"

static void widest_cluster(const txlm_hparams *h, uint32_t *max_dim, uint32_t *max_cluster)
{
    *max_dim = *max_cluster = 0;
    for (uint32_t c = 0; c < txlm_n_clusters(h); c++) {
        uint32_t dim = txlm_cluster_dim(h, c), n = txlm_cluster_end(h, c) - txlm_cluster_begin(h, c);
        if (dim > *max_dim) *max_dim = dim;
        if (n > *max_cluster) *max_cluster = n;
    }
}

/* The sizes of a workspace for `streams` streams settled as `like`:
 * their rows one after another, output blocks that fit one binding, and
 * the scratch of one stream's attention or of one dispatch of several
 * (as many streams as a dispatch takes, each with the most its kernel can
 * take). */
static int settle(txlm_workspace *w, txlm_model *m, const txlm_session *like, uint32_t streams, txlm_err *err)
{
    const txlm_hparams *h = &m->h;
    if (streams == 0) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "a batch needs at least one stream");
    uint64_t rows = (uint64_t)streams * like->max_seg;
    if (rows > (1u << 20))
        return txlm_fail(err, TXLM_ERR_LIMIT, "%u streams of %u-token segments: %llu rows exceed 2^20", streams,
                         like->max_seg, (unsigned long long)rows);
    *w = (txlm_workspace){.m = m, .max_streams = streams, .max_seg = like->max_seg, .rows = (uint32_t)rows};
    uint32_t max_dim, max_cluster;
    widest_cluster(h, &max_dim, &max_cluster);
    uint64_t widest = h->n_token > txlm_logit_ld(max_cluster) ? h->n_token : txlm_logit_ld(max_cluster);
    uint64_t fit = m->ctx->vk.split_bytes / (widest * 4);
    w->out_rows = (uint32_t)(fit < rows ? fit : rows);
    if (w->out_rows == 0)
        return txlm_fail(err, TXLM_ERR_LIMIT, "one row of %llu log-probabilities exceeds the device's binding range",
                         (unsigned long long)widest);
    uint64_t per = txlm_attn_scratch_most(&m->ctx->vk, h->n_head, m->dev.dh, like->mem_len, like->max_seg, like->scratch);
    uint64_t shared = per * (streams < TXLM_STREAM_SLOTS ? streams : TXLM_STREAM_SLOTS);
    w->scratch = like->scratch > shared ? like->scratch : shared;
    return 0;
}

typedef int (*buf_fn)(txlm_workspace *w, txlm_buf *b, uint64_t elems, txlm_buf_kind kind, const char *what, void *u);

/* fn on every buffer of w with its size (4-byte elements), in order. */
static int each_buf(txlm_workspace *w, buf_fn fn, void *u)
{
    const txlm_hparams *h = &w->m->h;
    const txlm_dims *dv = &w->m->dev;
    uint64_t S = w->rows, d = dv->d, hd = (uint64_t)h->n_head * dv->dh, R = w->out_rows;
    /* pre-norm: a block's input rows and, after them, the same normalised (layers.c) */
    uint64_t ln_rows = h->pre_lnorm ? 2 * S : S;
    uint64_t step = TXLM_ENTRY_TABLE + (uint64_t)w->max_streams * TXLM_ENTRY_WORDS;
    uint32_t max_dim, max_cluster, head_ld = txlm_logit_ld(h->n_cutoffs ? h->cutoffs[0] + h->n_cutoffs : h->n_token);
    widest_cluster(h, &max_dim, &max_cluster);
    const txlm_buf_kind DEV = TXLM_BUF_DEVICE, STAGE = TXLM_BUF_STAGING;
    const struct {
        txlm_buf *buf;
        uint64_t elems;
        txlm_buf_kind kind;
        const char *what;
    } t[] = {
        {&w->ids, S, STAGE, "ids"},
        {&w->targets, S, STAGE, "targets"},
        {&w->rowmap, S, STAGE, "rowmap"},
        {&w->step_host, step, STAGE, "step_host"},
        {&w->step, step, DEV, "step"},
        {&w->kv_seg, S * 2 * hd, DEV, "kv_seg"},
        {&w->sync, TXLM_SYNC_WORDS, DEV, "workgroup counts"},
        {&w->hidden[0], ln_rows * d, DEV, "hidden[0]"},
        {&w->hidden[1], ln_rows * d, DEV, "hidden[1]"},
        {&w->z, S * d, DEV, "z"},
        {&w->xn, S * d, DEV, "xn"},
        {&w->q, S * hd, DEV, "q"},
        {&w->scores, w->scratch / 4, DEV, "scores"},
        {&w->attn, S * hd, DEV, "attn"},
        {&w->a, ln_rows * d, DEV, "a"},
        {&w->ffh, S * dv->di, DEV, "ffh"},
        {&w->emb_tmp, S * max_dim, DEV, "emb_tmp"},
        {&w->zsel, R * d, DEV, "zsel"},
        {&w->zp, R * max_dim, DEV, "zp"},
        {&w->head, R * head_ld, DEV, "head"},
        {&w->head_lp, R * head_ld, DEV, "head_lp"},
        {&w->tail, R * txlm_logit_ld(max_cluster), DEV, "tail"},
        {&w->out, R * h->n_token, TXLM_BUF_READBACK, "out"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        int rc = t[i].elems ? fn(w, t[i].buf, t[i].elems, t[i].kind, t[i].what, u) : 0;
        if (rc) return rc;
    }
    return 0;
}

static int alloc_one(txlm_workspace *w, txlm_buf *b, uint64_t elems, txlm_buf_kind kind, const char *what, void *u)
{
    return txlm_buf_binding(&w->m->ctx->vk, b, elems, kind, what, u);
}

static int free_one(txlm_workspace *w, txlm_buf *b, uint64_t elems, txlm_buf_kind kind, const char *what, void *u)
{
    (void)elems, (void)kind, (void)what, (void)u;
    if (b->buf) txlm_buf_destroy(&w->m->ctx->vk, b);
    return 0;
}

static int planned(txlm_workspace *w, txlm_buf *b, uint64_t elems, txlm_buf_kind kind, const char *what, void *u)
{
    (void)w, (void)b, (void)kind, (void)what;
    *(uint64_t *)u += 4 * elems;
    return 0;
}

static int held(txlm_workspace *w, txlm_buf *b, uint64_t elems, txlm_buf_kind kind, const char *what, void *u)
{
    (void)w, (void)elems, (void)kind, (void)what;
    *(uint64_t *)u += b->buf ? b->size : 0;
    return 0;
}

int txlm_workspace_plan(txlm_model *m, const txlm_session *like, uint32_t streams, uint64_t *bytes, txlm_err *err)
{
    txlm_workspace w;
    int rc = settle(&w, m, like, streams, err);
    *bytes = 0;
    return rc ? rc : each_buf(&w, planned, bytes);
}

uint64_t txlm_workspace_bytes(const txlm_workspace *w)
{
    uint64_t n = 0;
    each_buf((txlm_workspace *)w, held, &n); /* the table takes addresses; nothing is written */
    return n;
}

int txlm_workspace_open(txlm_model *m, const txlm_session *like, uint32_t streams, txlm_workspace **out, txlm_err *err)
{
    *out = NULL;
    txlm_workspace *w = calloc(1, sizeof *w);
    if (!w) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    int rc = settle(w, m, like, streams, err);
    if (!rc) rc = each_buf(w, alloc_one, err);
    if (!rc && !(w->host_lp = malloc((size_t)m->h.n_token * sizeof *w->host_lp)))
        rc = txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    if (!rc) rc = txlm_rec_init(&w->rec, &m->ctx->vk, &m->ctx->kernels, txlm_view_of(&w->step), err);
    if (rc) {
        txlm_workspace_close(w);
        return rc;
    }
    w->ops = (txlm_ops){.rec = &w->rec, .dummy = txlm_view_of(&m->ctx->dummy), .sync = txlm_view_of(&w->sync)};
    *out = w;
    return 0;
}

void txlm_workspace_close(txlm_workspace *w)
{
    if (!w) return;
    txlm_rec_destroy(&w->rec);
    txlm_replay_free(&w->replay);
    if (w->m) each_buf(w, free_one, NULL);
    free(w->host_lp);
    free(w);
}

int txlm_workspace_fit(txlm_workspace *w, uint64_t need, txlm_err *err)
{
    if (need <= w->scratch) return 0;
    txlm_replay_drop(&w->replay, &w->rec);
    if (w->scores.buf) txlm_buf_destroy(&w->m->ctx->vk, &w->scores);
    int rc = txlm_buf_binding(&w->m->ctx->vk, &w->scores, need / 4, TXLM_BUF_DEVICE, "scores", err);
    w->scratch = rc ? 0 : need; /* 0: made again at the next pass */
    return rc;
}

int txlm_workspace_submit(txlm_workspace *w, txlm_err *err)
{
    /* txlm_vk_submit_wait serialises on the context's queue */
    return txlm_rec_submit(&w->rec, err);
}

void txlm_copy_rows(txlm_rec *rec, const txlm_buf *src, uint32_t a, const txlm_buf *dst, uint32_t b, uint32_t rows,
                    uint32_t ld)
{
    VkDeviceSize row = (VkDeviceSize)ld * 4;
    txlm_rec_copy(rec, src->buf, a * row, dst->buf, b * row, rows * row);
}
