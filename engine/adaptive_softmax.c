/* The projected adaptive log-softmax (docs/architecture.md, step 5):
 * logits_c = (z · P_c) · W_c^T + b_c; the head is the shortlist plus one
 * logit per tail cluster; a token of tail cluster c gets
 * head_lp[cutoff0 + c - 1] + log_softmax(logits_c). Forward cluster order. */
#include <stdlib.h>

#include "output.h"


/* Logit rows start at multiples of 4 elements, so they can be read as
 * 16-byte texels (workspace.c sizes the buffers with this). */
uint32_t txlm_logit_ld(uint32_t n) { return (n + 3) & ~3u; }

/* z rows as seen by cluster c: projected by P_c when it has one. */
static txlm_arg cluster_input(txlm_workspace *w, uint32_t c, txlm_arg z, uint32_t rows)
{
    const txlm_out_cluster *cl = &w->m->out[c];
    if (!cl->proj) return z;
    txlm_arg zp = txlm_rows_of(&w->zp, 0, cl->dim);
    txlm_op_linear(&w->ops, &(txlm_linear_args){.x = z, .w = cl->proj_t, .n = cl->dim, .y = zp, .m = rows}); /* z · P_c */
    return zp;
}

void txlm_out_head(txlm_workspace *w, uint32_t r0, uint32_t rows, txlm_arg dst, uint32_t n_write, const txlm_arg *pick)
{
    const txlm_model *m = w->m;
    const txlm_out_cluster *cl = &m->out[0];
    uint32_t n = cl->end - cl->begin, head_n = n + m->h.n_cutoffs;
    txlm_arg zc = cluster_input(w, 0, txlm_rows_of(&w->z, r0, m->dev.d), rows);
    txlm_arg head = txlm_rows_of(&w->head, 0, txlm_logit_ld(head_n)), head_lp = txlm_rows_of(&w->head_lp, 0, txlm_logit_ld(head_n));
    txlm_arg cluster_logits = head;
    cluster_logits.off += n;
    /* the shortlist's logits, then one per tail cluster, then log_softmax over both */
    txlm_op_linear(&w->ops, &(txlm_linear_args){.x = zc, .w = cl->weight, .row0 = cl->row0, .n = n, .bias = cl->bias,
                                                .bias_off = cl->row0, .y = head, .m = rows});
    txlm_op_linear(&w->ops, &(txlm_linear_args){.x = zc, .w = m->cluster_w, .n = m->h.n_cutoffs, .bias = m->cluster_b,
                                                .y = cluster_logits, .m = rows});
    txlm_logsoftmax_args ls = {.src = head, .dst = head_lp, .rows = rows, .n = head_n, .n_write = head_n};
    txlm_op_logsoftmax(&w->ops, &ls);
    if (!n_write) return;
    ls.dst = dst, ls.n_write = n_write, ls.pick = pick;
    txlm_op_logsoftmax(&w->ops, &ls);
}

/* Cluster c for `rows` rows of z starting at z (rows of w->zsel when
 * scoring); row_map says which output row each one is. */
static void tail(txlm_workspace *w, uint32_t c, txlm_arg z, uint32_t rows, txlm_arg dst, int add_head, const txlm_arg *pick,
                 const txlm_arg *row_map)
{
    const txlm_model *m = w->m;
    const txlm_out_cluster *cl = &m->out[c];
    uint32_t n = cl->end - cl->begin;
    txlm_arg zc = cluster_input(w, c, z, rows);
    txlm_arg logits = txlm_rows_of(&w->tail, 0, txlm_logit_ld(n));
    txlm_op_linear(&w->ops, &(txlm_linear_args){.x = zc, .w = cl->weight, .row0 = cl->row0, .n = n, .bias = cl->bias,
                                                .bias_off = cl->row0, .y = logits, .m = rows});
    /* log_softmax(logits_c) + head_lp[cutoff0 + c - 1] */
    uint32_t head_n = m->h.cutoffs[0] + m->h.n_cutoffs;
    txlm_arg head_lp = txlm_rows_of(&w->head_lp, 0, txlm_logit_ld(head_n));
    txlm_op_logsoftmax(&w->ops, &(txlm_logsoftmax_args){.src = logits, .dst = dst, .add = add_head ? &head_lp : NULL,
                                                        .add_col = add_head ? m->h.cutoffs[0] + c - 1 : 0, .rows = rows,
                                                        .n = n, .n_write = n, .pick = pick, .pick_base = cl->begin,
                                                        .row_map = row_map});
}

/* Cluster c's log-probabilities of z rows [r0, r0 + rows) within the
 * cluster (plus the head's log-probability of the cluster when add_head). */
static void out_tail(txlm_workspace *w, uint32_t c, uint32_t r0, uint32_t rows, txlm_arg dst, int add_head,
                     const txlm_arg *pick)
{
    tail(w, c, txlm_rows_of(&w->z, r0, w->m->dev.d), rows, dst, add_head, pick, NULL);
}

void txlm_out_tail_rows(txlm_workspace *w, uint32_t c, txlm_arg z, uint32_t rows, txlm_arg dst)
{
    tail(w, c, z, rows, dst, 0, NULL, NULL);
}

/* Scoring, tail clusters: each is computed for the rows whose targets fall
 * in it, gathered from z into w->zsel (as the reference does: a 128-token
 * segment of wt103 text has a few rows per tail cluster, and the tails are
 * over 90% of the vocabulary). */
static int picked_tails(txlm_workspace *w, uint32_t r0, uint32_t rows, const txlm_out_pick *pick, txlm_arg out,
                        txlm_err *err)
{
    const txlm_model *m = w->m;
    uint32_t d = m->dev.d, at = 0;
    int32_t *map = malloc((size_t)rows * sizeof *map);
    VkBufferCopy *copy = malloc((size_t)rows * sizeof *copy);
    if (!map || !copy) {
        free(map), free(copy);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory for %u output rows", rows);
    }
    for (uint32_t c = 1; c < m->n_clusters; c++) {
        uint32_t first = at;
        for (uint32_t i = 0; i < rows; i++) {
            uint32_t t = (uint32_t)pick->host[i];
            if (t < m->out[c].begin || t >= m->out[c].end) continue;
            copy[at - first] = (VkBufferCopy){.srcOffset = (VkDeviceSize)(r0 + i) * d * 4,
                                              .dstOffset = (VkDeviceSize)(at - first) * d * 4, .size = (VkDeviceSize)d * 4};
            map[at++] = (int32_t)i;
        }
        if (at == first) continue;
        txlm_rec_copy_regions(&w->rec, w->z.buf, w->zsel.buf, copy, at - first);
        txlm_rec_barrier(&w->rec);
        txlm_arg dst = out, row_map = txlm_arg_of(&w->rowmap, first, 1);
        dst.off += m->out[c].begin;
        tail(w, c, txlm_rows_of(&w->zsel, 0, d), at - first, dst, 1, &pick->targets, &row_map);
    }
    int rc = at ? txlm_buf_upload(&m->ctx->vk, &w->rowmap, 0, map, (VkDeviceSize)at * sizeof *map, err) : 0;
    free(map), free(copy);
    return rc;
}

int txlm_out_rows(txlm_workspace *w, uint32_t r0, uint32_t rows, const txlm_out_pick *pick, txlm_err *err)
{
    return txlm_out_rows_to(w, r0, rows, pick, txlm_rows_of(&w->out, 0, w->m->h.n_token), err);
}

int txlm_out_rows_to(txlm_workspace *w, uint32_t r0, uint32_t rows, const txlm_out_pick *pick, txlm_arg out, txlm_err *err)
{
    const txlm_hparams *h = &w->m->h;
    const txlm_arg *targets = pick ? &pick->targets : NULL;
    if (h->n_cutoffs == 0) {
        out_tail(w, 0, r0, rows, out, 0, targets);
        return 0;
    }
    txlm_out_head(w, r0, rows, out, h->cutoffs[0], targets);
    if (pick) return picked_tails(w, r0, rows, pick, out, err);
    for (uint32_t c = 1; c < w->m->n_clusters; c++) {
        txlm_arg dst = out;
        dst.off += w->m->out[c].begin;
        out_tail(w, c, r0, rows, dst, 1, NULL);
    }
    return 0;
}
