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

#include "session.h"

static txlm_arg rows_of(txlm_buf *b, uint32_t row, uint32_t ld) { return txlm_arg_of(b, row * ld, ld); }

/* Position keys rk[p] = R[p] · Wr^T for every distance p a segment can
 * use; computed once per distance and kept, since they do not depend on
 * the text (the reference recomputes them every segment). */
static void grow_position_keys(txlm_session *s, uint32_t need_rows)
{
    const txlm_hparams *h = &s->m->h;
    if (need_rows <= s->rk_rows) return;
    uint32_t hd = h->n_head * s->m->dev.dh, first = s->rk_rows, n = need_rows - first;
    /* TXLM_LIN_BLOCK: a restored session recomputes these rows in other
     * batches and must get the same bits (the single-row kernels may add
     * in another order). */
    for (uint32_t l = 0; l < h->n_layer; l++)
        txlm_op_linear(&s->ops, rows_of(&s->pos.buf, first, s->m->dev.d), s->m->layers[l].r_net, 0, hd, NULL, 0, NULL,
                       rows_of(&s->rk[l].buf, first, hd), n, TXLM_LIN_BLOCK, 1.0f);
    s->rk_rows = need_rows;
}

/* Adaptive input embedding of the segment into x: x = (P_c · E_c[id]) *
 * sqrt(d_model), cluster by cluster. */
static void embed(txlm_session *s, const int32_t *tokens, uint32_t qlen, txlm_arg x)
{
    const txlm_model *m = s->m;
    uint32_t d = m->dev.d;
    float scale = sqrtf((float)m->h.d_model);
    txlm_view ids = txlm_view_of(&s->ids);

    txlm_rec_fill_zero(&s->rec, x.view.buf, (VkDeviceSize)x.off * 4, (VkDeviceSize)qlen * d * 4);
    txlm_rec_barrier(&s->rec);
    for (uint32_t c = 0; c < m->n_emb_parts; c++) {
        const txlm_emb_part *e = &m->emb[c];
        int used = 0;
        for (uint32_t i = 0; i < qlen && !used; i++) used = tokens[i] >= e->id_lo && tokens[i] < e->id_hi;
        if (!used) continue;
        if (!e->proj) {
            txlm_op_gather(&s->ops, ids, qlen, e->table, e->id_lo, x, scale);
            continue;
        }
        uint32_t dim = e->table->cols;
        txlm_arg g = rows_of(&s->emb_tmp, 0, dim);
        txlm_rec_fill_zero(&s->rec, s->emb_tmp.buf, 0, (VkDeviceSize)qlen * dim * 4);
        txlm_rec_barrier(&s->rec);
        txlm_op_gather(&s->ops, ids, qlen, e->table, e->id_lo, g, 1.0f);
        /* rows of other clusters gathered zeros, so they keep what they had */
        txlm_op_linear(&s->ops, g, e->proj, 0, d, NULL, 0, &x, x, qlen, TXLM_LIN_RESIDUAL, scale);
    }
}

/* The ring row of this segment's first key, after the memory's. */
static uint32_t seg_row(const txlm_session *s) { return (s->kv_base + s->mlen) % s->kv_rows; }

/* This segment's keys and values, appended to layer n's ring after the
 * memory, at the row the step buffer names (write_step), so the same
 * recording serves wherever the ring has turned to. A segment that runs
 * past the ring's last row is projected whole into kv_seg and its rows
 * copied to both ends: projecting the two pieces apart could pick other
 * kernels for their row counts and change a row's bits with where the
 * ring happens to wrap. */
static void project_kv(txlm_session *s, uint32_t n, txlm_arg c, uint32_t qlen)
{
    const txlm_layer *L = &s->m->layers[n];
    uint32_t hd = s->m->h.n_head * s->m->dev.dh, at = seg_row(s);
    if (at + qlen <= s->kv_rows) {
        txlm_op_linear(&s->ops, c, L->qkv, hd, 2 * hd, NULL, 0, NULL, rows_of(&s->kv[n], 0, 2 * hd), qlen, TXLM_LIN_DYN_Y,
                       1.0f);
        return;
    }
    VkDeviceSize row = (VkDeviceSize)2 * hd * 4, first = s->kv_rows - at;
    txlm_op_linear(&s->ops, c, L->qkv, hd, 2 * hd, NULL, 0, NULL, rows_of(&s->kv_seg, 0, 2 * hd), qlen, 0, 1.0f);
    txlm_rec_copy(&s->rec, s->kv_seg.buf, 0, s->kv[n].buf, at * row, first * row);
    txlm_rec_copy(&s->rec, s->kv_seg.buf, first * row, s->kv[n].buf, 0, (qlen - first) * row);
    txlm_rec_barrier(&s->rec);
}

static void layer(txlm_session *s, uint32_t n, uint32_t qlen, txlm_arg hin, txlm_arg out)
{
    const txlm_hparams *h = &s->m->h;
    const txlm_dims *dv = &s->m->dev;
    const txlm_layer *L = &s->m->layers[n];
    txlm_ops *o = &s->ops;
    uint32_t d = dv->d, hd = h->n_head * dv->dh, mlen = s->mlen, klen = mlen + qlen;
    float eps = h->layer_norm_epsilon;

    txlm_arg q = rows_of(&s->q, 0, hd);
    txlm_arg attn = rows_of(&s->attn, 0, hd);
    txlm_arg a = rows_of(&s->a, 0, d);

    /* attention */
    txlm_arg c = hin;
    if (h->pre_lnorm) {
        c = rows_of(&s->xn, 0, d);
        txlm_op_layernorm(o, hin, NULL, L->attn_ln_g, L->attn_ln_b, c, qlen, h->d_model, d, eps);
    }
    txlm_op_linear(o, c, L->qkv, 0, hd, NULL, 0, NULL, q, qlen, 0, 1.0f);
    project_kv(s, n, c, qlen);
    txlm_attn_shape shape = {
        .qlen = qlen, .mlen = mlen, .H = h->n_head, .dh = dv->dh, .dh_real = h->d_head,
        .clamp_max = s->max_dist, .same_length = s->same_length,
        .mem_len = s->mem_len + s->m->h.same_length_rule, /* NVIDIA's rule: one key more (hparams.h) */ .kv_row0 = 0,
        .kv_rows = s->kv_rows, .kv_dyn = 1, /* memory row 0 at kv_base (write_step) */
    };
    txlm_view kv = txlm_view_of(&s->kv[n]), rk = txlm_view_of(&s->rk[n].buf);
    txlm_view scores = txlm_view_of(&s->scores);
    txlm_op_attention(o, &shape, q.view, kv, rk, 0, L->r_w_bias, L->r_r_bias, s->capture ? &scores : NULL, scores,
                      attn.view);
    if (s->capture) {
        txlm_rec_copy(&s->rec, s->scores.buf, 0, s->cap_probs[n].buf, 0, (VkDeviceSize)h->n_head * qlen * klen * 4);
        txlm_rec_barrier(&s->rec);
        if (s->capture > 1)
            txlm_op_attention_terms(o, &shape, q.view, kv, rk, 0, L->r_w_bias, L->r_r_bias, txlm_view_of(&s->cap_terms[n]));
    }
    if (h->pre_lnorm)
        txlm_op_linear(o, attn, L->o_net, 0, d, NULL, 0, &hin, a, qlen, TXLM_LIN_RESIDUAL, 1.0f);
    else
        txlm_op_linear_ln(o, attn, L->o_net, d, NULL, &hin, a, qlen, L->attn_ln_g, L->attn_ln_b, h->d_model, eps);

    /* position-wise feed-forward */
    txlm_arg ffh = rows_of(&s->ffh, 0, dv->di);
    if (h->pre_lnorm) {
        txlm_arg x = rows_of(&s->ffin, 0, d);
        txlm_op_layernorm(o, a, NULL, L->ff_ln_g, L->ff_ln_b, x, qlen, h->d_model, d, eps);
        txlm_op_linear(o, x, L->ff_w1, 0, dv->di, L->ff_b1, 0, NULL, ffh, qlen, TXLM_LIN_RELU, 1.0f);
        txlm_op_linear(o, ffh, L->ff_w2, 0, d, L->ff_b2, 0, &a, out, qlen, TXLM_LIN_RESIDUAL, 1.0f);
    } else {
        txlm_op_linear(o, a, L->ff_w1, 0, dv->di, L->ff_b1, 0, NULL, ffh, qlen, TXLM_LIN_RELU, 1.0f);
        txlm_op_linear_ln(o, ffh, L->ff_w2, d, L->ff_b2, &a, out, qlen, L->ff_ln_g, L->ff_ln_b, h->d_model, eps);
    }
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
static void segment_fed(txlm_session *s, uint32_t qlen)
{
    s->segments++;
    s->cap_qlen = qlen;
    s->cap_mlen = s->mlen;
    update_memory(s, qlen);
    s->z_rows = qlen;
}

static int submit(txlm_session *s, txlm_err *err) { return txlm_session_submit(s, err); }

/* The segment's values that its recording reads from the step buffer
 * (s->step_host, copied to s->step) rather than holding (shaders/step.glsl): where the memory starts in the ring, and
 * where this segment's keys and values go. */
static int write_step(txlm_session *s, txlm_err *err)
{
    uint32_t hd = s->m->h.n_head * s->m->dev.dh;
    uint32_t words[4] = {s->kv_base, seg_row(s) * 2 * hd, 0, 0};
    return txlm_buf_upload(&s->m->ctx->vk, &s->step_host, 0, words, sizeof words, err);
}

/* Which kept recording, if any, can run this segment: one without
 * outputs or capture, whose position keys exist and whose keys and
 * values do not wrap past the ring's end, once the memory is full (before
 * that mlen grows and no key comes back). Returns its slot, or the slot
 * to record it into (negated), or 0 where it cannot be kept. */
static int kept_slot(txlm_session *s, const int32_t *tokens, uint32_t qlen, uint32_t want, uint32_t longest)
{
    const txlm_model *m = s->m;
    if (want || s->capture || s->mlen != s->mem_len || longest + 1 > s->rk_rows || seg_row(s) + qlen > s->kv_rows ||
        m->n_emb_parts > 32 || !txlm_rec_can_keep(&s->rec))
        return 0;
    struct txlm_seg_key key = {qlen, s->mlen, 0};
    for (uint32_t c = 0; c < m->n_emb_parts; c++)
        for (uint32_t i = 0; i < qlen; i++)
            if (tokens[i] >= m->emb[c].id_lo && tokens[i] < m->emb[c].id_hi) key.parts |= 1u << c;
    for (uint32_t i = 0; i < TXLM_REC_KEPT; i++)
        if (txlm_rec_kept_ready(&s->rec, i + 1) && !memcmp(&s->kept[i], &key, sizeof key)) return (int)i + 1;
    uint32_t i = s->kept_next;
    s->kept_next = (i + 1) % TXLM_REC_KEPT;
    s->kept[i] = key;
    /* its old recording is not this key's, even if the new one never gets made */
    txlm_rec_kept_drop(&s->rec, i + 1);
    return -(int)(i + 1);
}

/* After a failed submission: the device may have run part of the
 * segment, so the memory is forgotten rather than continued from a
 * half-updated one. */
static void forget_memory(txlm_session *s)
{
    s->mlen = 0;
    s->kv_base = 0;
    s->rk_rows = 0;
    s->z_rows = 0;
    s->cap_qlen = 0; /* nor show a half-computed attention */
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
    if (rc == TXLM_ERR_NONFINITE) forget_memory(s);
    return rc;
}

int txlm_forward(txlm_session *s, const int32_t *tokens, uint32_t qlen, const txlm_out_req *req, txlm_err *err)
{
    const txlm_hparams *h = &s->m->h;
    uint32_t d = s->m->dev.d;
    static const txlm_out_req none = {0};
    if (!req) req = &none;
    if (qlen == 0 || qlen > s->max_seg)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "segment of %u tokens: must be 1..%u", qlen, s->max_seg);
    for (uint32_t i = 0; i < qlen; i++)
        if (tokens[i] < 0 || (uint32_t)tokens[i] >= h->n_token)
            return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "token %d at position %u is outside the vocabulary [0, %u)",
                             tokens[i], i, h->n_token);
    for (uint32_t i = req->first_row; req->targets && i < qlen; i++)
        if (req->targets[i - req->first_row] < 0 || (uint32_t)req->targets[i - req->first_row] >= h->n_token)
            return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "target %d at position %u is outside the vocabulary [0, %u)",
                             req->targets[i - req->first_row], i, h->n_token);
    int rc = s->zero_memory && s->mlen == 0 && s->mem_len ? txlm_session_zero_fill(s, err) : 0;
    if (!rc) rc = txlm_buf_upload(&s->m->ctx->vk, &s->ids, 0, tokens, qlen * sizeof *tokens, err);
    if (!rc && req->targets && req->first_row < qlen)
        rc = txlm_buf_upload(&s->m->ctx->vk, &s->targets, 0, req->targets, (qlen - req->first_row) * sizeof *req->targets, err);
    uint32_t klen = s->mlen + qlen;
    uint32_t longest = klen - 1 < s->max_dist ? klen - 1 : s->max_dist;
    uint32_t want = (req->logprobs || req->targets) && req->first_row < qlen ? qlen - req->first_row : 0;
    if (!rc) rc = write_step(s, err);
    if (rc) return rc;
    int slot = kept_slot(s, tokens, qlen, want, longest);
    if (slot > 0) {
        /* the same commands as the recording made for this key */
        rc = txlm_rec_replay(&s->rec, (uint32_t)slot, err);
        if (rc) return forget_memory(s), rc;
        segment_fed(s, qlen);
        return 0;
    }
    rc = slot < 0 ? txlm_rec_begin_kept(&s->rec, (uint32_t)-slot, err) : txlm_rec_begin(&s->rec, err);
    if (rc) return rc;

    /* the counts of finished workgroups (txlm_ops.sync) start at 0: each
     * dispatch leaves them there; this covers a segment cut short. The
     * step values move to device memory, where kernels read them fast. */
    txlm_rec_fill_zero(&s->rec, s->sync.buf, 0, s->sync.size);
    txlm_rec_copy(&s->rec, s->step_host.buf, 0, s->step.buf, 0, s->step.size);
    txlm_rec_barrier(&s->rec);
    grow_position_keys(s, longest + 1);
    embed(s, tokens, qlen, rows_of(&s->h[0], 0, d));
    for (uint32_t n = 0; n < h->n_layer; n++) {
        txlm_arg in = rows_of(&s->h[n % 2], 0, d);
        txlm_arg out = n + 1 < h->n_layer ? rows_of(&s->h[(n + 1) % 2], 0, d) : rows_of(&s->z, 0, d);
        layer(s, n, qlen, in, out);
    }
    segment_fed(s, qlen);

    /* The output layer in blocks of rows that fit one binding; the first
     * block rides in the segment's command buffer. */
    uint32_t block = want < s->out_rows ? want : s->out_rows;
    if (block) rc = record_output(s, req, req->first_row, block, err);
    if (!rc) rc = submit(s, err);
    if (rc) return forget_memory(s), rc;
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
