/* Answers (srv_reply.h). */
#include "srv_reply.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "srv_job.h"

static const char *error_type(int status)
{
    return status == 401 ? "authentication_error" : status == 429 ? "rate_limit_error"
         : status >= 500 ? "server_error" : "invalid_request_error";
}

char *srv_json_print(cJSON *o, size_t *len)
{
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    *len = s ? strlen(s) : 0;
    return s;
}

void srv_json_add_text(cJSON *o, const char *name, const char *s, size_t n)
{
    char *clean = srv_utf8_clean(s, n);
    cJSON *v = cJSON_CreateString(clean ? clean : "");
    free(clean);
    if (name) cJSON_AddItemToObject(o, name, v);
    else cJSON_AddItemToArray(o, v);
}

char *srv_error_body(int status, const char *param, const char *msg, size_t *len)
{
    cJSON *o = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(o, "error");
    srv_json_add_text(e, "message", msg, strlen(msg));
    cJSON_AddStringToObject(e, "type", error_type(status));
    if (param && *param) cJSON_AddStringToObject(e, "param", param);
    else cJSON_AddNullToObject(e, "param");
    if (status == 401) cJSON_AddStringToObject(e, "code", "invalid_api_key");
    else cJSON_AddNullToObject(e, "code");
    return srv_json_print(o, len);
}

static void add_symbol(const srv *sv, cJSON *to, const char *name, int32_t id)
{
    size_t len = 0;
    const char *sym = txlm_token_symbol(sv->m, id, &len);
    srv_json_add_text(to, name, sym ? sym : "", sym ? len : 0);
}

cJSON *srv_reply_logprobs(const srv *sv, const srv_job *j, size_t from, size_t to)
{
    cJSON *o = cJSON_CreateObject(), *tokens = cJSON_AddArrayToObject(o, "tokens"),
          *lps = cJSON_AddArrayToObject(o, "token_logprobs"), *tops = cJSON_AddArrayToObject(o, "top_logprobs"),
          *off = cJSON_AddArrayToObject(o, "text_offset");
    for (size_t i = from; i < to; i++) {
        const srv_lps *l = &j->lps;
        add_symbol(sv, tokens, NULL, l->ids[i]);
        cJSON_AddItemToArray(lps, isfinite(l->lp[i]) ? cJSON_CreateNumber(l->lp[i]) : cJSON_CreateNull());
        cJSON *top = isfinite(l->lp[i]) || l->top[i].n ? cJSON_CreateObject() : cJSON_CreateNull();
        for (uint32_t k = 0; k < l->top[i].n; k++) {
            size_t len = 0;
            const char *sym = txlm_token_symbol(sv->m, l->top[i].ids[k], &len);
            char *clean = srv_utf8_clean(sym ? sym : "", sym ? len : 0);
            if (clean) cJSON_AddNumberToObject(top, clean, l->top[i].lp[k]);
            free(clean);
        }
        cJSON_AddItemToArray(tops, top);
        cJSON_AddItemToArray(off, cJSON_CreateNumber((double)l->offset[i]));
    }
    return o;
}

/* A choice: its text [from, to), log-probabilities [lfrom, lto), finish reason. */
static cJSON *choice(const srv_req *r, const srv_job *j, size_t from, size_t to, size_t lfrom, size_t lto, const char *finish)
{
    cJSON *c = cJSON_CreateObject();
    srv_json_add_text(c, "text", j->text ? j->text + from : "", j->text ? to - from : 0);
    cJSON_AddNumberToObject(c, "index", j->index);
    if (r->gen.logprobs >= 0) cJSON_AddItemToObject(c, "logprobs", srv_reply_logprobs(r->sv, j, lfrom, lto));
    else cJSON_AddNullToObject(c, "logprobs");
    if (finish) cJSON_AddStringToObject(c, "finish_reason", finish);
    else cJSON_AddNullToObject(c, "finish_reason");
    return c;
}

static cJSON *envelope(const srv_req *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", r->id);
    cJSON_AddStringToObject(o, "object", "text_completion");
    cJSON_AddNumberToObject(o, "created", (double)r->created);
    cJSON_AddStringToObject(o, "model", r->sv->name);
    return o;
}

static cJSON *usage(const srv_req *r)
{
    cJSON *u = cJSON_CreateObject();
    size_t prompt = 0, made = 0;
    for (uint32_t k = 0; k < r->gen.n_prompts; k++) prompt += r->gen.n_ids[k];
    for (uint32_t i = 0; i < r->n_jobs; i++) made += r->jobs[i].made;
    cJSON_AddNumberToObject(u, "prompt_tokens", (double)prompt);
    cJSON_AddNumberToObject(u, "completion_tokens", (double)made);
    cJSON_AddNumberToObject(u, "total_tokens", (double)(prompt + made));
    return u;
}

/* Where the time went, in ms: waiting for a place in the batch, feeding
 * the prompt, generating (the slowest choice's). */
static cJSON *timings(const srv_req *r)
{
    double queued = 0, prompt = 0, gen = 0;
    for (uint32_t i = 0; i < r->n_jobs; i++) {
        const srv_job *j = &r->jobs[i];
        double p = j->t_prompt ? j->t_prompt : j->t_end;
        if (j->t_start - r->t_submit > queued) queued = j->t_start - r->t_submit;
        if (p - j->t_start > prompt) prompt = p - j->t_start;
        if (j->t_end - p > gen) gen = j->t_end - p;
    }
    cJSON *t = cJSON_CreateObject();
    cJSON_AddNumberToObject(t, "queued_ms", 1e3 * queued);
    cJSON_AddNumberToObject(t, "prompt_ms", 1e3 * prompt);
    cJSON_AddNumberToObject(t, "generation_ms", 1e3 * gen);
    return t;
}

static const srv_job *failed(const srv_req *r)
{
    for (uint32_t i = 0; i < r->n_jobs; i++)
        if (r->jobs[i].error) return &r->jobs[i];
    return NULL;
}

void srv_reply_answer(srv_req *r)
{
    if (r->kind == SRV_SCORE) return srv_score_answer(r);
    const srv_job *bad = failed(r);
    if (bad) {
        r->status = bad->error_status;
        r->body = srv_error_body(r->status, NULL, bad->error, &r->body_len);
        return;
    }
    cJSON *o = envelope(r), *choices = cJSON_AddArrayToObject(o, "choices");
    for (uint32_t i = 0; i < r->n_jobs; i++) {
        const srv_job *j = &r->jobs[i];
        cJSON_AddItemToArray(choices, choice(r, j, 0, j->len, 0, j->lps.n, j->finish));
    }
    cJSON_AddItemToObject(o, "usage", usage(r));
    cJSON_AddItemToObject(o, "timings", timings(r));
    if (r->seed_known) cJSON_AddNumberToObject(o, "seed", (double)r->seed);
    else cJSON_AddNullToObject(o, "seed");
    if (r->user) cJSON_AddStringToObject(o, "session", r->user->id);
    if (r->user) cJSON_AddStringToObject(o, "sampler", r->gen.g.seed_given ? "seeded" : "continued");
    r->status = 200;
    r->body = srv_json_print(o, &r->body_len);
}

static void event(srv_buf *out, cJSON *o)
{
    size_t len;
    char *s = srv_json_print(o, &len);
    srv_buf_str(out, "data: ");
    srv_buf_add(out, s ? s : "{}", s ? len : 2);
    srv_buf_str(out, "\n\n");
    free(s);
}

/* One choice's news: text that is whole UTF-8 (all of it once done),
 * new log-probabilities, and its finish reason or error once done. */
static void job_events(srv_req *r, srv_job *j, srv_buf *out)
{
    int done = j->phase == JOB_DONE;
    size_t to = j->sent_text;
    if (j->text) to += done ? j->len - j->sent_text : srv_utf8_whole(j->text + j->sent_text, j->len - j->sent_text);
    if (done && j->error) {
        size_t len;
        char *s = srv_error_body(j->error_status, NULL, j->error, &len);
        srv_buf_printf(out, "data: %s\n\n", s ? s : "{}");
        free(s);
    } else if (to > j->sent_text || j->lps.n > j->sent_lps || done) {
        cJSON *o = envelope(r), *choices = cJSON_AddArrayToObject(o, "choices");
        cJSON_AddItemToArray(choices, choice(r, j, j->sent_text, to, j->sent_lps, j->lps.n, done ? j->finish : NULL));
        event(out, o);
    }
    j->sent_text = to, j->sent_lps = j->lps.n;
    j->final_sent = done;
}

void srv_reply_events(srv_req *r, srv_buf *out)
{
    int all = 1;
    for (uint32_t i = 0; i < r->n_jobs; i++) {
        srv_job *j = &r->jobs[i];
        if (!j->final_sent && j->phase != JOB_QUEUED) job_events(r, j, out);
        all &= j->final_sent;
    }
    if (!all) return;
    if (r->gen.include_usage) {
        cJSON *o = envelope(r);
        cJSON_AddArrayToObject(o, "choices");
        cJSON_AddItemToObject(o, "usage", usage(r));
        event(out, o);
    }
    srv_buf_str(out, "data: [DONE]\n\n");
}
