/* The scheduler thread (serve.h): every pass on the device. Each step
 * draws the next token of every stream that has one to draw (one
 * txlm_batch_sample per distinct sampling setting), then feeds every
 * stream's next piece in one txlm_batch_feed: a drawn token, or the next
 * segment of a prompt or of a text being scored. A stream joins at the
 * step after it is admitted and leaves once done, so requests in flight
 * share passes whatever they ask. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve.h"
#include "srv_fault.h"
#include "srv_job.h"
#include "srv_metrics.h"
#include "srv_reply.h"
#include "srv_sessions.h"

/* The scheduler's arrays, `parallel` entries each (the most streams a
 * step holds: check_slots), but the touched requests (every stream's). */
typedef struct sched {
    srv *sv;
    txlm_stream_feed *f;
    srv_job **fj;                  /* the job of each feed */
    srv_job **rj;                  /* the jobs of this step's next-token rows */
    txlm_session **rs;             /* and their sessions */
    float *rows;                   /* [parallel x n_token]: those rows */
    int hang;                      /* the fault point hang-pass (srv_fault.h) */
    txlm_session **s;
    txlm_repeat_penalty *pen;
    const txlm_repeat_penalty **pp;
    int32_t *tok;
    srv_job **dj;                  /* the jobs of one draw */
    srv_req **touched;             /* requests with news this step */
    uint32_t n_touched;
} sched;

int srv_sched_submit(srv *sv, srv_req *r)
{
    if (sv->stopping) return 503;
    if ((uint64_t)sv->n_active + sv->n_queue + r->n_jobs > (uint64_t)sv->cfg.parallel + sv->cfg.queue) {
        atomic_fetch_add(&sv->metrics.rejected_full, 1);
        return 429;
    }
    r->t_submit = srv_now();
    for (uint32_t i = 0; i < r->n_jobs; i++) {
        r->jobs[i].phase = JOB_QUEUED;
        sv->queue[sv->n_queue++] = &r->jobs[i];
    }
    r->refs++;
    pthread_cond_signal(&sv->wake);
    return 0;
}

/* locked: the oldest queued streams become active while there is room;
 * those of a request that went away, or all once the server's grace
 * period is over, end at once (the active list has room for every
 * stream, queued ones too). */
static void admit(srv *sv)
{
    uint32_t kept = 0;
    for (uint32_t q = 0; q < sv->n_queue; q++) {
        srv_job *j = sv->queue[q];
        int flush = j->req->cancelled || sv->cancel_all;
        if (sv->n_active >= sv->cfg.parallel && !flush) {
            sv->queue[kept++] = j;
            continue;
        }
        j->pool_slot = -1;
        if (flush && !j->req->cancelled) srv_job_fail(j, 503, "the server stopped before this stream was done");
        if (!flush && !j->user)
            for (uint32_t k = 0; k < sv->cfg.parallel && j->pool_slot < 0; k++)
                if (!sv->pool_busy[k]) sv->pool_busy[k] = 1, j->pool_slot = (int)k;
        if (!flush && j->user && j->req->kind == SRV_COMPLETION && j->req->gen.g.seed_given)
            j->user->seed = j->req->seed, j->user->seeded = 1; /* start() reseeds it */
        j->s = j->user ? j->user->s : j->pool_slot >= 0 ? sv->pool[j->pool_slot] : NULL;
        j->phase = JOB_PROMPT;
        j->fed = 0;
        sv->active[sv->n_active++] = j;
    }
    sv->n_queue = kept;
}

/* locked, after admit() and cancel(): the invariant that keeps every
 * step within the scheduler's arrays (parallel entries: c->f, c->fj,
 * c->dj, c->rj) and the pool's slots: at most `parallel` streams are
 * active and not done. admit() makes a stream active beyond that only
 * when it is flushed (its request cancelled, or the grace period over),
 * and cancel() ends every such stream before the step. */
static void check_slots(const srv *sv)
{
    uint32_t live = 0;
    for (uint32_t i = 0; i < sv->n_active; i++) live += sv->active[i]->phase != JOB_DONE;
    if (live <= sv->cfg.parallel) return;
    fprintf(stderr, "txlm: serve: internal error: %u streams in a step of %u places\n", live, sv->cfg.parallel);
    abort();
}

/* A job's start: its buffers, its session reset (a pooled one) and seeded. */
static void start(srv *sv, srv_job *j)
{
    srv_req *r = j->req;
    j->t_start = srv_now();
    if (srv_job_buffers(sv, j)) return;
    if (!j->user) txlm_session_reset(j->s);
    if (r->kind == SRV_COMPLETION && (!j->user || r->gen.g.seed_given)) txlm_session_set_seed(j->s, r->seed + j->index);
}

static void touch(sched *c, srv_req *r)
{
    for (uint32_t i = 0; i < c->n_touched; i++)
        if (c->touched[i] == r) return;
    c->touched[c->n_touched++] = r;
}

/* The prompt or text all fed: a score is done; a completion draws next. */
static void after_prompt(srv *sv, srv_job *j)
{
    j->t_prompt = srv_now();
    srv_job_prompt_done(sv, j);
    if (j->req->kind == SRV_SCORE) srv_job_end(sv, j, "done");
    else if (j->req->gen.g.n_gen == 0) srv_job_end(sv, j, "length");
    else j->phase = JOB_DRAW;
}

/* Draws for the jobs dj[0..n), which share one sampling setting. */
static void draw_group(sched *c, uint32_t n)
{
    srv *sv = c->sv;
    for (uint32_t k = 0; k < n; k++) {
        srv_job *j = c->dj[k];
        c->s[k] = j->s;
        c->pen[k] = (txlm_repeat_penalty){j->req->gen.g.repeat_penalty, j->st.window, j->st.n_window};
        c->pp[k] = &c->pen[k];
    }
    txlm_status st = txlm_batch_sample(sv->batch, c->s, n, &c->dj[0]->req->gen.g.samp, c->pp, c->tok);
    for (uint32_t k = 0; k < n; k++) {
        srv_job *j = c->dj[k];
        if (st && (st != TXLM_ERR_NONFINITE || c->tok[k] < 0)) {
            srv_job_fail(j, 500, "drawing a token: %s", txlm_last_error());
            srv_job_end(sv, j, NULL);
        } else if (!srv_job_take(sv, j, c->tok[k])) {
            j->phase = JOB_FEED; /* a pooled stream that is done needs no feed: its memory is thrown away */
            if (j->finishing && !j->user) srv_job_end(sv, j, NULL);
        } else {
            srv_job_end(sv, j, NULL);
        }
    }
}

static int same_sampling(const txlm_sampling *a, const txlm_sampling *b)
{
    return a->temperature == b->temperature && a->top_k == b->top_k && a->top_p == b->top_p;
}

static void draw(sched *c)
{
    srv *sv = c->sv;
    uint8_t *grouped = calloc(sv->n_active, 1);
    for (uint32_t i = 0; grouped && i < sv->n_active; i++) {
        srv_job *j = sv->active[i];
        if (j->phase != JOB_DRAW || grouped[i]) continue;
        uint32_t n = 0;
        for (uint32_t k = i; k < sv->n_active; k++) {
            srv_job *o = sv->active[k];
            if (o->phase != JOB_DRAW || grouped[k] || !same_sampling(&o->req->gen.g.samp, &j->req->gen.g.samp)) continue;
            grouped[k] = 1;
            c->dj[n++] = o;
        }
        if (n) draw_group(c, n);
    }
    free(grouped);
}

/* The streams of a batched call that failed with st: only the one the
 * batch names (txlm_batch_failed_stream) when its output was not finite
 * (the others' calls went through), else all. */
static int only_one_failed(const srv *sv, txlm_status st, uint32_t n, uint32_t *which)
{
    int32_t bad = txlm_batch_failed_stream(sv->batch);
    if (st != TXLM_ERR_NONFINITE || bad < 0 || (uint32_t)bad >= n) return 0;
    *which = (uint32_t)bad;
    return 1;
}

/* The next-token distribution of every stream that needs one this step
 * (srv_job_wants_row), in one call through the batch's workspace: the
 * sessions never build a workspace of their own, so a request with
 * logprobs costs no device memory beyond the batch's plan. */
static void next_rows(sched *c)
{
    srv *sv = c->sv;
    uint32_t n = 0, V = sv->p.n_token, bad = 0;
    for (uint32_t i = 0; i < sv->n_active; i++)
        if (srv_job_wants_row(sv->active[i])) c->rj[n] = sv->active[i], c->rs[n++] = sv->active[i]->s;
    if (!n) return;
    txlm_status st = txlm_batch_next_logprobs(sv->batch, c->rs, n, c->rows);
    int one = st && only_one_failed(sv, st, n, &bad);
    for (uint32_t k = 0; k < n; k++) {
        srv_job *j = c->rj[k];
        if (st && (!one || k == bad)) {
            srv_job_fail(j, 500, "the next token's distribution: %s", txlm_last_error());
            srv_job_end(sv, j, NULL);
        } else {
            srv_job_row(sv, j, c->rows + (size_t)k * V);
        }
    }
}

/* After a failed feed: its memory forgotten, each stream that failed ends. */
static void feed_failed(sched *c, uint32_t n, txlm_status st)
{
    uint32_t bad = 0;
    int one = only_one_failed(c->sv, st, n, &bad);
    for (uint32_t k = 0; k < n; k++) {
        srv_job *j = c->fj[k];
        if (one && k != bad) continue;
        srv_job_fail(j, 500, "running the model: %s", txlm_last_error());
        j->user_forgot = 1;
        srv_job_end(c->sv, j, NULL);
    }
}

static void feed(sched *c)
{
    srv *sv = c->sv;
    uint32_t n = 0;
    for (uint32_t i = 0; i < sv->n_active; i++) {
        srv_job *j = sv->active[i];
        if (j->phase == JOB_FEED) {
            c->f[n] = (txlm_stream_feed){.session = j->s, .tokens = &j->pending, .n = 1, .first_row = 1};
            c->fj[n++] = j;
        } else if (j->phase == JOB_PROMPT && srv_job_segment(sv, j, &c->f[n])) {
            c->fj[n++] = j;
        } else if (j->phase == JOB_PROMPT) {
            after_prompt(sv, j); /* nothing to feed: a session going on from where it stands */
        }
    }
    if (!n) return;
    while (c->hang) pause(); /* a device that hangs without a word (srv_fault.h): the stop's bounds are tested on it */
    double t0 = srv_now();
    txlm_status st = txlm_batch_feed(sv->batch, c->f, n);
    srv_metrics_step(&sv->metrics, srv_now() - t0);
    if (st) feed_failed(c, n, st);
    for (uint32_t k = 0; k < n; k++) {
        srv_job *j = c->fj[k];
        if (j->phase == JOB_DONE) continue;
        j->user_fed += c->f[k].n;
        if (j->phase == JOB_FEED) {
            atomic_fetch_add(&sv->metrics.generated_tokens, 1);
            if (j->finishing) srv_job_end(sv, j, NULL);
            else j->phase = JOB_DRAW;
            continue;
        }
        atomic_fetch_add(j->tg ? &sv->metrics.scored_tokens : &sv->metrics.prompt_tokens, c->f[k].n);
        srv_job_segment_done(sv, j, &c->f[k]);
        if (j->fed >= j->n_feed) after_prompt(sv, j);
    }
}

/* One step: starts, draws, feeds; every request with news is touched. */
static void step(sched *c)
{
    srv *sv = c->sv;
    c->n_touched = 0;
    for (uint32_t i = 0; i < sv->n_active; i++) {
        srv_job *j = sv->active[i];
        if (j->phase == JOB_DONE) continue;
        if (!j->error && !j->started) j->started = 1, start(sv, j);
        if (j->error) srv_job_end(sv, j, NULL);
    }
    next_rows(c);
    draw(c);
    feed(c);
    for (uint32_t i = 0; i < sv->n_active; i++) touch(c, sv->active[i]->req);
}

/* Outside the lock: what each touched request's client gets next (its
 * events, or its whole answer once every stream is done). */
static void prepare(sched *c)
{
    for (uint32_t i = 0; i < c->n_touched; i++) {
        srv_req *r = c->touched[i];
        r->n_done = 0;
        for (uint32_t k = 0; k < r->n_jobs; k++) r->n_done += r->jobs[k].phase == JOB_DONE;
        if (r->kind == SRV_COMPLETION && r->gen.stream) srv_reply_events(r, &r->out);
        else if (r->n_done == r->n_jobs) srv_reply_answer(r);
    }
}

/* locked: the news handed to the HTTP side, connections woken, finished
 * streams out of the batch (their sessions free again); requests nothing
 * holds any more go to *dead. */
static void publish(sched *c, srv_req **dead, uint32_t *n_dead)
{
    srv *sv = c->sv;
    for (uint32_t i = 0; i < c->n_touched; i++) {
        srv_req *r = c->touched[i];
        srv_buf_add(&r->sse, r->out.p, r->out.len);
        r->out.len = 0;
        r->finished = r->n_done == r->n_jobs;
        srv_req_wake(r);
    }
    uint32_t kept = 0;
    for (uint32_t i = 0; i < sv->n_active; i++) {
        srv_job *j = sv->active[i];
        if (j->phase != JOB_DONE) {
            sv->active[kept++] = j;
            continue;
        }
        if (j->user) {
            if (j->user_forgot) j->user->tokens = 0, j->user->from_state = 0;
            else j->user->tokens += j->user_fed;
            srv_session_release(sv, j->user);
        } else if (j->pool_slot >= 0) {
            sv->pool_busy[j->pool_slot] = 0;
            sv->pool_bytes[j->pool_slot] = srv_device_bytes(sv->pool[j->pool_slot]);
        }
        j->pool_slot = -1;
    }
    sv->n_active = kept;
    for (uint32_t i = 0; i < c->n_touched; i++)
        if (c->touched[i]->finished && srv_req_unref(c->touched[i])) dead[(*n_dead)++] = c->touched[i];
}

/* locked: streams whose client left, or all at the end of the grace period. */
static void cancel(srv *sv)
{
    for (uint32_t i = 0; i < sv->n_active; i++) {
        srv_job *j = sv->active[i];
        if (j->phase == JOB_DONE || !(j->req->cancelled || sv->cancel_all)) continue;
        if (j->req->cancelled) atomic_fetch_add(&sv->metrics.cancelled, 1);
        if (sv->cancel_all && !j->req->cancelled) srv_job_fail(j, 503, "the server stopped before this stream was done");
        srv_job_end(sv, j, "cancelled");
    }
}

static int sched_alloc(sched *c, srv *sv)
{
    uint32_t n = sv->cfg.parallel, q = sv->cfg.parallel + sv->cfg.queue;
    memset(c, 0, sizeof *c);
    c->sv = sv;
    c->hang = srv_fault("hang-pass");
    c->f = calloc(n, sizeof *c->f), c->fj = calloc(n, sizeof *c->fj), c->s = calloc(n, sizeof *c->s);
    c->pen = calloc(n, sizeof *c->pen), c->pp = calloc(n, sizeof *c->pp), c->tok = calloc(n, sizeof *c->tok);
    c->dj = calloc(n, sizeof *c->dj), c->touched = calloc(q, sizeof *c->touched);
    c->rj = calloc(n, sizeof *c->rj), c->rs = calloc(n, sizeof *c->rs);
    c->rows = malloc((size_t)n * sv->p.n_token * sizeof *c->rows);
    return c->f && c->fj && c->s && c->pen && c->pp && c->tok && c->dj && c->touched && c->rj && c->rs && c->rows ? 0 : -1;
}

static void sched_free(sched *c)
{
    free(c->f), free(c->fj), free(c->s), free(c->pen), free(c->pp), free(c->tok), free(c->dj), free(c->touched);
    free(c->rj), free(c->rs), free(c->rows);
}

void *srv_sched_main(void *arg)
{
    srv *sv = arg;
    sched c;
    srv_req **dead = calloc((size_t)sv->cfg.parallel + sv->cfg.queue, sizeof *dead);
    if (sched_alloc(&c, sv) || !dead) {
        fprintf(stderr, "txlm: serve: out of memory for the scheduler\n");
        abort();
    }
    pthread_mutex_lock(&sv->lock);
    for (;;) {
        admit(sv);
        cancel(sv);
        check_slots(sv);
        if (!sv->n_active) {
            if (sv->sched_exit) break;
            pthread_cond_wait(&sv->wake, &sv->lock);
            continue;
        }
        pthread_mutex_unlock(&sv->lock);
        step(&c);
        prepare(&c);
        uint32_t n_dead = 0;
        pthread_mutex_lock(&sv->lock);
        publish(&c, dead, &n_dead);
        if (n_dead) {
            pthread_mutex_unlock(&sv->lock);
            for (uint32_t i = 0; i < n_dead; i++) srv_req_free(dead[i]);
            pthread_mutex_lock(&sv->lock);
        }
    }
    sv->sched_done = 1;
    pthread_mutex_unlock(&sv->lock);
    sched_free(&c);
    free(dead);
    return NULL;
}
