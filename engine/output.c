/* A pass's output (output.h): the streams' last rows kept, the rows
 * asked for computed in blocks and read back to each stream's caller. */
#include <string.h>

#include "output.h"

void txlm_output_rows(const txlm_pass *p)
{
    txlm_workspace *w = p->w;
    uint32_t d = w->m->dev.d;
    for (uint32_t i = 0; i < p->n; i++)
        txlm_copy_rows(&w->rec, &w->z, p->st[i].row0 + p->st[i].qlen - 1, &p->st[i].s->last, 0, 1, d);
    if (p->gather) { /* through xn: a copy within one buffer must not overlap */
        for (uint32_t i = 0; i < p->n; i++) {
            const txlm_pass_stream *t = &p->st[i];
            txlm_copy_rows(&w->rec, &w->z, t->row0 + t->qlen - t->want, &w->xn, t->out0, t->want, d);
        }
        txlm_rec_barrier(&w->rec);
        txlm_copy_rows(&w->rec, &w->xn, 0, &w->z, 0, p->out, d);
    }
    txlm_rec_barrier(&w->rec);
}

/* The output layer for output rows [r0, r0 + rows). */
static int record_block(const txlm_pass *p, uint32_t r0, uint32_t rows, txlm_err *err)
{
    txlm_out_pick pick = {txlm_arg_of(&p->w->targets, r0, 1), p->targets + r0};
    return txlm_out_rows(p->w, p->out_z + r0, rows, p->score ? &pick : NULL, err);
}

/* Stream t's rows of the block of output rows [r0, r0 + rows), read back
 * from out into what its caller asked for. */
static int collect_stream(const txlm_pass *p, const txlm_pass_stream *t, const float *out, uint32_t r0, uint32_t rows,
                          txlm_err *err)
{
    uint32_t V = p->w->m->h.n_token, lo = r0 > t->out0 ? r0 : t->out0, hi = t->out0 + t->want;
    if (hi > r0 + rows) hi = r0 + rows;
    if (lo >= hi) return 0;
    const txlm_stream_feed *f = t->f;
    uint32_t at = lo - t->out0, pos = f->first_row + at, k = hi - lo;
    const float *src = out + (size_t)(lo - r0) * V;
    int rc = 0;
    if (f->logprobs) {
        float *dst = f->logprobs + (size_t)at * V;
        memcpy(dst, src, (size_t)k * V * sizeof *dst);
        rc = txlm_session_check_finite(t->s, dst, (uint64_t)k * V, pos, k, 0, NULL, err);
    } else {
        for (uint32_t j = 0; j < k; j++) f->target_logprobs[at + j] = src[(size_t)j * V + (uint32_t)f->targets[at + j]];
        rc = txlm_session_check_finite(t->s, f->target_logprobs + at, k, pos, k, 0, f->targets + at, err);
    }
    /* memory that produced NaN or infinity would only produce more */
    if (rc == TXLM_ERR_NONFINITE) txlm_session_forget(t->s, 1);
    return rc;
}

/* A block read back to every stream it holds. A stream's non-finite
 * values fail the call, naming it where streams are named; the other
 * streams' outputs are still written (their memory has moved on). The
 * first error goes to err, later ones nowhere. */
static int collect(const txlm_pass *p, uint32_t r0, uint32_t rows, txlm_err *err)
{
    int rc = txlm_buf_invalidate(&p->w->m->ctx->vk, &p->w->out, err);
    if (rc) return rc;
    int first = 0;
    txlm_err later;
    for (uint32_t i = 0; i < p->n; i++) {
        rc = collect_stream(p, &p->st[i], p->w->out.map, r0, rows, first ? &later : err);
        if (rc && !first) {
            txlm_blame_stream(p->blame, err, i);
            first = rc;
        }
    }
    return first;
}

int txlm_output_read(const txlm_pass *p, txlm_err *err)
{
    txlm_workspace *w = p->w;
    uint32_t block = p->out < w->out_rows ? p->out : w->out_rows;
    int rc = block ? record_block(p, 0, block, err) : 0;
    if (!rc) rc = txlm_workspace_submit(w, err);
    if (rc) {
        for (uint32_t i = 0; i < p->n; i++) txlm_session_forget(p->st[i].s, 1);
        return rc;
    }
    /* after a stream's non-finite values (its error kept in err) the
     * other blocks are still read back */
    int bad = 0;
    txlm_err later, *e = err;
    for (uint32_t done = 0; !rc && done < p->out; done += block) {
        uint32_t rows = p->out - done < block ? p->out - done : block;
        if (done) rc = txlm_rec_begin(&w->rec, e);
        if (done && !rc) rc = record_block(p, done, rows, e);
        if (done && !rc) rc = txlm_workspace_submit(w, e);
        if (!rc) rc = collect(p, done, rows, e);
        if (rc == TXLM_ERR_NONFINITE) bad = bad ? bad : rc, rc = 0, e = &later;
    }
    if (rc && bad) *err = later; /* the device failed after all: that is the error */
    return rc ? rc : bad;
}
