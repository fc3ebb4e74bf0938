/* The endpoints that run the model: POST /v1/completions and /v1/score
 * (and their /v1/sessions/{id}/ forms), handed to the scheduler. */
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "srv_http.h"
#include "srv_job.h"
#include "srv_params.h"
#include "srv_sessions.h"

int srv_work_claim(srv_call *c, const cJSON *o, srv_req *r, srv_err *e)
{
    const char *id = c->id;
    if (!id && srv_json_string(o, "session", &id, e) < 0) return -1;
    if (!id) return 0;
    pthread_mutex_lock(&c->sv->lock);
    r->user = srv_session_claim(c->sv, id, c->key, e);
    pthread_mutex_unlock(&c->sv->lock);
    if (r->user && srv_session_ready(c->sv, r->user, e)) {
        pthread_mutex_lock(&c->sv->lock);
        srv_session_release(c->sv, r->user);
        pthread_mutex_unlock(&c->sv->lock);
        r->user = NULL;
    }
    return r->user ? 0 : -1;
}

static ssize_t read_events(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    srv_req *r = cls;
    srv *sv = r->sv;
    pthread_mutex_lock(&sv->lock);
    size_t n = r->sse.len < max ? r->sse.len : max;
    if (n) {
        memcpy(buf, r->sse.p, n);
        srv_buf_consume(&r->sse, n);
    } else if (!r->finished) {
        r->suspended = 1; /* the scheduler resumes it with the next events (srv_req_wake) */
        MHD_suspend_connection(r->conn);
    }
    int end = !n && r->finished;
    pthread_mutex_unlock(&sv->lock);
    return end ? MHD_CONTENT_READER_END_OF_STREAM : (ssize_t)n;
}

int srv_work_start_events(srv_req *r)
{
    struct MHD_Response *res = r->conn ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, read_events, r, NULL) : NULL;
    enum MHD_Result ok = MHD_NO;
    if (res) {
        MHD_add_response_header(res, "Content-Type", "text/event-stream");
        MHD_add_response_header(res, "Cache-Control", "no-cache");
        MHD_add_response_header(res, "X-Accel-Buffering", "no"); /* nginx passes each event on at once */
        ok = MHD_queue_response(r->conn, 200, res);
        MHD_destroy_response(res);
    }
    if (ok == MHD_YES) return 0;
    r->cancelled = 1;
    pthread_cond_signal(&r->sv->wake);
    return -1;
}

int srv_work_submit(srv_call *c, srv_req *r, srv_answer *a)
{
    srv *sv = c->sv;
    if ((uint64_t)r->n_jobs > (uint64_t)sv->cfg.parallel + sv->cfg.queue) {
        /* never servable: a 429 would have its client retry for ever */
        srv_answer_error(a, 400, "n", "%u streams (prompts x n): this server holds at most %u at once (--parallel %u, "
                         "--queue %u)", r->n_jobs, sv->cfg.parallel + sv->cfg.queue, sv->cfg.parallel, sv->cfg.queue);
        return -1;
    }
    pthread_mutex_lock(&sv->lock);
    int refused = srv_sched_submit(sv, r);
    if (!refused) {
        r->next_live = sv->live, sv->live = r, sv->n_live++;
    } else if (r->user) {
        srv_session_release(sv, r->user);
        r->user = NULL;
    }
    pthread_mutex_unlock(&sv->lock);
    if (refused == 429)
        srv_answer_error(a, 429, NULL, "the server is busy: %u streams run and %u wait, the most it holds (--parallel, --queue)",
                         sv->cfg.parallel, sv->cfg.queue), a->retry_after = 1;
    else if (refused) srv_answer_error(a, 503, NULL, "the server is shutting down"), a->retry_after = 1;
    return refused ? -1 : 0;
}

void srv_work_unlink(srv *sv, srv_req *r)
{
    for (srv_req **p = &sv->live; *p; p = &(*p)->next_live)
        if (*p == r) {
            *p = r->next_live;
            sv->n_live--;
            return;
        }
}

/* Ends a handler that refuses: the error answered, r freed. */
static int refuse(srv_req *r, srv_answer *a, const srv_err *e, cJSON *o)
{
    if (e->status) srv_answer_err(a, e);
    cJSON_Delete(o);
    if (r && r->user) {
        pthread_mutex_lock(&r->sv->lock);
        srv_session_release(r->sv, r->user);
        pthread_mutex_unlock(&r->sv->lock);
    }
    srv_req_free(r);
    return 0;
}

/* Choice k * n + i of prompt k: its session, its prompt (or a text's
 * start, as txlm generate starts without a prompt). */
static int make_jobs(srv *sv, srv_req *r, srv_err *e)
{
    srv_gen *g = &r->gen;
    uint32_t n = g->n_prompts * g->n;
    if (!(r->jobs = calloc(n, sizeof *r->jobs))) return srv_fail(e, 500, NULL, "out of memory");
    r->n_jobs = n;
    for (uint32_t x = 0; x < n; x++) {
        srv_job *j = &r->jobs[x];
        j->req = r, j->user = r->user, j->pool_slot = -1;
        const int32_t *ids = g->ids[x / g->n];
        size_t len = g->n_ids[x / g->n];
        int fresh = len == 0 && !(r->user && srv_session_goes_on(r->user));
        if (srv_job_completion(sv, j, fresh ? &sv->start : ids, fresh ? 1 : len, len > 0, x, e)) return -1;
    }
    return 0;
}

int srv_handle_completions(srv_call *c, srv_answer *a, srv_req **out)
{
    srv *sv = c->sv;
    srv_err e = {0};
    cJSON *o = srv_json_object(c->body, c->body_len, 0, &e);
    srv_req *r = o ? srv_req_new(sv, SRV_COMPLETION, c->key) : NULL;
    if (o && !r) srv_fail(&e, 500, NULL, "out of memory");
    if (!r || srv_gen_parse(sv, o, &r->gen, &e) || srv_work_claim(c, o, r, &e)) return refuse(r, a, &e, o);
    if (r->user && r->gen.n * r->gen.n_prompts != 1) {
        srv_fail(&e, 400, "n", "a session is one stream: give one prompt and n 1");
        return refuse(r, a, &e, o);
    }
    cJSON_Delete(o);
    r->seed_known = 1;
    if (r->gen.g.seed_given) r->seed = r->gen.g.seed;
    else if (r->user) r->seed = r->user->seed, r->seed_known = r->user->seeded; /* its sampler goes on, not reseeded */
    else if (getrandom(&r->seed, sizeof r->seed, 0) == (ssize_t)sizeof r->seed) r->seed &= 0xffffffffu;
    if (make_jobs(sv, r, &e) || srv_work_submit(c, r, a)) return refuse(r, a, &e, NULL);
    *out = r;
    return 1;
}

int srv_handle_score(srv_call *c, srv_answer *a, srv_req **out)
{
    srv *sv = c->sv;
    srv_err e = {0};
    const char *text = NULL;
    cJSON *o = srv_json_object(c->body, c->body_len, 0, &e);
    srv_req *r = o ? srv_req_new(sv, SRV_SCORE, c->key) : NULL;
    if (o && !r) srv_fail(&e, 500, NULL, "out of memory");
    if (!r || srv_json_string(o, "text", &text, &e) < 0 || srv_json_bool(o, "words", &r->words, &e) < 0 ||
        srv_json_bool(o, "nats", &r->nats, &e) < 0 || srv_json_string(o, "model", &(const char *){NULL}, &e) < 0)
        return refuse(r, a, &e, o);
    if (!text) return srv_fail(&e, 400, "text", "text is required"), refuse(r, a, &e, o);
    r->text_len = strlen(text);
    txlm_status st = (r->text = strdup(text)) ? txlm_tokenize_spans(sv->m, r->text, r->text_len, &r->spans) : TXLM_ERR_OUT_OF_MEMORY;
    if (st) return srv_fail(&e, st == TXLM_ERR_OUT_OF_MEMORY ? 500 : 400, "text", "%s", txlm_last_error()), refuse(r, a, &e, o);
    if (srv_work_claim(c, o, r, &e)) return refuse(r, a, &e, o);
    cJSON_Delete(o);
    if (!(r->jobs = calloc(1, sizeof *r->jobs))) return srv_fail(&e, 500, NULL, "out of memory"), refuse(r, a, &e, NULL);
    r->n_jobs = 1;
    r->jobs[0].req = r, r->jobs[0].user = r->user, r->jobs[0].pool_slot = -1;
    if (srv_job_score(sv, &r->jobs[0], r->spans.ids, r->spans.n, &e) || srv_work_submit(c, r, a)) return refuse(r, a, &e, NULL);
    *out = r;
    return 1;
}
