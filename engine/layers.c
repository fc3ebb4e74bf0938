/* The Transformer-XL forward pass of a pass's rows, recorded as GPU
 * dispatches into one command buffer (docs/architecture.md), as the
 * the reference's equations read.
 *
 * Per layer n, with input h (the pass's rows) and, in each stream's
 * s->kv[n], the keys and values of its memory rows (mlen rows, computed
 * by earlier segments):
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

#include "attend.h"

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
        txlm_op_linear(o, &(txlm_linear_args){.x = txlm_rows_of(&s->pos.buf, first, s->m->dev.d), .w = s->m->layers[l].r_net,
                                              .n = hd, .y = txlm_rows_of(&s->rk[l].buf, first, hd), .m = n,
                                              .flags = TXLM_LIN_BLOCK});
    s->rk_rows = need_rows;
}

/* Adaptive input embedding of the pass's rows into x: x = (P_c · E_c[id])
 * * sqrt(d_model), cluster by cluster. */
static void embed(const txlm_pass *p, txlm_arg x)
{
    txlm_workspace *w = p->w;
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
            txlm_op_gather(&w->ops, ids, qlen, e->table, e->id_lo, x, scale, 0);
            continue;
        }
        uint32_t dim = e->table->cols;
        /* the rows of other clusters' tokens gathered as zeros (no fill and barrier before) */
        txlm_arg g = txlm_rows_of(&w->emb_tmp, 0, dim);
        txlm_op_gather(&w->ops, ids, qlen, e->table, e->id_lo, g, 1.0f, 1);
        /* x += (g · P_c^T) * sqrt(d_model): rows of other clusters gathered
         * zeros, so they keep what they had */
        txlm_op_linear(&w->ops, &(txlm_linear_args){.x = g, .w = e->proj, .n = d, .residual = &x, .y = x, .m = qlen,
                                                    .scale = scale});
    }
}

/* Layer n of a pass: what both of its halves read. */
typedef struct layer_at {
    const txlm_pass *p;
    uint32_t n;
    const txlm_hparams *h;
    const txlm_dims *dv;
    const txlm_layer *L;
} layer_at;

/* A pre-norm block's input normalised sits after the rows it comes from,
 * in the same buffer (the workspace makes those buffers twice as long),
 * so the product that makes the rows can normalise them too
 * (txlm_op_linear_ln's ln_out): rows w->rows on. */
static txlm_arg normed(txlm_workspace *w, txlm_buf *b, uint32_t d) { return txlm_arg_of(b, w->rows * d, d); }

/* The attention half of layer n: a = post: LN_attn(h + (S·v)·Wo^T),
 * pre: h + (S·v)·Wo^T, with LN_ff(a) after it (file comment). c is the
 * layer's input as the projections read it (pre-norm: LN_attn(h), made
 * by the product before). Projections over all the pass's rows;
 * attention per stream, each over its own memory (attend.h). */
static void attention(const layer_at *t, txlm_arg h_in, txlm_arg c, txlm_arg a)
{
    const txlm_pass *p = t->p;
    txlm_workspace *w = p->w;
    const txlm_hparams *h = t->h;
    const txlm_layer *L = t->L;
    uint32_t d = t->dv->d, hd = h->n_head * t->dv->dh;
    /* q = c · Wq^T; k, v = c · [Wk; Wv]^T after each memory's; attn = S·v */
    txlm_attend(p, t->n, c);
    /* a = h + attn · Wo^T, then LN_attn of it (post-norm) or LN_ff of it beside it (pre-norm) */
    txlm_arg ln_ff = normed(w, &w->a, d);
    txlm_op_linear_ln(&w->ops, &(txlm_linear_ln_args){.x = txlm_rows_of(&w->attn, 0, hd), .w = L->o_net, .n = d,
                                                       .residual = &h_in, .y = a, .m = p->rows,
                                                       .ln_g = h->pre_lnorm ? L->ff_ln_g : L->attn_ln_g,
                                                       .ln_b = h->pre_lnorm ? L->ff_ln_b : L->attn_ln_b, .d = h->d_model,
                                                       .eps = h->layer_norm_epsilon, .ln_out = h->pre_lnorm ? &ln_ff : NULL});
}

/* The position-wise feed-forward half: out = post: LN_ff(a + FF(a)),
 * pre: a + FF(LN_ff(a)) with the next layer's LN_attn(out) after it
 * (next: NULL for the last), FF(x) = relu(x · W1^T + b1) · W2^T + b2. */
static void feed_forward(const layer_at *t, txlm_arg a, txlm_buf *out_buf, const txlm_layer *next)
{
    txlm_workspace *w = t->p->w;
    const txlm_hparams *h = t->h;
    const txlm_dims *dv = t->dv;
    const txlm_layer *L = t->L;
    txlm_ops *o = &w->ops;
    uint32_t qlen = t->p->rows;
    txlm_arg ffh = txlm_rows_of(&w->ffh, 0, dv->di), out = txlm_rows_of(out_buf, 0, dv->d);
    txlm_arg x = h->pre_lnorm ? normed(w, &w->a, dv->d) : a; /* pre-norm: LN_ff(a), made beside a */
    /* ffh = relu(x · W1^T + b1) */
    txlm_op_linear(o, &(txlm_linear_args){.x = x, .w = L->ff_w1, .n = dv->di, .bias = L->ff_b1, .y = ffh, .m = qlen,
                                          .flags = TXLM_LIN_RELU});
    /* out = a + ffh · W2^T + b2, then LN_ff of it (post-norm) or the next layer's LN_attn beside it (pre-norm) */
    txlm_linear_args ff2 = {.x = ffh, .w = L->ff_w2, .n = dv->d, .bias = L->ff_b2, .residual = &a, .y = out, .m = qlen};
    if (h->pre_lnorm && !next) {
        txlm_op_linear(o, &ff2);
        return;
    }
    txlm_arg ln_next = normed(w, out_buf, dv->d);
    txlm_op_linear_ln(o, &(txlm_linear_ln_args){.x = ff2.x, .w = ff2.w, .bias = ff2.bias, .n = ff2.n, .residual = &a,
                                                .y = out, .m = qlen, .ln_g = next ? next->attn_ln_g : L->ff_ln_g,
                                                .ln_b = next ? next->attn_ln_b : L->ff_ln_b, .d = h->d_model,
                                                .eps = h->layer_norm_epsilon, .ln_out = next ? &ln_next : NULL});
}

/* Layer n from the rows of in_buf into out_buf's (file comment). */
static void layer(const txlm_pass *p, uint32_t n, txlm_buf *in_buf, txlm_buf *out_buf)
{
    txlm_workspace *w = p->w;
    const txlm_model *m = w->m;
    uint32_t d = m->dev.d;
    layer_at t = {.p = p, .n = n, .h = &m->h, .dv = &m->dev, .L = &m->layers[n]};
    txlm_arg a = txlm_rows_of(&w->a, 0, d), h_in = txlm_rows_of(in_buf, 0, d);
    attention(&t, h_in, m->h.pre_lnorm ? normed(w, in_buf, d) : h_in, a);
    /* pre-norm: the next layer's LN_attn is made with this one's output */
    feed_forward(&t, a, out_buf, m->h.pre_lnorm && n + 1 < m->h.n_layer ? &m->layers[n + 1] : NULL);
}

void txlm_record_layers(const txlm_pass *p)
{
    txlm_workspace *w = p->w;
    uint32_t d = w->m->dev.d, n_layer = w->m->h.n_layer;
    /* the counts of finished workgroups (txlm_ops.sync) start at 0: each
     * dispatch leaves them there; this covers a segment cut short */
    txlm_rec_fill_zero(&w->rec, w->sync.buf, 0, w->sync.size);
    txlm_rec_barrier(&w->rec);
    for (uint32_t i = 0; i < p->n; i++)
        grow_position_keys(&w->ops, p->st[i].s, txlm_rk_rows_needed(p->st[i].s, p->st[i].qlen));
    txlm_arg x = txlm_rows_of(&w->hidden[0], 0, d);
    embed(p, x);
    const txlm_layer *L0 = &w->m->layers[0];
    if (w->m->h.pre_lnorm) /* layer 0's LN_attn (the later layers' come with the product before) */
        txlm_op_layernorm(&w->ops, &(txlm_layernorm_args){.x = x, .g = L0->attn_ln_g, .b = L0->attn_ln_b,
                                                          .y = normed(w, &w->hidden[0], d), .rows = p->rows,
                                                          .d = w->m->h.d_model, .d_out = d,
                                                          .eps = w->m->h.layer_norm_epsilon});
    for (uint32_t n = 0; n < n_layer; n++)
        layer(p, n, &w->hidden[n % 2], n + 1 < n_layer ? &w->hidden[(n + 1) % 2] : &w->z);
}
