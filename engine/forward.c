/* The Transformer-XL forward pass for one segment, recorded as GPU
 * dispatches into one command buffer (docs/architecture.md).
 *
 * Per layer n, with input h (qlen rows) and, in s->kv[n], the keys and
 * values of the memory rows (mlen rows, computed by earlier segments):
 *   h'     = pre_lnorm ? LN_attn(h) : h
 *   q,k,v  = h' · Wqkv^T            (k, v appended after the memory's)
 *   S      = ((q + u)·k + (q + v)·rk[dist]) / sqrt(dh), masked, softmaxed
 *   a      = post: LN_attn(h + (S·v)·Wo^T)    pre: h + (S·v)·Wo^T
 *   out    = post: LN_ff(a + FF(a))           pre: a + FF(LN_ff(a))
 * The reference keeps each layer's input rows as memory and re-projects
 * them every segment; projecting a row does not depend on the other rows
 * (LayerNorm and the projection are per row), so keeping the projected
 * keys and values instead gives the same numbers for a fraction of the work. */
#include <math.h>
#include <string.h>

#include "attn_streams.h"
#include "session.h"

static txlm_arg rows_of(txlm_buf *b, uint32_t row, uint32_t ld) { return txlm_arg_of(b, row * ld, ld); }

/* Position keys rk[p] = R[p] · Wr^T for every distance p a segment can
 * use; computed once per distance and kept, since they do not depend on
 * the text (the reference recomputes them every segment). */
static void grow_position_keys(txlm_ops *o, txlm_session *s, uint32_t need_rows)
{
    const txlm_hparams *h = &s->m->h;
    if (need_rows <= s->rk_rows) return;
    uint32_t hd = h->n_head * s->m->dev.dh, first = s->rk_rows, n = need_rows - first;
    /* TXLM_LIN_BLOCK: a restored session recomputes these rows in other
     * batches and must get the same bits (the single-row kernels may add
     * in another order). */
    for (uint32_t l = 0; l < h->n_layer; l++)
        txlm_op_linear(o, &(txlm_linear_args){.x = rows_of(&s->pos.buf, first, s->m->dev.d), .w = s->m->layers[l].r_net,
                                              .n = hd, .y = rows_of(&s->rk[l].buf, first, hd), .m = n,
                                              .flags = TXLM_LIN_BLOCK});
    s->rk_rows = need_rows;
}

/* Adaptive input embedding of the pass's rows into x: x = (P_c · E_c[id])
 * * sqrt(d_model), cluster by cluster. */
static void embed(const txlm_pass *p, txlm_arg x)
{
    txlm_session *w = p->w;
    const txlm_model *m = w->m;
    uint32_t d = m->dev.d, qlen = p->rows;
    float scale = sqrtf((float)m->h.d_model);
    txlm_view ids = txlm_view_of(&w->ids);

    txlm_rec_fill_zero(&w->rec, x.view.buf, (VkDeviceSize)x.off * 4, (VkDeviceSize)qlen * d * 4);
    txlm_rec_barrier(&w->rec);
    for (uint32_t c = 0; c < m->n_emb_parts; c++) {
        const txlm_emb_part *e = &m->emb[c];
        int used = 0;
        for (uint32_t i = 0; i < qlen && !used; i++) used = p->tokens[i] >= e->id_lo && p->tokens[i] < e->id_hi;
        if (!used && !p->all_clusters) continue;
        if (!e->proj) { /* x = E_c[id] * sqrt(d_model) */
            txlm_op_gather(&w->ops, ids, qlen, e->table, e->id_lo, x, scale);
            continue;
        }
        uint32_t dim = e->table->cols;
        txlm_arg g = rows_of(&w->emb_tmp, 0, dim);
        txlm_rec_fill_zero(&w->rec, w->emb_tmp.buf, 0, (VkDeviceSize)qlen * dim * 4);
        txlm_rec_barrier(&w->rec);
        txlm_op_gather(&w->ops, ids, qlen, e->table, e->id_lo, g, 1.0f);
        /* x += (g · P_c^T) * sqrt(d_model): rows of other clusters gathered
         * zeros, so they keep what they had */
        txlm_op_linear(&w->ops, &(txlm_linear_args){.x = g, .w = e->proj, .n = d, .residual = &x, .y = x, .m = qlen,
                                                    .scale = scale});
    }
}

/* This segment's keys and values, appended to layer n's ring after the
 * memory, at the row the step buffer names (txlm_replay_write_step), so the same
 * recording serves wherever the ring has turned to. A segment that runs
 * past the ring's last row is projected whole into kv_seg and its rows
 * copied to both ends: projecting the two pieces apart could pick other
 * kernels for their row counts and change a row's bits with where the
 * ring happens to wrap. */
static void project_kv(txlm_session *s, uint32_t n, txlm_arg c, uint32_t qlen)
{
    const txlm_layer *L = &s->m->layers[n];
    uint32_t hd = s->m->h.n_head * s->m->dev.dh, at = txlm_seg_row(s);
    /* k, v = c · [Wk; Wv]^T: the rows of Wqkv after Wq's */
    txlm_linear_args kv = {.x = c, .w = L->qkv, .row0 = hd, .n = 2 * hd, .y = rows_of(&s->kv[n], 0, 2 * hd), .m = qlen,
                           .flags = TXLM_LIN_DYN_Y};
    if (at + qlen <= s->kv_rows) {
        txlm_op_linear(&s->ops, &kv);
        return;
    }
    kv.y = rows_of(&s->kv_seg, 0, 2 * hd), kv.flags = 0;
    txlm_op_linear(&s->ops, &kv);
    txlm_ring_put(&s->rec, s, n, &s->kv_seg, 0, qlen);
    txlm_rec_barrier(&s->rec);
}

void txlm_ring_put(txlm_rec *rec, txlm_session *s, uint32_t n, const txlm_buf *src, uint32_t src_row, uint32_t qlen)
{
    VkDeviceSize row = (VkDeviceSize)2 * s->m->h.n_head * s->m->dev.dh * 4, at = txlm_seg_row(s);
    VkDeviceSize first = at + qlen <= s->kv_rows ? qlen : s->kv_rows - at;
    txlm_rec_copy(rec, src->buf, src_row * row, s->kv[n].buf, at * row, first * row);
    txlm_rec_copy(rec, src->buf, (src_row + first) * row, s->kv[n].buf, 0, (qlen - first) * row);
}

/* Several streams: every stream's keys and values in one product over
 * all rows, then copied into each stream's ring after its memory. */
static void project_kv_streams(const txlm_pass *p, uint32_t n, txlm_arg c)
{
    txlm_session *w = p->w;
    uint32_t hd = w->m->h.n_head * w->m->dev.dh;
    txlm_op_linear(&w->ops, &(txlm_linear_args){.x = c, .w = w->m->layers[n].qkv, .row0 = hd, .n = 2 * hd,
                                                .y = rows_of(&w->kv_seg, 0, 2 * hd), .m = p->rows});
    for (uint32_t i = 0; i < p->n; i++) txlm_ring_put(&w->rec, p->st[i].s, n, &w->kv_seg, p->st[i].row0, p->st[i].qlen);
    txlm_rec_barrier(&w->rec);
}

void txlm_copy_rows(txlm_rec *rec, const txlm_buf *src, uint32_t a, const txlm_buf *dst, uint32_t b, uint32_t rows,
                      uint32_t ld)
{
    VkDeviceSize row = (VkDeviceSize)ld * 4;
    txlm_rec_copy(rec, src->buf, a * row, dst->buf, b * row, rows * row);
}

txlm_attn_shape txlm_stream_shape(const txlm_session *s, uint32_t qlen, int alone)
{
    const txlm_hparams *h = &s->m->h;
    return (txlm_attn_shape){
        .qlen = qlen, .mlen = s->mlen, .H = h->n_head, .dh = s->m->dev.dh, .dh_real = h->d_head,
        .clamp_max = s->max_dist, .same_length = s->same_length,
        .mem_len = s->mem_len + h->same_length_rule, /* NVIDIA's rule: one key more (hparams.h) */
        .kv_rows = s->kv_rows,
        /* alone: memory row 0 at kv_base through the step buffer (txlm_replay_write_step), so
         * kept recordings serve wherever the ring has turned; several streams read theirs from
         * their entries in the step buffer (attn_streams.h) */
        .kv_dyn = alone, .kv_row0 = alone ? 0 : s->kv_base,
    };
}

/* S = softmax(((q + u)·k + (q + v)·rk[dist]) / sqrt(dh), masked); attn = S·v
 * for one stream, over its own ring, from its queries in s->q into s->attn. */
static void stream_attention(txlm_ops *o, txlm_session *s, uint32_t n, uint32_t qlen, int alone)
{
    const txlm_hparams *h = &s->m->h;
    const txlm_layer *L = &s->m->layers[n];
    uint32_t klen = s->mlen + qlen;
    txlm_attn_shape shape = txlm_stream_shape(s, qlen, alone);
    txlm_view scores = txlm_view_of(&s->scores);
    txlm_attention_args at = {.shape = &shape, .q = txlm_view_of(&s->q), .kv = txlm_view_of(&s->kv[n]),
                              .rk = txlm_view_of(&s->rk[n].buf), .r_w_bias = L->r_w_bias, .r_r_bias = L->r_r_bias,
                              .probs = s->capture ? &scores : NULL, .scratch = scores, .out = txlm_view_of(&s->attn)};
    txlm_op_attention(o, &at);
    if (s->capture) {
        txlm_rec_copy(o->rec, s->scores.buf, 0, s->cap_probs[n].buf, 0, (VkDeviceSize)h->n_head * qlen * klen * 4);
        txlm_rec_barrier(o->rec);
        at.out = txlm_view_of(&s->cap_terms[n]);
        if (s->capture > 1) txlm_op_attention_terms(o, &at);
    }
}

/* Several streams, each over its own ring in shared dispatches: every
 * stream's keys and values in one product over all rows, put into each
 * ring after its memory, then the attention of all streams from the
 * pass's queries into its rows of w->attn. */
static void attend_streams(const txlm_pass *p, uint32_t n, txlm_arg c)
{
    txlm_session *w = p->w;
    const txlm_layer *L = &w->m->layers[n];
    uint32_t hd = w->m->h.n_head * w->m->dev.dh;
    txlm_op_linear(&w->ops, &(txlm_linear_args){.x = c, .w = L->qkv, .row0 = hd, .n = 2 * hd,
                                                .y = rows_of(&w->kv_seg, 0, 2 * hd), .m = p->rows});
    txlm_view *kv = p->attn->kv;
    for (uint32_t i = 0; i < p->n; i++) kv[i] = txlm_view_of(&p->st[i].s->kv[n]);
    txlm_op_kv_put_streams(&w->ops, p->attn, txlm_view_of(&w->kv_seg), kv);
    txlm_rec_barrier(&w->rec);
    txlm_op_attention_streams(&w->ops, &(txlm_attention_streams_args){
                                           .plan = p->attn, .q = txlm_view_of(&w->q), .rk = txlm_view_of(&p->rk_from->rk[n].buf),
                                           .out = txlm_view_of(&w->attn), .scratch = txlm_view_of(&w->scores), .kv = kv,
                                           .r_w_bias = L->r_w_bias, .r_r_bias = L->r_r_bias});
}

/* Layer n of a pass: what both of its halves read. */
typedef struct layer_at {
    const txlm_pass *p;
    uint32_t n;
    const txlm_hparams *h;
    const txlm_dims *dv;
    const txlm_layer *L;
} layer_at;

/* The attention half of layer n: a = post: LN_attn(h + (S·v)·Wo^T),
 * pre: h + (S·v)·Wo^T (file comment). Projections over all the pass's
 * rows; attention per stream, each over its own memory. */
static void attention(const layer_at *t, txlm_arg h_in, txlm_arg a)
{
    const txlm_pass *p = t->p;
    txlm_session *w = p->w;
    const txlm_hparams *h = t->h;
    const txlm_dims *dv = t->dv;
    const txlm_layer *L = t->L;
    txlm_ops *o = &w->ops;
    uint32_t n = t->n, d = dv->d, hd = h->n_head * dv->dh, rows = p->rows;
    int alone = p->st[0].s == w;
    txlm_arg q = rows_of(&w->q, 0, hd), attn = rows_of(&w->attn, 0, hd), c = h_in;
    if (h->pre_lnorm) { /* c = LN_attn(h) */
        c = rows_of(&w->xn, 0, d);
        txlm_op_layernorm(o, &(txlm_layernorm_args){.x = h_in, .g = L->attn_ln_g, .b = L->attn_ln_b, .y = c, .rows = rows,
                                                    .d = h->d_model, .d_out = d, .eps = h->layer_norm_epsilon});
    }
    /* q = c · Wq^T; k, v = c · [Wk; Wv]^T after the memory's */
    txlm_op_linear(o, &(txlm_linear_args){.x = c, .w = L->qkv, .n = hd, .y = q, .m = rows});
    if (alone) {
        project_kv(w, n, c, rows);
        stream_attention(o, w, n, rows, 1);
    } else if (p->attn) {
        attend_streams(p, n, c);
    } else { /* stream by stream: its queries to its session, its heads back */
        project_kv_streams(p, n, c);
        for (uint32_t i = 0; i < p->n; i++) txlm_copy_rows(&w->rec, &w->q, p->st[i].row0, &p->st[i].s->q, 0, p->st[i].qlen, hd);
        txlm_rec_barrier(&w->rec);
        for (uint32_t i = 0; i < p->n; i++) stream_attention(o, p->st[i].s, n, p->st[i].qlen, 0);
        for (uint32_t i = 0; i < p->n; i++)
            txlm_copy_rows(&w->rec, &p->st[i].s->attn, 0, &w->attn, p->st[i].row0, p->st[i].qlen, hd);
        txlm_rec_barrier(&w->rec);
    }
    /* a = h + attn · Wo^T, then (post-norm) LN_attn */
    if (h->pre_lnorm)
        txlm_op_linear(o, &(txlm_linear_args){.x = attn, .w = L->o_net, .n = d, .residual = &h_in, .y = a, .m = rows});
    else
        txlm_op_linear_ln(o, &(txlm_linear_ln_args){.x = attn, .w = L->o_net, .n = d, .residual = &h_in, .y = a, .m = rows,
                                                    .ln_g = L->attn_ln_g, .ln_b = L->attn_ln_b, .d = h->d_model,
                                                    .eps = h->layer_norm_epsilon});
}

/* The position-wise feed-forward half: out = post: LN_ff(a + FF(a)),
 * pre: a + FF(LN_ff(a)), FF(x) = relu(x · W1^T + b1) · W2^T + b2. */
static void feed_forward(const layer_at *t, txlm_arg a, txlm_arg out)
{
    txlm_session *w = t->p->w;
    const txlm_hparams *h = t->h;
    const txlm_dims *dv = t->dv;
    const txlm_layer *L = t->L;
    txlm_ops *o = &w->ops;
    uint32_t qlen = t->p->rows;
    txlm_arg ffh = rows_of(&w->ffh, 0, dv->di), x = a;
    if (h->pre_lnorm) { /* x = LN_ff(a) */
        x = rows_of(&w->ffin, 0, dv->d);
        txlm_op_layernorm(o, &(txlm_layernorm_args){.x = a, .g = L->ff_ln_g, .b = L->ff_ln_b, .y = x, .rows = qlen,
                                                    .d = h->d_model, .d_out = dv->d, .eps = h->layer_norm_epsilon});
    }
    /* ffh = relu(x · W1^T + b1) */
    txlm_op_linear(o, &(txlm_linear_args){.x = x, .w = L->ff_w1, .n = dv->di, .bias = L->ff_b1, .y = ffh, .m = qlen,
                                          .flags = TXLM_LIN_RELU});
    /* out = a + ffh · W2^T + b2, then (post-norm) LN_ff */
    if (h->pre_lnorm)
        txlm_op_linear(o, &(txlm_linear_args){.x = ffh, .w = L->ff_w2, .n = dv->d, .bias = L->ff_b2, .residual = &a,
                                              .y = out, .m = qlen});
    else
        txlm_op_linear_ln(o, &(txlm_linear_ln_args){.x = ffh, .w = L->ff_w2, .bias = L->ff_b2, .n = dv->d, .residual = &a,
                                                    .y = out, .m = qlen, .ln_g = L->ff_ln_g, .ln_b = L->ff_ln_b,
                                                    .d = h->d_model, .eps = h->layer_norm_epsilon});
}

static void layer(const txlm_pass *p, uint32_t n, txlm_arg h_in, txlm_arg out)
{
    const txlm_model *m = p->w->m;
    layer_at t = {.p = p, .n = n, .h = &m->h, .dv = &m->dev, .L = &m->layers[n]};
    txlm_arg a = rows_of(&p->w->a, 0, m->dev.d);
    attention(&t, h_in, a);
    feed_forward(&t, a, out);
}

/* Memory for the next segment: the keys and values of the last mem_len
 * rows of every layer, which stay where they are in the ring (kv_base
 * moves on). */
static void update_memory(txlm_session *s, uint32_t qlen)
{
    uint32_t klen = s->mlen + qlen;
    if (klen <= s->mem_len) {
        s->mlen = klen;
        return;
    }
    /* nothing kept: the next segment starts at row 0 and does not wrap */
    s->kv_base = s->mem_len ? (s->kv_base + klen - s->mem_len) % s->kv_rows : 0;
    s->mlen = s->mem_len;
}

/* What a fed segment leaves behind, recorded or replayed: the shape its
 * attention capture has, the memory for the next one, z's rows. */
void txlm_segment_fed(txlm_session *s, uint32_t qlen)
{
    s->segments++;
    s->cap_qlen = qlen;
    s->cap_mlen = s->mlen;
    update_memory(s, qlen);
    s->z_rows = qlen;
}

static int submit(txlm_session *s, txlm_err *err) { return txlm_session_submit(s, err); }

void txlm_session_forget(txlm_session *s, int failed)
{
    s->mlen = 0;
    s->kv_base = 0;
    s->z_rows = 0;
    s->cap_qlen = 0; /* nor show a half-computed attention */
    if (failed) s->rk_rows = 0; /* recomputed, the same bits (TXLM_LIN_BLOCK) */
    else s->segments = 0;
}

/* Records the output layer for rows [r0, r0+rows) of z. */
static int record_output(txlm_session *s, const txlm_out_req *req, uint32_t r0, uint32_t rows, txlm_err *err)
{
    uint32_t at = r0 - req->first_row;
    txlm_out_pick pick = {txlm_arg_of(&s->targets, at, 1), req->targets ? req->targets + at : NULL};
    return txlm_out_rows(s, r0, rows, req->targets ? &pick : NULL, err);
}

/* Copies what was asked for out of the host-visible output block. */
static int collect_output(txlm_session *s, const txlm_out_req *req, uint32_t r0, uint32_t rows, txlm_err *err)
{
    uint32_t V = s->m->h.n_token, at = r0 - req->first_row;
    int rc = txlm_buf_invalidate(&s->m->ctx->vk, &s->out, err);
    const float *out = s->out.map;
    if (!rc && req->logprobs) {
        float *dst = req->logprobs + (size_t)at * V;
        memcpy(dst, out, (size_t)rows * V * sizeof *out);
        rc = txlm_session_check_finite(s, dst, (uint64_t)rows * V, r0, rows, 0, NULL, err);
    }
    if (!rc && req->targets) {
        for (uint32_t i = 0; i < rows; i++) req->target_lp[at + i] = out[(size_t)i * V + (uint32_t)req->targets[at + i]];
        rc = txlm_session_check_finite(s, req->target_lp + at, rows, r0, rows, 0, req->targets + at, err);
    }
    /* Memory that produced NaN or infinity would only produce more. */
    if (rc == TXLM_ERR_NONFINITE) txlm_session_forget(s, 1);
    return rc;
}

/* Every token and target must be in the vocabulary, the segment 1..max_seg long. */
int txlm_check_segment(const txlm_session *s, const int32_t *tokens, uint32_t qlen, const txlm_out_req *req,
                       txlm_err *err)
{
    uint32_t V = s->m->h.n_token;
    if (qlen == 0 || qlen > s->max_seg)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "segment of %u tokens: must be 1..%u", qlen, s->max_seg);
    for (uint32_t i = 0; i < qlen; i++)
        if (tokens[i] < 0 || (uint32_t)tokens[i] >= V)
            return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "token %d at position %u is outside the vocabulary [0, %u)",
                             tokens[i], i, V);
    for (uint32_t i = req->first_row; req->targets && i < qlen; i++)
        if (req->targets[i - req->first_row] < 0 || (uint32_t)req->targets[i - req->first_row] >= V)
            return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "target %d at position %u is outside the vocabulary [0, %u)",
                             req->targets[i - req->first_row], i, V);
    return 0;
}

/* What the device reads before the segment's commands run: the zero
 * memory (first segment of a zero_memory session), the tokens, the
 * targets, the step values. */
static int upload_segment(txlm_session *s, const int32_t *tokens, uint32_t qlen, const txlm_out_req *req, txlm_err *err)
{
    txlm_vk *vk = &s->m->ctx->vk;
    int rc = s->zero_memory && s->mlen == 0 && s->mem_len ? txlm_session_zero_fill(s, err) : 0;
    if (!rc) rc = txlm_buf_upload(vk, &s->ids, 0, tokens, qlen * sizeof *tokens, err);
    if (!rc && req->targets && req->first_row < qlen)
        rc = txlm_buf_upload(vk, &s->targets, 0, req->targets, (qlen - req->first_row) * sizeof *req->targets, err);
    return rc ? rc : txlm_replay_write_step(s, err);
}

void txlm_record_layers(const txlm_pass *p)
{
    txlm_session *w = p->w;
    uint32_t d = w->m->dev.d, n_layer = w->m->h.n_layer;
    /* the counts of finished workgroups (txlm_ops.sync) start at 0: each
     * dispatch leaves them there; this covers a segment cut short. The
     * step values move to device memory, where kernels read them fast. */
    txlm_rec_fill_zero(&w->rec, w->sync.buf, 0, w->sync.size);
    txlm_replay_record_step(w);
    txlm_rec_barrier(&w->rec);
    for (uint32_t i = 0; i < p->n; i++)
        grow_position_keys(&w->ops, p->st[i].s, txlm_rk_rows_needed(p->st[i].s, p->st[i].qlen));
    embed(p, rows_of(&w->hidden[0], 0, d));
    for (uint32_t n = 0; n < n_layer; n++) {
        txlm_arg in = rows_of(&w->hidden[n % 2], 0, d);
        txlm_arg out = n + 1 < n_layer ? rows_of(&w->hidden[(n + 1) % 2], 0, d) : rows_of(&w->z, 0, d);
        layer(p, n, in, out);
    }
}

/* The output layer for the `want` rows asked for, in blocks of rows that
 * fit one binding; the first block rides in the segment's command buffer
 * (begun and recorded up to here), the others get their own. */
static int submit_and_read_back(txlm_session *s, const txlm_out_req *req, uint32_t want, txlm_err *err)
{
    uint32_t block = want < s->out_rows ? want : s->out_rows;
    int rc = block ? record_output(s, req, req->first_row, block, err) : 0;
    if (!rc) rc = submit(s, err);
    if (rc) return txlm_session_forget(s, 1), rc;
    if (block) rc = collect_output(s, req, req->first_row, block, err);
    for (uint32_t done = block; !rc && done < want; done += block) {
        uint32_t r0 = req->first_row + done, rows = want - done < block ? want - done : block;
        rc = txlm_rec_begin(&s->rec, err);
        if (!rc) rc = record_output(s, req, r0, rows, err);
        if (!rc) rc = submit(s, err);
        if (!rc) rc = collect_output(s, req, r0, rows, err);
    }
    return rc;
}

int txlm_forward(txlm_session *s, const int32_t *tokens, uint32_t qlen, const txlm_out_req *req, txlm_err *err)
{
    static const txlm_out_req none = {0};
    if (!req) req = &none;
    int rc = txlm_check_segment(s, tokens, qlen, req, err);
    if (!rc) rc = upload_segment(s, tokens, qlen, req, err);
    if (rc) return rc;
    uint32_t want = (req->logprobs || req->targets) && req->first_row < qlen ? qlen - req->first_row : 0;
    /* replay a kept recording of the same commands, or record */
    int slot = txlm_replay_slot(s, tokens, qlen, want);
    if (slot > 0) {
        rc = txlm_rec_replay(&s->rec, (uint32_t)slot, err);
        if (rc) return txlm_session_forget(s, 1), rc;
        txlm_segment_fed(s, qlen);
        return 0;
    }
    rc = slot < 0 ? txlm_rec_begin_kept(&s->rec, (uint32_t)-slot, err) : txlm_rec_begin(&s->rec, err);
    if (rc) return rc;
    txlm_pass_stream alone = {s, 0, qlen};
    txlm_record_layers(&(txlm_pass){.w = s, .st = &alone, .n = 1, .rows = qlen, .tokens = tokens});
    txlm_segment_fed(s, qlen);
    return submit_and_read_back(s, req, want, err);
}
