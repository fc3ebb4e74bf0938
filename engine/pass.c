/* The one pass driver (pass.h): the streams' rows laid out in the
 * workspace, what the device reads uploaded, the attention's routes
 * planned, then the pass replayed or recorded, and the rows asked for
 * read back. */
#include "pass.h"

#include <stdlib.h>
#include <string.h>

#include "attend.h"
#include "output.h"
#include "replay.h"

static void pass_free(txlm_pass *p)
{
    txlm_attn_plan_free(&p->attn);
    free(p->st), free(p->tokens), free(p->targets);
}

/* Whether the rows asked for are one run of z: the streams asking are
 * neighbours, and each but the first asks for all its rows. */
static int one_run(const txlm_pass *p)
{
    int seen = 0, ended = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        const txlm_pass_stream *t = &p->st[i];
        if (!t->want) {
            ended = seen;
            continue;
        }
        if (ended || (seen && t->want != t->qlen)) return 0;
        seen = 1;
    }
    return 1;
}

/* Each stream's rows one after another, and its rows asked for among the
 * output rows; the tokens and the targets in that order. */
static int lay_out(txlm_workspace *w, const txlm_stream_feed *f, uint32_t n, txlm_blame *blame, txlm_pass *p,
                   txlm_err *err)
{
    *p = (txlm_pass){.w = w, .n = n, .score = 1, .blame = blame};
    for (uint32_t i = 0; i < n; i++) {
        p->rows += f[i].n;
        if (f[i].logprobs) p->score = 0;
    }
    p->st = calloc(n, sizeof *p->st);
    p->tokens = malloc(p->rows * sizeof *p->tokens), p->targets = malloc(p->rows * sizeof *p->targets);
    if (!p->st || !p->tokens || !p->targets)
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory for a pass of %u rows", p->rows);
    for (uint32_t i = 0, row = 0; i < n; row += f[i].n, i++) {
        txlm_pass_stream *t = &p->st[i];
        *t = (txlm_pass_stream){.s = f[i].session, .f = &f[i], .row0 = row, .qlen = f[i].n, .out0 = p->out};
        t->want = f[i].logprobs || f[i].targets ? f[i].n - f[i].first_row : 0;
        memcpy(p->tokens + row, f[i].tokens, f[i].n * sizeof *p->tokens);
        if (f[i].targets) memcpy(p->targets + p->out, f[i].targets, t->want * sizeof *p->targets);
        if (t->want && !p->out) p->out_z = row + f[i].first_row;
        p->out += t->want;
    }
    p->gather = !one_run(p);
    if (p->gather) p->out_z = 0;
    return 0;
}

/* What the device reads first: zero memories, the tokens, the targets. */
static int upload(txlm_pass *p, txlm_err *err)
{
    txlm_workspace *w = p->w;
    txlm_vk *vk = &w->m->ctx->vk;
    uint64_t scratch = 0;
    int rc = 0;
    for (uint32_t i = 0; i < p->n && !rc; i++) {
        txlm_session *s = p->st[i].s;
        if (s->zero_memory && s->mlen == 0 && s->mem_len) rc = txlm_session_zero_fill(s, err);
        scratch = s->scratch > scratch ? s->scratch : scratch;
    }
    if (!rc) rc = txlm_workspace_fit(w, scratch, err);
    if (!rc) rc = txlm_buf_upload(vk, &w->ids, 0, p->tokens, p->rows * sizeof *p->tokens, err);
    if (!rc && p->score && p->out) rc = txlm_buf_upload(vk, &w->targets, 0, p->targets, p->out * sizeof *p->targets, err);
    return rc;
}

/* The pass's commands, replayed or recorded, then the rows asked for. */
static int run(txlm_pass *p, txlm_err *err)
{
    int replayed = 0, rc = txlm_replay_begin(p, &replayed, err);
    if (replayed) {
        for (uint32_t i = 0; i < p->n; i++) rc ? txlm_session_forget(p->st[i].s, 1) : txlm_stream_fed(p->st[i].s, p->st[i].qlen);
        return rc;
    }
    if (rc) return rc;
    txlm_record_layers(p);
    txlm_output_rows(p);
    for (uint32_t i = 0; i < p->n; i++) txlm_stream_fed(p->st[i].s, p->st[i].qlen);
    return txlm_output_read(p, err);
}

int txlm_pass_feed(txlm_workspace *w, const txlm_stream_feed *f, uint32_t n, txlm_blame *blame, txlm_err *err)
{
    txlm_pass p;
    int rc = lay_out(w, f, n, blame, &p, err);
    if (!rc) rc = upload(&p, err);
    if (!rc) rc = txlm_attend_plan(&p, err);
    if (!rc) rc = run(&p, err);
    pass_free(&p);
    return rc;
}
