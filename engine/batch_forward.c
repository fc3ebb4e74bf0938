/* Several streams' segments in one pass: one recording, one submission.
 * The rows of all streams, one stream after another, go through the
 * embedding, the projections and the feed-forward together (a product
 * over many rows reads each weight once for all of them); attention runs
 * per stream over its own ring (forward.c). The output layer runs over
 * the rows asked for, gathered together. */
#include <stdlib.h>
#include <string.h>

#include "attn_streams.h"
#include "batch.h"

/* The pass's layout on the host: each stream's rows, and where its rows
 * asked for sit among the gathered output rows. */
typedef struct plan {
    txlm_pass_stream *st;
    uint32_t *out0, *want; /* per stream: first gathered output row, rows asked for */
    int32_t *tokens;       /* [rows] */
    int32_t *targets;      /* [out] when scoring */
    uint32_t rows, out;
    int score;             /* every stream asking for output scores targets */
    int gathered;          /* the rows asked for are not simply all rows */
} plan;

static void plan_free(plan *p) { free(p->st), free(p->out0), free(p->want), free(p->tokens), free(p->targets); }

static int make_plan(const txlm_stream_feed *f, uint32_t n, plan *p, txlm_err *err)
{
    memset(p, 0, sizeof *p);
    p->score = 1;
    for (uint32_t i = 0; i < n; i++) {
        p->rows += f[i].n;
        if (f[i].logprobs) p->score = 0;
    }
    p->st = calloc(n, sizeof *p->st), p->out0 = calloc(n, sizeof *p->out0), p->want = calloc(n, sizeof *p->want);
    p->tokens = malloc(p->rows * sizeof *p->tokens), p->targets = malloc(p->rows * sizeof *p->targets);
    if (!p->st || !p->out0 || !p->want || !p->tokens || !p->targets) {
        plan_free(p);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory for a batch of %u rows", p->rows);
    }
    for (uint32_t i = 0, row = 0; i < n; row += f[i].n, i++) {
        p->st[i] = (txlm_pass_stream){f[i].session, row, f[i].n};
        memcpy(p->tokens + row, f[i].tokens, f[i].n * sizeof *p->tokens);
        p->want[i] = f[i].logprobs || f[i].targets ? f[i].n - f[i].first_row : 0;
        p->out0[i] = p->out;
        if (f[i].targets) memcpy(p->targets + p->out, f[i].targets, p->want[i] * sizeof *p->targets);
        p->gathered |= p->want[i] != f[i].n;
        p->out += p->want[i];
    }
    return 0;
}

/* What the device reads first: zero memories, the tokens, the targets. */
static int upload(txlm_batch *b, const txlm_stream_feed *f, uint32_t n, const plan *p, txlm_err *err)
{
    txlm_session *w = b->w;
    int rc = 0;
    for (uint32_t i = 0; i < n && !rc; i++) {
        txlm_session *s = f[i].session;
        if (s->zero_memory && s->mlen == 0 && s->mem_len) rc = txlm_session_zero_fill(s, err);
    }
    if (!rc) rc = txlm_buf_upload(&b->m->ctx->vk, &w->ids, 0, p->tokens, p->rows * sizeof *p->tokens, err);
    if (!rc && p->score && p->out) rc = txlm_buf_upload(&b->m->ctx->vk, &w->targets, 0, p->targets, p->out * sizeof *p->targets, err);
    return rc;
}

/* Attention in shared dispatches (attn_streams.h), each stream's shape in
 * the step buffer's entries, uploaded here; *shared 0 where some stream
 * cannot attend that way (the pass then attends stream by stream). The
 * position keys of the stream with the most rows (after this pass grows
 * them) serve all: every session computes the same rows alike (forward.c,
 * grow_position_keys). */
static int attention_plan(txlm_batch *b, const plan *p, uint32_t n, txlm_pass *pass, txlm_attn_plan *ap, txlm_err *err)
{
    txlm_session *w = b->w;
    txlm_attn_stream *st = malloc(n * sizeof *st);
    if (!st) return 0; /* stream by stream */
    uint32_t most = 0;
    for (uint32_t i = 0; i < n; i++) {
        txlm_session *s = p->st[i].s;
        uint32_t need = txlm_rk_rows_needed(s, p->st[i].qlen), rows = need > s->rk_rows ? need : s->rk_rows;
        if (rows > most) most = rows, pass->rk_from = s;
        st[i] = (txlm_attn_stream){.shape = txlm_stream_shape(s, p->st[i].qlen, 0), .row0 = p->st[i].row0,
                                   .own_scratch = s->scores.size, .kv = txlm_view_of(&s->kv[0])};
    }
    const txlm_layer *L = &b->m->layers[0];
    int shared = txlm_attn_plan_make(&w->ops, st, n, txlm_view_of(&w->q), txlm_view_of(&pass->rk_from->rk[0].buf), 0,
                                     txlm_tensor_view(L->r_w_bias), txlm_tensor_view(L->r_r_bias), w->scores.size, ap);
    free(st);
    if (!shared) return 0;
    pass->attn = ap;
    return txlm_buf_upload(&b->m->ctx->vk, &w->replay.step_host, 0, ap->words,
                           (TXLM_ENTRY_TABLE + n * TXLM_ENTRY_WORDS) * sizeof *ap->words, err);
}

/* Each session keeps its own last rows (sampling and next-token calls
 * read them), then the rows asked for are gathered to the front of z. */
static void record_rows_out(txlm_batch *b, uint32_t n, const plan *p, const txlm_stream_feed *f)
{
    txlm_session *w = b->w;
    uint32_t d = b->m->dev.d;
    for (uint32_t i = 0; i < n; i++) txlm_copy_rows(&w->rec, &w->z, p->st[i].row0, &p->st[i].s->z, 0, p->st[i].qlen, d);
    if (p->gathered) { /* through xn: a copy within one buffer must not overlap */
        for (uint32_t i = 0; i < n; i++)
            txlm_copy_rows(&w->rec, &w->z, p->st[i].row0 + f[i].first_row, &w->xn, p->out0[i], p->want[i], d);
        txlm_rec_barrier(&w->rec);
        txlm_copy_rows(&w->rec, &w->xn, 0, &w->z, 0, p->out, d);
    }
    txlm_rec_barrier(&w->rec);
}

static int record_out(txlm_batch *b, const plan *p, uint32_t r0, uint32_t rows, txlm_err *err)
{
    txlm_out_pick pick = {txlm_arg_of(&b->w->targets, r0, 1), p->targets + r0};
    return txlm_out_rows(b->w, r0, rows, p->score ? &pick : NULL, err);
}

/* Copies the output block of gathered rows [r0, r0 + rows) to the streams it holds. */
static int collect(txlm_batch *b, const txlm_stream_feed *f, uint32_t n, const plan *p, uint32_t r0, uint32_t rows,
                   txlm_err *err)
{
    uint32_t V = b->m->h.n_token;
    int rc = txlm_buf_invalidate(&b->m->ctx->vk, &b->w->out, err);
    /* a stream's non-finite values fail the call, naming it; the other
     * streams' outputs are still written (their memory has moved on) */
    if (rc) return rc;
    int first = 0;
    txlm_err later;
    for (uint32_t i = 0; i < n; i++) {
        txlm_err *e = first ? &later : err;
        rc = 0;
        uint32_t lo = r0 > p->out0[i] ? r0 : p->out0[i], hi = p->out0[i] + p->want[i];
        if (hi > r0 + rows) hi = r0 + rows;
        if (lo >= hi) continue;
        uint32_t at = lo - p->out0[i], pos = f[i].first_row + at, k = hi - lo;
        const float *src = (const float *)b->w->out.map + (size_t)(lo - r0) * V;
        if (f[i].logprobs) {
            float *dst = f[i].logprobs + (size_t)at * V;
            memcpy(dst, src, (size_t)k * V * sizeof *dst);
            rc = txlm_session_check_finite(f[i].session, dst, (uint64_t)k * V, pos, k, 0, NULL, e);
        } else if (f[i].targets) {
            for (uint32_t j = 0; j < k; j++) f[i].target_logprobs[at + j] = src[(size_t)j * V + (uint32_t)f[i].targets[at + j]];
            rc = txlm_session_check_finite(f[i].session, f[i].target_logprobs + at, k, pos, k, 0, f[i].targets + at, e);
        }
        /* memory that produced NaN or infinity would only produce more */
        if (rc == TXLM_ERR_NONFINITE) txlm_session_forget(f[i].session, 1);
        if (rc && !first) {
            txlm_fail_prefix(err, "stream %u: ", i);
            first = rc;
        }
    }
    return first;
}

/* The output rows in blocks that fit one binding: the first block rides
 * in the pass's command buffer, the others get their own. */
static int submit_and_read_back(txlm_batch *b, const txlm_stream_feed *f, uint32_t n, const plan *p, txlm_err *err)
{
    txlm_session *w = b->w;
    uint32_t block = p->out < w->out_rows ? p->out : w->out_rows;
    int rc = block ? record_out(b, p, 0, block, err) : 0;
    if (!rc) rc = txlm_session_submit(w, err);
    if (rc) {
        for (uint32_t i = 0; i < n; i++) txlm_session_forget(f[i].session, 1);
        return rc;
    }
    /* after a stream's non-finite values (its error kept in err) the
     * other streams' blocks are still read back */
    int bad = 0;
    txlm_err later, *e = err;
    for (uint32_t done = 0; !rc && done < p->out; done += block) {
        uint32_t rows = p->out - done < block ? p->out - done : block;
        if (done) rc = txlm_rec_begin(&w->rec, e);
        if (done && !rc) rc = record_out(b, p, done, rows, e);
        if (done && !rc) rc = txlm_session_submit(w, e);
        if (!rc) rc = collect(b, f, n, p, done, rows, e);
        if (rc == TXLM_ERR_NONFINITE) bad = bad ? bad : rc, rc = 0, e = &later;
    }
    if (rc && bad) *err = later; /* the device failed after all: that is the error */
    return rc ? rc : bad;
}

/* The pass's commands, recorded or a kept recording of them submitted
 * again (replay.h); then the output rows asked for. */
static int run_pass(txlm_batch *b, const txlm_stream_feed *f, uint32_t n, const plan *p, txlm_pass *pass,
                    txlm_err *err)
{
    txlm_session *w = b->w;
    pass->all_clusters = txlm_replay_pass_keyable(pass, p->out);
    int slot = txlm_replay_pass_slot(pass), rc;
    if (slot > 0) {
        rc = txlm_rec_replay(&w->rec, (uint32_t)slot, err);
        for (uint32_t i = 0; i < n; i++) rc ? txlm_session_forget(f[i].session, 1) : txlm_segment_fed(f[i].session, f[i].n);
        return rc;
    }
    rc = slot < 0 ? txlm_rec_begin_kept(&w->rec, (uint32_t)-slot, err) : txlm_rec_begin(&w->rec, err);
    if (rc) return rc;
    txlm_record_layers(pass);
    record_rows_out(b, n, p, f);
    for (uint32_t i = 0; i < n; i++) txlm_segment_fed(f[i].session, f[i].n);
    return submit_and_read_back(b, f, n, p, err);
}

int txlm_batch_forward(txlm_batch *b, const txlm_stream_feed *f, uint32_t n, txlm_err *err)
{
    /* one stream: the lone pass itself (kept recordings and all), unless
     * it would allocate the session's own output buffers, which a session
     * fed through batches does not hold (the batch's rows give the same bits) */
    if (n == 1 && (f->session->out.buf || !(f->logprobs || f->targets))) {
        txlm_out_req req = {.first_row = f->first_row, .logprobs = f->logprobs, .targets = f->targets,
                            .target_lp = f->target_logprobs};
        return txlm_forward(f->session, f->tokens, f->n, &req, err);
    }
    plan p;
    int rc = make_plan(f, n, &p, err);
    if (rc) return rc;
    txlm_attn_plan ap = {0};
    txlm_pass pass = {.w = b->w, .st = p.st, .n = n, .rows = p.rows, .tokens = p.tokens};
    rc = upload(b, f, n, &p, err);
    if (!rc) rc = attention_plan(b, &p, n, &pass, &ap, err);
    if (!rc) rc = run_pass(b, f, n, &p, &pass, err);
    txlm_attn_plan_free(&ap);
    plan_free(&p);
    return rc;
}
