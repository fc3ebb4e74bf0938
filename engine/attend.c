/* Attention of a pass: its routes and one layer's commands (attend.h). */
#include "attend.h"

#include <stdlib.h>

int txlm_attend_plan(txlm_pass *p, txlm_err *err)
{
    txlm_workspace *w = p->w;
    const txlm_model *m = w->m;
    txlm_attn_stream *st = malloc(p->n * sizeof *st);
    if (!st) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    for (uint32_t i = 0; i < p->n; i++) {
        txlm_session *s = p->st[i].s;
        uint32_t need = txlm_rk_rows_needed(s, p->st[i].qlen);
        st[i] = (txlm_attn_stream){.shape = txlm_stream_shape(s, p->st[i].qlen), .row0 = p->st[i].row0,
                                   .own_scratch = s->scratch, .kv = txlm_view_of(&s->kv[0]),
                                   .rk = txlm_view_of(&s->rk[0].buf), .rk_rows = need > s->rk_rows ? need : s->rk_rows,
                                   .probs = s->capture != 0};
    }
    const txlm_layer *L = &m->layers[0];
    int made = txlm_attn_plan_make(&w->ops, st, p->n, txlm_view_of(&w->q), 0, txlm_tensor_view(L->r_w_bias),
                                   txlm_tensor_view(L->r_r_bias), w->scores.size, &p->attn);
    free(st);
    if (!made) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    /* kv_put moves rows in vec4s */
    const txlm_session *s0 = p->st[0].s;
    if (p->st[0].qlen == p->rows && txlm_seg_row(s0) + p->rows <= s0->kv_rows) p->kv = TXLM_KV_DIRECT;
    else p->kv = m->dev.dh % 4 == 0 ? TXLM_KV_PUT : TXLM_KV_COPY;
    return 0;
}

/* Copies qlen keys|values rows from row src_row of src into layer n's
 * ring of s after its memory, wrapping past the ring's last row. */
static void ring_copy(txlm_rec *rec, const txlm_session *s, uint32_t n, const txlm_buf *src, uint32_t src_row, uint32_t qlen)
{
    VkDeviceSize row = (VkDeviceSize)2 * s->m->h.n_head * s->m->dev.dh * 4, at = txlm_seg_row(s);
    VkDeviceSize first = at + qlen <= s->kv_rows ? qlen : s->kv_rows - at;
    txlm_rec_copy(rec, src->buf, src_row * row, s->kv[n].buf, at * row, first * row);
    txlm_rec_copy(rec, src->buf, (src_row + first) * row, s->kv[n].buf, 0, (qlen - first) * row);
}

/* q = c · Wq^T into the pass's queries, k, v = c · [Wk; Wv]^T (the rows
 * of Wqkv after Wq's) into each ring after its memory, one product with
 * two outputs. A segment whose rows would run past its ring's end is
 * projected whole and its rows moved to both ends: projecting the two
 * pieces apart could pick other kernels for their row counts and change
 * a row's bits with where the ring happens to wrap. */
static void queries_keys_values(const txlm_pass *p, uint32_t n, txlm_arg c)
{
    txlm_workspace *w = p->w;
    uint32_t hd = w->m->h.n_head * w->m->dev.dh;
    txlm_arg q = txlm_rows_of(&w->q, 0, hd);
    txlm_linear_args qkv = {.x = c, .w = w->m->layers[n].qkv, .n = 3 * hd, .y = txlm_rows_of(&w->kv_seg, 0, 2 * hd),
                            .m = p->rows, .split_y = &q, .split = hd};
    if (p->kv == TXLM_KV_DIRECT) { /* at the row the step buffer names: the recording serves wherever the ring is */
        qkv.y = txlm_rows_of(&p->st[0].s->kv[n], 0, 2 * hd), qkv.flags = TXLM_LIN_DYN_Y;
        txlm_op_linear(&w->ops, &qkv);
        return;
    }
    txlm_op_linear(&w->ops, &qkv);
    if (p->kv == TXLM_KV_PUT) txlm_op_kv_put_streams(&w->ops, &p->attn, txlm_view_of(&w->kv_seg), p->attn.kv);
    for (uint32_t i = 0; p->kv == TXLM_KV_COPY && i < p->n; i++)
        ring_copy(&w->rec, p->st[i].s, n, &w->kv_seg, p->st[i].row0, p->st[i].qlen);
    txlm_rec_barrier(&w->rec);
}

/* A stream attending alone, its memory's first ring row read from its
 * entry in the step buffer, its queries and outputs at its rows of the
 * pass's; the probabilities (and the score terms) captured where asked. */
static void attend_alone(const txlm_pass *p, uint32_t n, uint32_t i)
{
    txlm_workspace *w = p->w;
    txlm_ops *o = &w->ops;
    txlm_session *s = p->st[i].s;
    const txlm_layer *L = &w->m->layers[n];
    txlm_attn_shape shape = txlm_stream_shape(s, p->st[i].qlen);
    shape.kv_row0 = 0, shape.q0 = p->st[i].row0;
    shape.kv_dyn = 1 + TXLM_ENTRY_TABLE + p->attn.entry[i] * TXLM_ENTRY_WORDS + TXLM_ENTRY_KV_FIRST;
    txlm_view scores = txlm_view_of(&w->scores);
    txlm_attention_args at = {.shape = &shape, .q = txlm_view_of(&w->q), .kv = txlm_view_of(&s->kv[n]),
                              .rk = txlm_view_of(&s->rk[n].buf), .r_w_bias = L->r_w_bias, .r_r_bias = L->r_r_bias,
                              .probs = s->capture ? &scores : NULL, .scratch = scores, .out = txlm_view_of(&w->attn)};
    txlm_attn_dispatch(o, &at, &p->attn.choice[i]);
    if (!s->capture) return;
    uint32_t klen = s->mlen + p->st[i].qlen;
    txlm_rec_copy(o->rec, w->scores.buf, 0, s->cap_probs[n].buf, 0, (VkDeviceSize)s->m->h.n_head * p->st[i].qlen * klen * 4);
    txlm_rec_barrier(o->rec);
    at.out = txlm_view_of(&s->cap_terms[n]);
    if (s->capture > 1) txlm_op_attention_terms(o, &at);
}

void txlm_attend(const txlm_pass *p, uint32_t n, txlm_arg c)
{
    txlm_workspace *w = p->w;
    const txlm_layer *L = &w->m->layers[n];
    for (uint32_t i = 0; i < p->n; i++) /* this layer's rings and position keys */
        p->attn.kv[i] = txlm_view_of(&p->st[i].s->kv[n]), p->attn.rk[i] = txlm_view_of(&p->st[i].s->rk[n].buf);
    queries_keys_values(p, n, c);
    if (p->attn.n_groups)
        txlm_op_attention_streams(&w->ops, &(txlm_attention_streams_args){
                                               .plan = &p->attn, .q = txlm_view_of(&w->q), .out = txlm_view_of(&w->attn),
                                               .scratch = txlm_view_of(&w->scores), .kv = p->attn.kv, .rk = p->attn.rk,
                                               .r_w_bias = L->r_w_bias, .r_r_bias = L->r_r_bias});
    for (uint32_t i = 0; i < p->n; i++)
        if (p->attn.alone[i]) attend_alone(p, n, i);
}
