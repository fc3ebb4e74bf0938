/* The projected adaptive log-softmax (docs/architecture.md, step 5):
 * logits_c = (z · P_c) · W_c^T + b_c; the head is the shortlist plus one
 * logit per tail cluster; a token of tail cluster c gets
 * head_lp[cutoff0 + c - 1] + log_softmax(logits_c). Forward cluster order. */
#include "session.h"

static txlm_arg rows_of(txlm_buf *b, uint32_t row, uint32_t ld) { return txlm_arg_of(b, row * ld, ld); }

/* Logit rows start at multiples of 4 elements, so they can be read as
 * 16-byte texels (session.c sizes the buffers with this). */
uint32_t txlm_logit_ld(uint32_t n) { return (n + 3) & ~3u; }

/* z rows as seen by cluster c: projected by P_c when it has one. */
static txlm_arg cluster_input(txlm_session *s, uint32_t c, uint32_t r0, uint32_t rows)
{
    const txlm_out_cluster *cl = &s->m->out[c];
    txlm_arg z = rows_of(&s->z, r0, s->m->h.d_model);
    if (!cl->proj) return z;
    txlm_arg zp = rows_of(&s->zp, 0, cl->dim);
    txlm_op_linear(&s->ops, z, cl->proj_t, 0, cl->dim, NULL, 0, NULL, zp, rows, 0, 1.0f);
    return zp;
}

void txlm_out_head(txlm_session *s, uint32_t r0, uint32_t rows, txlm_arg dst, uint32_t n_write, const txlm_arg *pick)
{
    const txlm_model *m = s->m;
    const txlm_out_cluster *cl = &m->out[0];
    uint32_t n = cl->end - cl->begin, head_n = n + m->h.n_cutoffs;
    txlm_arg zc = cluster_input(s, 0, r0, rows);
    txlm_arg head = rows_of(&s->head, 0, txlm_logit_ld(head_n)), head_lp = rows_of(&s->head_lp, 0, txlm_logit_ld(head_n));
    txlm_arg cluster_logits = head;
    cluster_logits.off += n;
    txlm_op_linear(&s->ops, zc, cl->weight, cl->row0, n, cl->bias, cl->row0, NULL, head, rows, 0, 1.0f);
    txlm_op_linear(&s->ops, zc, m->cluster_w, 0, m->h.n_cutoffs, m->cluster_b, 0, NULL, cluster_logits, rows, 0, 1.0f);
    txlm_op_logsoftmax(&s->ops, head, head_lp, NULL, 0, rows, head_n, head_n, NULL, 0);
    if (n_write) txlm_op_logsoftmax(&s->ops, head, dst, NULL, 0, rows, head_n, n_write, pick, 0);
}

void txlm_out_tail(txlm_session *s, uint32_t c, uint32_t r0, uint32_t rows, txlm_arg dst, int add_head,
                   const txlm_arg *pick)
{
    const txlm_model *m = s->m;
    const txlm_out_cluster *cl = &m->out[c];
    uint32_t n = cl->end - cl->begin;
    txlm_arg zc = cluster_input(s, c, r0, rows);
    txlm_arg logits = rows_of(&s->tail, 0, txlm_logit_ld(n));
    txlm_op_linear(&s->ops, zc, cl->weight, cl->row0, n, cl->bias, cl->row0, NULL, logits, rows, 0, 1.0f);
    if (add_head) {
        uint32_t head_n = m->h.cutoffs[0] + m->h.n_cutoffs;
        txlm_arg head_lp = rows_of(&s->head_lp, 0, txlm_logit_ld(head_n));
        txlm_op_logsoftmax(&s->ops, logits, dst, &head_lp, m->h.cutoffs[0] + c - 1, rows, n, n, pick, cl->begin);
    } else {
        txlm_op_logsoftmax(&s->ops, logits, dst, NULL, 0, rows, n, n, pick, cl->begin);
    }
}

void txlm_out_rows(txlm_session *s, uint32_t r0, uint32_t rows, uint32_t mask, const txlm_arg *pick)
{
    const txlm_hparams *h = &s->m->h;
    txlm_arg out = rows_of(&s->out, 0, h->n_token);
    if (h->n_cutoffs == 0) {
        txlm_out_tail(s, 0, r0, rows, out, 0, pick);
        return;
    }
    txlm_out_head(s, r0, rows, out, h->cutoffs[0], pick);
    for (uint32_t c = 1; c < s->m->n_clusters; c++) {
        if (!(mask & (1u << c))) continue;
        txlm_arg dst = out;
        dst.off += s->m->out[c].begin;
        txlm_out_tail(s, c, r0, rows, dst, 1, pick);
    }
}
