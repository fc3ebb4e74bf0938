/* The next token of several sessions, the output layer run once for all
 * of them: each session's last row is gathered into the batch's rows, and
 * each draw uses that session's own sampler, as txlm_sample_next does
 * alone (sample.c): hierarchical at temperature 1 with no filter or
 * penalty (the head for every row in one submission, then each tail
 * cluster drawn for the rows that fell in it, in a second), else from the
 * whole distribution of each row. */
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "nonfinite.h"
#include "sample.h"

static txlm_arg rows_of(txlm_buf *b, uint32_t row, uint32_t ld) { return txlm_arg_of(b, row * ld, ld); }

/* A stream's failure (a non-finite distribution, a bad penalty) fails the
 * call naming it; the other streams still draw. The first error goes to
 * err, later ones nowhere. */
typedef struct first_error {
    txlm_err *err, later;
    int rc;
    const uint32_t *names; /* the caller's index of each stream of the group */
} first_error;

static txlm_err *err_for(first_error *f) { return f->rc ? &f->later : f->err; }

static void note_error(first_error *f, int rc, uint32_t i)
{
    if (!rc || f->rc) return;
    txlm_fail_prefix(f->err, "stream %u: ", f->names[i]);
    f->rc = rc;
}

/* Row i of w->z = the last row of session i. */
static void gather_last_rows(txlm_session *w, txlm_session *const *s, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) txlm_copy_rows(&w->rec, &s[i]->z, s[i]->z_rows - 1, &w->z, i, 1, w->m->dev.d);
    txlm_rec_barrier(&w->rec);
}

static const float *out_row(txlm_session *w, uint32_t i) { return (const float *)w->out.map + (size_t)i * w->m->h.n_token; }

/* Every row's whole distribution; each stream penalised and drawn on its own. */
static int draw_full(txlm_batch *b, txlm_session *const *s, uint32_t n, const txlm_sampling *o,
                     const txlm_repeat_penalty *const *pen, int32_t *tokens, txlm_err *err)
{
    txlm_session *w = b->w;
    uint32_t V = b->m->h.n_token;
    int rc = txlm_out_rows(w, 0, n, NULL, err);
    if (!rc) rc = txlm_session_submit(w, err);
    if (!rc) rc = txlm_buf_invalidate(&b->m->ctx->vk, &w->out, err);
    first_error fe = {.err = err, .names = b->names};
    for (uint32_t i = 0; i < n && !rc; i++) {
        txlm_err *e = err_for(&fe);
        memcpy(s[i]->host_lp, out_row(w, i), (size_t)V * sizeof *s[i]->host_lp);
        int ri = txlm_session_check_finite(s[i], s[i]->host_lp, V, s[i]->z_rows - 1, 1, 0, NULL, e);
        if (!ri && pen && txlm_sampling_penalized(pen[i])) ri = txlm_apply_penalty(s[i]->host_lp, V, pen[i], e);
        if (!ri) ri = txlm_draw_filtered(s[i]->host_lp, V, o, &s[i]->rng, &tokens[i], e);
        note_error(&fe, ri, i);
    }
    return rc ? rc : fe.rc;
}

/* The tail clusters the head draws fell in: the rows of each gathered
 * into zsel one cluster after another, each drawn within its cluster. */
static int draw_tails(txlm_batch *b, txlm_session *const *s, uint32_t n, const uint32_t *cluster, int32_t *tokens,
                      txlm_err *err)
{
    txlm_session *w = b->w;
    const txlm_model *m = b->m;
    uint32_t d = m->dev.d, V = m->h.n_token, k = 0, *at = malloc(n * sizeof *at);
    if (!at) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    int rc = txlm_rec_begin(&w->rec, err);
    for (uint32_t c = 1; !rc && c < m->n_clusters; c++) {
        uint32_t k0 = k;
        for (uint32_t i = 0; i < n; i++)
            if (cluster[i] == c) txlm_copy_rows(&w->rec, &w->z, i, &w->zsel, k, 1, d), at[i] = k++;
        if (k == k0) continue;
        txlm_rec_barrier(&w->rec);
        txlm_out_tail_rows(w, c, rows_of(&w->zsel, k0, d), k - k0, rows_of(&w->out, k0, V));
    }
    if (!rc) rc = txlm_session_submit(w, err);
    if (!rc) rc = txlm_buf_invalidate(&m->ctx->vk, &w->out, err);
    first_error fe = {.err = err, .names = b->names};
    for (uint32_t i = 0; i < n && !rc; i++) {
        if (!cluster[i]) continue;
        const txlm_out_cluster *cl = &m->out[cluster[i]];
        uint32_t nc = cl->end - cl->begin;
        memcpy(s[i]->host_lp, out_row(w, at[i]), (size_t)nc * sizeof *s[i]->host_lp);
        int ri = txlm_session_check_finite(s[i], s[i]->host_lp, nc, s[i]->z_rows - 1, 1, cl->begin, NULL, err_for(&fe));
        if (!ri) tokens[i] = (int32_t)(cl->begin + txlm_draw(s[i]->host_lp, nc, 1.0, &s[i]->rng));
        note_error(&fe, ri, i);
    }
    free(at);
    return rc ? rc : fe.rc;
}

/* Hierarchical draws: the head for every row, then the tails drawn into. */
static int draw_tree(txlm_batch *b, txlm_session *const *s, uint32_t n, int32_t *tokens, txlm_err *err)
{
    txlm_session *w = b->w;
    const txlm_hparams *h = &b->m->h;
    uint32_t head_n = h->cutoffs[0] + h->n_cutoffs, any = 0, *cluster = calloc(n, sizeof *cluster);
    if (!cluster) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    txlm_out_head(w, 0, n, rows_of(&w->out, 0, h->n_token), head_n, NULL);
    int rc = txlm_session_submit(w, err);
    if (!rc) rc = txlm_buf_invalidate(&b->m->ctx->vk, &w->out, err);
    first_error fe = {.err = err, .names = b->names};
    for (uint32_t i = 0; i < n && !rc; i++) {
        memcpy(s[i]->host_lp, out_row(w, i), (size_t)head_n * sizeof *s[i]->host_lp);
        int ri = txlm_check_head(s[i], s[i]->host_lp, s[i]->z_rows - 1, head_n, err_for(&fe));
        uint32_t t = ri ? 0 : txlm_draw(s[i]->host_lp, head_n, 1.0, &s[i]->rng);
        tokens[i] = (int32_t)t;
        if (t >= h->cutoffs[0]) cluster[i] = t - h->cutoffs[0] + 1, any = 1;
        note_error(&fe, ri, i);
    }
    if (!rc && any) rc = draw_tails(b, s, n, cluster, tokens, err_for(&fe));
    free(cluster);
    return rc ? rc : fe.rc;
}

/* Streams [0, n), all drawn the same way (exact tree or not), n <= out_rows. */
static int sample_group(txlm_batch *b, txlm_session *const *s, uint32_t n, const txlm_sampling *o,
                        const txlm_repeat_penalty *const *pen, int exact, int32_t *tokens, txlm_err *err)
{
    int rc = txlm_rec_begin(&b->w->rec, err);
    if (rc) return rc;
    gather_last_rows(b->w, s, n);
    return exact ? draw_tree(b, s, n, tokens, err) : draw_full(b, s, n, o, pen, tokens, err);
}

int txlm_batch_sample_next(txlm_batch *b, txlm_session *const *s, uint32_t n, const txlm_sampling *o,
                           const txlm_repeat_penalty *const *pen, int32_t *tokens, txlm_err *err)
{
    if (n == 1 && s[0]->out.buf) return txlm_sample_next(s[0], o, pen ? pen[0] : NULL, tokens, err);
    const txlm_hparams *h = &b->m->h;
    for (uint32_t i = 0; i < n; i++) {
        int rc = txlm_sampling_check(o, pen ? pen[i] : NULL, h->n_token, err);
        if (rc) return txlm_fail_prefix(err, "stream %u: ", i), rc;
        if (s[i]->z_rows == 0)
            return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "stream %u: nothing to sample from: feed at least one token first", i);
    }
    /* streams drawn alike go together, in groups that fit the output rows */
    txlm_session **grp = malloc(n * sizeof *grp);
    const txlm_repeat_penalty **gpen = malloc(n * sizeof *gpen);
    uint32_t *idx = malloc(n * sizeof *idx);
    int32_t *got = malloc(n * sizeof *got);
    int rc = grp && gpen && idx && got ? 0 : txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    txlm_err later;
    for (uint32_t i = 0; got && i < n; i++) got[i] = -1;
    for (int exact = 0; exact < 2 && (!rc || rc == TXLM_ERR_NONFINITE); exact++) {
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; i++)
            if (txlm_sample_exact(h, o, pen ? pen[i] : NULL) == exact) grp[k] = s[i], gpen[k] = pen ? pen[i] : NULL, idx[k++] = i;
        for (uint32_t g0 = 0; g0 < k && (!rc || rc == TXLM_ERR_NONFINITE); g0 += b->w->out_rows) {
            uint32_t g = k - g0 < b->w->out_rows ? k - g0 : b->w->out_rows;
            b->names = idx + g0;
            int rg = sample_group(b, grp + g0, g, o, gpen + g0, exact, got + g0, rc ? &later : err);
            if (rg && (!rc || rg != TXLM_ERR_NONFINITE)) rc = rg; /* the first non-finite, or the device */
        }
        for (uint32_t j = 0; j < k; j++) tokens[idx[j]] = got[j]; /* -1 where a stream failed */
    }
    free(grp), free(gpen), free(idx), free(got);
    return rc;
}
