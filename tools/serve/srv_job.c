/* A request's streams (srv_job.h). */
#include "srv_job.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void srv_job_fail(srv_job *j, int status, const char *fmt, ...)
{
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (j->error) return; /* the first reason stands */
    j->error = strdup(msg);
    j->error_status = status;
}

void srv_top_of(const float *row, uint32_t v, uint32_t n, srv_top *top)
{
    top->n = 0;
    if (n > sizeof top->ids / sizeof *top->ids) n = sizeof top->ids / sizeof *top->ids;
    if (n == 0) return; /* logprobs 0: the chosen token's alone, an empty top list */
    for (uint32_t i = 0; i < v; i++) {
        if (top->n == n && !(row[i] > top->lp[n - 1])) continue;
        uint32_t k = top->n < n ? top->n++ : n - 1;
        while (k > 0 && row[i] > top->lp[k - 1]) { /* strictly more likely: ties keep the lower id ahead */
            top->ids[k] = top->ids[k - 1], top->lp[k] = top->lp[k - 1];
            k--;
        }
        top->ids[k] = (int32_t)i, top->lp[k] = row[i];
    }
}

static int lps_push(srv_lps *l, int32_t id, double lp, const srv_top *top, size_t offset)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        int32_t *ids = realloc(l->ids, cap * sizeof *ids);
        if (ids) l->ids = ids;
        double *v = realloc(l->lp, cap * sizeof *v);
        if (v) l->lp = v;
        srv_top *t = realloc(l->top, cap * sizeof *t);
        if (t) l->top = t;
        size_t *o = realloc(l->offset, cap * sizeof *o);
        if (o) l->offset = o;
        if (!ids || !v || !t || !o) return -1;
        l->cap = cap;
    }
    l->ids[l->n] = id, l->lp[l->n] = lp, l->offset[l->n] = offset;
    if (top) l->top[l->n] = *top;
    else l->top[l->n].n = 0;
    l->n++;
    return 0;
}

/* What a job's input buffers take, sized by its input: each input
 * token's log-probability (logprobs or scoring), its top list (echo with
 * logprobs), and one segment's output: full rows (echo with logprobs: at
 * most a segment of its prompt's, n_token floats each) or target
 * log-probabilities (scoring). */
typedef struct job_sizes {
    size_t in_lp, in_top, seg_out;
} job_sizes;

static job_sizes sizes_of(const srv *sv, const srv_job *j)
{
    size_t seg_rows = j->n_feed < sv->seg ? j->n_feed : sv->seg;
    return (job_sizes){
        .in_lp = j->logprobs || j->tg ? (j->n_in + 1) * sizeof *j->in_lp : 0,
        .in_top = j->rows ? (j->n_in + 1) * sizeof *j->in_top : 0,
        .seg_out = j->rows ? seg_rows * sv->p.n_token * sizeof *j->seg_out
                 : j->tg ? seg_rows * sizeof *j->seg_out : 0,
    };
}

int srv_job_buffers(srv *sv, srv_job *j)
{
    job_sizes z = sizes_of(sv, j);
    j->in_lp = z.in_lp ? malloc(z.in_lp) : NULL;
    j->in_top = z.in_top ? calloc(1, z.in_top) : NULL;
    j->seg_out = z.seg_out ? malloc(z.seg_out) : NULL;
    j->held = z.in_lp + z.in_top + z.seg_out;
    atomic_fetch_add(&sv->metrics.stream_bytes, j->held);
    if ((z.in_lp && !j->in_lp) || (z.in_top && !j->in_top) || (z.seg_out && !j->seg_out))
        return srv_job_fail(j, 500, "out of memory for the stream's %zu bytes of log-probabilities", j->held), -1;
    for (size_t i = 0; j->in_lp && i < j->n_in; i++) j->in_lp[i] = NAN;
    return 0;
}

/* Where a token's own text starts in the detokenizer's piece for it:
 * after the space a word model puts before a word; a character model's
 * space token is its own text. */
static size_t own_text_start(const srv *sv, int32_t id, const char *piece, size_t len)
{
    size_t n = 0, own = 0, lead = 0;
    const char *sym = txlm_token_symbol(sv->m, id, &n);
    if (sym && n && n <= len && !memcmp(piece + len - n, sym, n)) return len - n;
    while (lead < len && piece[lead] == ' ') lead++;
    while (sym && own < n && sym[own] == ' ') own++;
    return lead > own ? lead - own : 0;
}

/* The prompt's tokens' offsets in its echo: a string prompt's spans in that
 * string (txlm_tokenize_spans), when they are the prompt's tokens; else
 * where each token's text starts in the detokenized prompt. */
static int prompt_offsets(srv *sv, srv_job *j, size_t *off)
{
    const char *text = j->req->gen.texts[j->index / j->req->gen.n];
    txlm_token_spans t = {0};
    if (text && !txlm_tokenize_spans(sv->m, text, strlen(text), &t) && t.n == j->n_in &&
        !memcmp(t.ids, j->in, t.n * sizeof *t.ids)) {
        for (size_t i = 0; i < t.n; i++) off[i] = t.spans[i].begin;
        txlm_token_spans_free(&t);
        return 0;
    }
    txlm_token_spans_free(&t);
    txlm_detokenizer *d = NULL;
    if (txlm_detokenizer_create(sv->m, &d)) return -1;
    size_t at = 0;
    for (size_t i = 0; i < j->n_in; i++) {
        const char *piece;
        size_t len = 0;
        if (txlm_detokenizer_push(d, j->in[i], &piece, &len)) piece = "", len = 0;
        off[i] = at + own_text_start(sv, j->in[i], piece, len);
        at += len;
    }
    txlm_detokenizer_free(d);
    return 0;
}

void srv_job_prompt_done(srv *sv, srv_job *j)
{
    if (!j->rows) return;
    size_t *off = malloc(j->n_in * sizeof *off);
    if (!off) return srv_job_fail(j, 500, "out of memory");
    if (prompt_offsets(sv, j, off)) srv_job_fail(j, 500, "%s", txlm_last_error());
    for (size_t i = 0; i < j->n_in && !j->error; i++)
        if (lps_push(&j->lps, j->in[i], j->in_lp[i], &j->in_top[i], off[i])) srv_job_fail(j, 500, "out of memory");
    free(off);
}

int srv_job_completion(srv *sv, srv_job *j, const int32_t *ids, size_t n, int from_request, uint32_t index, srv_err *e)
{
    srv_req *r = j->req;
    const srv_gen *g = &r->gen;
    j->index = index;
    j->in = ids;
    j->n_feed = n;
    j->n_in = n;
    j->pending = -1;
    j->logprobs = g->logprobs >= 0;
    j->rows = g->echo && j->logprobs && n > 0;
    j->top_n = g->logprobs > 0 ? (uint32_t)g->logprobs : 0;
    j->first_pending = j->rows && j->user && srv_session_goes_on(j->user);
    if (gen_stream_open(&j->st, sv->m, &g->g)) return srv_fail(e, 500, NULL, "preparing the output: %s", txlm_last_error());
    if (!(j->mem = open_memstream(&j->text, &j->len))) return srv_fail(e, 500, NULL, "out of memory");
    j->st.out = j->mem;
    gen_stream_remember(&j->st, ids, n);
    if (g->echo) {
        const char *t = g->texts[index / g->n];
        char *own = NULL;
        if (!t && n && txlm_detokenize(sv->m, ids, n, &own)) return srv_fail(e, 500, NULL, "%s", txlm_last_error());
        fputs(t ? t : own ? own : "", j->mem);
        txlm_free(own);
        fflush(j->mem);
    }
    /* continue the prompt's last line, so spacing and punctuation join up (as txlm generate) */
    size_t from = n;
    while (from_request && from > 0 && ids[from - 1] != sv->p.eos_id) from--;
    if (from_request && n && gen_stream_prompt(&j->st, sv->m, ids, from, n))
        return srv_fail(e, 500, NULL, "detokenizing the prompt");
    j->gen_from = j->len;
    return 0;
}

int srv_job_score(srv *sv, srv_job *j, const int32_t *ids, size_t n, srv_err *e)
{
    (void)sv;
    j->in = ids;
    j->pending = -1;
    j->first_pending = n > 0 && j->user && srv_session_goes_on(j->user);
    /* alone: inputs ids[0..n-1), targets ids[1..n), as txlm score; a
     * session feeds the last token too (its target is a stand-in, its
     * score dropped) so its memory holds the whole text */
    j->n_feed = j->user ? n : n ? n - 1 : 0;
    if (!(j->tg = malloc((n + 1) * sizeof *j->tg))) return srv_fail(e, 500, NULL, "out of memory");
    for (size_t i = 0; i < n; i++) j->tg[i] = i + 1 < n ? ids[i + 1] : 0;
    j->n_in = n;
    return 0;
}

void srv_job_free(srv_job *j)
{
    gen_stream_close(&j->st);
    if (j->mem) fclose(j->mem);
    if (j->held) atomic_fetch_sub(&j->req->sv->metrics.stream_bytes, j->held);
    free(j->text), free(j->tg), free(j->in_lp), free(j->in_top), free(j->seg_out), free(j->error);
    free(j->lps.ids), free(j->lps.lp), free(j->lps.top), free(j->lps.offset);
    memset(j, 0, sizeof *j);
}

int srv_job_wants_row(const srv_job *j)
{
    return (j->phase == JOB_PROMPT && j->first_pending) || (j->phase == JOB_DRAW && j->logprobs);
}

void srv_job_row(srv *sv, srv_job *j, const float *row)
{
    if (j->phase == JOB_DRAW) {
        j->row = row;
        return;
    }
    /* the first input token, from what the session held before it */
    j->in_lp[0] = row[j->in[0]];
    if (j->in_top) srv_top_of(row, sv->p.n_token, j->top_n, &j->in_top[0]);
    j->first_pending = 0;
}

uint32_t srv_job_segment(srv *sv, srv_job *j, txlm_stream_feed *f)
{
    if (j->fed >= j->n_feed) return 0;
    uint32_t len = j->n_feed - j->fed < sv->seg ? (uint32_t)(j->n_feed - j->fed) : sv->seg;
    *f = (txlm_stream_feed){.session = j->s, .tokens = j->in + j->fed, .n = len, .first_row = j->rows || j->tg ? 0 : len};
    if (j->rows) f->logprobs = j->seg_out;
    if (j->tg) f->targets = j->tg + j->fed, f->target_logprobs = j->seg_out;
    return len;
}

void srv_job_segment_done(srv *sv, srv_job *j, const txlm_stream_feed *f)
{
    uint32_t v = sv->p.n_token;
    for (uint32_t i = 0; (j->rows || j->tg) && i < f->n; i++) {
        size_t at = j->fed + i + 1; /* row i predicts input at + 1 */
        if (at >= j->n_in) break;
        if (j->tg) {
            j->in_lp[at] = f->target_logprobs[i];
            continue;
        }
        const float *row = f->logprobs + (size_t)i * v;
        j->in_lp[at] = row[j->in[at]];
        srv_top_of(row, v, j->top_n, &j->in_top[at]);
    }
    j->fed += f->n;
}

/* Where the token just taken starts in the choice's text. The
 * detokenizer's output (the stop strings may still hold its end back) is
 * the choice's text from gen_from on; it has passed st.passed bytes, the
 * last st.piece_len of them the token's piece, in which the token's own
 * text starts after the space a word model puts before a word. */
static size_t taken_offset(const srv *sv, const srv_job *j, int32_t tok)
{
    size_t piece_start = j->gen_from + j->st.passed - j->st.piece_len;
    return piece_start + own_text_start(sv, tok, j->st.piece, j->st.piece_len);
}

/* A stop string cut the text at j->len: the tokens whose text lies past
 * the cut (those of the stop string, the last ones) are placed at the end. */
static void offsets_within_text(srv_job *j)
{
    for (size_t k = j->lps.n; k > 0 && j->lps.offset[k - 1] > j->len; k--) j->lps.offset[k - 1] = j->len;
}

int srv_job_take(srv *sv, srv_job *j, int32_t tok)
{
    const srv_gen *g = &j->req->gen;
    const float *row = j->row;
    j->row = NULL; /* the scheduler's, for this step only */
    if (j->logprobs) {
        if (!row) return srv_job_fail(j, 500, "no distribution for the token's log-probability"), -1;
        srv_top top;
        srv_top_of(row, sv->p.n_token, j->top_n, &top);
        if (lps_push(&j->lps, tok, row[tok], &top, 0)) return srv_job_fail(j, 500, "out of memory"), -1;
    }
    int stopped = 0;
    if (gen_stream_take(&j->st, tok, &stopped)) return srv_job_fail(j, 500, "turning tokens into text failed"), -1;
    fflush(j->mem);
    if (j->logprobs) j->lps.offset[j->lps.n - 1] = taken_offset(sv, j, tok);
    if (stopped) offsets_within_text(j);
    j->made++;
    j->pending = tok;
    if (stopped) j->finish = "stop";
    else if (g->g.n_gen >= 0 && j->made >= (size_t)g->g.n_gen) j->finish = "length";
    j->finishing = j->finish != NULL;
    return 0;
}

void srv_job_end(srv *sv, srv_job *j, const char *finish)
{
    (void)sv;
    if (!j->finish) j->finish = finish;
    j->t_end = srv_now();
    if (j->mem) {
        gen_stream_finish(&j->st);
        fflush(j->mem);
    }
    j->phase = JOB_DONE;
}
