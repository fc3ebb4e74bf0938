/* The next token of n >= 1 streams (sample.h): each stream's last row
 * gathered into the workspace's rows, the output layer run once for all
 * of them, each draw made with that stream's own sampler. A lone draw is
 * one stream through its session's workspace (session.c). */
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "sample.h"

/* A group of streams drawn alike: the workspace, the caller's index of
 * each (errors name it), and the first error of the call. A stream's
 * failure fails the call naming it; the other streams still draw. The
 * first error goes to err, later ones nowhere. */
typedef struct group {
    txlm_workspace *w;
    txlm_session *const *s;
    uint32_t n;
    const uint32_t *names;
    txlm_blame *blame;
    txlm_err *err, later;
    int rc;
} group;

static txlm_err *err_for(group *g) { return g->rc ? &g->later : g->err; }

static void note_error(group *g, int rc, uint32_t i)
{
    if (!rc || g->rc) return;
    txlm_blame_stream(g->blame, g->err, g->names[i]);
    g->rc = rc;
}

/* Row i of w->z = the last row of stream i. */
static void gather_last_rows(txlm_workspace *w, txlm_session *const *s, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) txlm_copy_rows(&w->rec, &s[i]->last, 0, &w->z, i, 1, w->m->dev.d);
    txlm_rec_barrier(&w->rec);
}

static const float *out_row(const txlm_workspace *w, uint32_t i)
{
    return (const float *)w->out.map + (size_t)i * w->m->h.n_token;
}

/* Every row's whole distribution; each stream penalised and drawn on its own. */
static int draw_full(group *g, const txlm_sampling *o, const txlm_repeat_penalty *const *pen, int32_t *tokens)
{
    txlm_workspace *w = g->w;
    uint32_t V = w->m->h.n_token;
    int rc = txlm_out_rows(w, 0, g->n, NULL, g->err);
    if (!rc) rc = txlm_workspace_submit(w, g->err);
    if (!rc) rc = txlm_buf_invalidate(&w->m->ctx->vk, &w->out, g->err);
    for (uint32_t i = 0; i < g->n && !rc; i++) {
        txlm_session *s = g->s[i];
        txlm_err *e = err_for(g);
        memcpy(w->host_lp, out_row(w, i), (size_t)V * sizeof *w->host_lp);
        int ri = txlm_session_check_finite(s, w->host_lp, V, s->z_rows - 1, 1, 0, NULL, e);
        if (!ri && pen && txlm_sampling_penalized(pen[i])) ri = txlm_apply_penalty(w->host_lp, V, pen[i], e);
        if (!ri) ri = txlm_draw_filtered(w->host_lp, V, o, &s->rng, &tokens[i], e);
        note_error(g, ri, i);
    }
    return rc ? rc : g->rc;
}

/* The tail clusters the head draws fell in: the rows of each gathered
 * into zsel one cluster after another, each drawn within its cluster. */
static int draw_tails(group *g, const uint32_t *cluster, int32_t *tokens)
{
    txlm_workspace *w = g->w;
    const txlm_model *m = w->m;
    uint32_t d = m->dev.d, V = m->h.n_token, k = 0, *at = malloc(g->n * sizeof *at);
    if (!at) return txlm_fail(err_for(g), TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    int rc = txlm_rec_begin(&w->rec, err_for(g));
    for (uint32_t c = 1; !rc && c < m->n_clusters; c++) {
        uint32_t k0 = k;
        for (uint32_t i = 0; i < g->n; i++)
            if (cluster[i] == c) txlm_copy_rows(&w->rec, &w->z, i, &w->zsel, k, 1, d), at[i] = k++;
        if (k == k0) continue;
        txlm_rec_barrier(&w->rec);
        txlm_out_tail_rows(w, c, txlm_rows_of(&w->zsel, k0, d), k - k0, txlm_rows_of(&w->out, k0, V));
    }
    if (!rc) rc = txlm_workspace_submit(w, err_for(g));
    if (!rc) rc = txlm_buf_invalidate(&m->ctx->vk, &w->out, err_for(g));
    for (uint32_t i = 0; i < g->n && !rc; i++) {
        if (!cluster[i]) continue;
        txlm_session *s = g->s[i];
        const txlm_out_cluster *cl = &m->out[cluster[i]];
        uint32_t nc = cl->end - cl->begin;
        memcpy(w->host_lp, out_row(w, at[i]), (size_t)nc * sizeof *w->host_lp);
        int ri = txlm_session_check_finite(s, w->host_lp, nc, s->z_rows - 1, 1, cl->begin, NULL, err_for(g));
        if (!ri) tokens[i] = (int32_t)(cl->begin + txlm_draw(w->host_lp, nc, 1.0, &s->rng));
        note_error(g, ri, i);
    }
    free(at);
    return rc ? rc : g->rc;
}

/* Hierarchical draws: the head for every row, then the tails drawn into. */
static int draw_tree(group *g, int32_t *tokens)
{
    txlm_workspace *w = g->w;
    const txlm_hparams *h = &w->m->h;
    uint32_t head_n = h->cutoffs[0] + h->n_cutoffs, any = 0, *cluster = calloc(g->n, sizeof *cluster);
    if (!cluster) return txlm_fail(g->err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    txlm_out_head(w, 0, g->n, txlm_rows_of(&w->out, 0, h->n_token), head_n, NULL);
    int rc = txlm_workspace_submit(w, g->err);
    if (!rc) rc = txlm_buf_invalidate(&w->m->ctx->vk, &w->out, g->err);
    for (uint32_t i = 0; i < g->n && !rc; i++) {
        txlm_session *s = g->s[i];
        memcpy(w->host_lp, out_row(w, i), (size_t)head_n * sizeof *w->host_lp);
        int ri = txlm_check_head(s, w->host_lp, s->z_rows - 1, head_n, err_for(g));
        note_error(g, ri, i);
        if (ri) continue; /* its token stays -1 */
        uint32_t t = txlm_draw(w->host_lp, head_n, 1.0, &s->rng);
        tokens[i] = (int32_t)t;
        if (t >= h->cutoffs[0]) cluster[i] = t - h->cutoffs[0] + 1, any = 1;
    }
    if (!rc && any) rc = draw_tails(g, cluster, tokens);
    free(cluster);
    return rc ? rc : g->rc;
}

/* Streams s[0, n), all drawn the same way (exact tree or not), n <= out_rows. */
static int sample_group(group *g, const txlm_sampling *o, const txlm_repeat_penalty *const *pen, int exact,
                        int32_t *tokens)
{
    int rc = txlm_rec_begin(&g->w->rec, g->err);
    if (rc) return rc;
    gather_last_rows(g->w, g->s, g->n);
    return exact ? draw_tree(g, tokens) : draw_full(g, o, pen, tokens);
}

/* What is refused before any work: the options, a stream never fed. */
static int check_streams(txlm_session *const *s, uint32_t n, const txlm_sampling *o, const txlm_repeat_penalty *const *pen,
                         txlm_blame *blame, txlm_err *err)
{
    for (uint32_t i = 0; i < n; i++) {
        int rc = txlm_sampling_check(o, pen ? pen[i] : NULL, s[i]->m->h.n_token, err);
        if (!rc && s[i]->z_rows == 0)
            rc = txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "nothing to sample from: feed at least one token first");
        if (rc) txlm_blame_stream(blame, err, i);
        if (rc) return rc;
    }
    return 0;
}

int txlm_sample_streams(txlm_workspace *w, txlm_session *const *s, uint32_t n, const txlm_sampling *o,
                        const txlm_repeat_penalty *const *pen, txlm_blame *blame, int32_t *tokens, txlm_err *err)
{
    const txlm_hparams *h = &w->m->h;
    int rc = check_streams(s, n, o, pen, blame, err);
    if (rc) return rc;
    /* streams drawn alike go together, in groups that fit the output rows */
    txlm_session **grp = malloc(n * sizeof *grp);
    const txlm_repeat_penalty **gpen = malloc(n * sizeof *gpen);
    uint32_t *idx = malloc(n * sizeof *idx);
    int32_t *got = malloc(n * sizeof *got);
    rc = grp && gpen && idx && got ? 0 : txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    txlm_err later;
    for (uint32_t i = 0; got && i < n; i++) got[i] = -1;
    for (int exact = 0; exact < 2 && (!rc || rc == TXLM_ERR_NONFINITE); exact++) {
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; i++)
            if (txlm_sample_exact(h, o, pen ? pen[i] : NULL) == exact) grp[k] = s[i], gpen[k] = pen ? pen[i] : NULL, idx[k++] = i;
        for (uint32_t g0 = 0; g0 < k && (!rc || rc == TXLM_ERR_NONFINITE); g0 += w->out_rows) {
            group g = {.w = w, .s = grp + g0, .n = k - g0 < w->out_rows ? k - g0 : w->out_rows, .names = idx + g0,
                       .blame = blame, .err = rc ? &later : err};
            int rg = sample_group(&g, o, gpen + g0, exact, got + g0);
            if (rg && (!rc || rg != TXLM_ERR_NONFINITE)) rc = rg; /* the first non-finite, or the device */
        }
        for (uint32_t j = 0; j < k; j++) tokens[idx[j]] = got[j]; /* -1 where a stream failed */
    }
    free(grp), free(gpen), free(idx), free(got);
    return rc;
}

int txlm_next_row_to(txlm_workspace *w, txlm_session *s, txlm_buf *dst, txlm_err *err)
{
    if (s->z_rows == 0) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "no next token yet: feed at least one token first");
    int rc = txlm_rec_begin(&w->rec, err);
    /* the program's commands submitted before may still read dst (txlm_vulkan.h) */
    if (!rc) txlm_rec_wait_queue(&w->rec);
    if (!rc) gather_last_rows(w, &s, 1);
    if (!rc) rc = txlm_out_rows_to(w, 0, 1, NULL, txlm_rows_of(dst, 0, s->m->h.n_token), err);
    return rc ? rc : txlm_workspace_submit(w, err);
}

int txlm_next_rows(txlm_workspace *w, txlm_session *const *s, uint32_t n, txlm_blame *blame, float *out, txlm_err *err)
{
    uint32_t V = w->m->h.n_token;
    for (uint32_t i = 0; i < n; i++)
        if (s[i]->z_rows == 0) {
            txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "no next token yet: feed at least one token first");
            return txlm_blame_stream(blame, err, i);
        }
    int first = 0; /* a stream's non-finite row fails the call naming it; the others' rows are still written */
    txlm_err later;
    for (uint32_t g0 = 0; g0 < n; g0 += w->out_rows) {
        uint32_t k = n - g0 < w->out_rows ? n - g0 : w->out_rows;
        txlm_err *e = first ? &later : err;
        int rc = txlm_rec_begin(&w->rec, e);
        if (!rc) gather_last_rows(w, s + g0, k);
        if (!rc) rc = txlm_out_rows(w, 0, k, NULL, e);
        if (!rc) rc = txlm_workspace_submit(w, e);
        if (!rc) rc = txlm_buf_invalidate(&w->m->ctx->vk, &w->out, e);
        if (rc) { /* the device failed: that outweighs a stream's non-finite row */
            if (e != err) *err = *e;
            return rc;
        }
        for (uint32_t i = 0; i < k; i++) {
            float *row = out + (size_t)(g0 + i) * V;
            txlm_session *si = s[g0 + i];
            memcpy(row, out_row(w, i), (size_t)V * sizeof *row);
            e = first ? &later : err;
            int ri = txlm_session_check_finite(si, row, V, si->z_rows - 1, 1, 0, NULL, e);
            if (ri && !first) first = ri, txlm_blame_stream(blame, err, g0 + i);
        }
    }
    return first;
}

int txlm_next_row(txlm_workspace *w, txlm_session *s, txlm_err *err) { return txlm_next_rows(w, &s, 1, NULL, w->host_lp, err); }
