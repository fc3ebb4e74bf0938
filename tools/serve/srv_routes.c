/* Paths, and the endpoints answered without the scheduler: health,
 * metrics, models (on the polling thread), tokenizing, sessions and their
 * states (on a worker thread: srv_http.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "srv_fault.h"
#include "srv_http.h"
#include "srv_metrics.h"
#include "srv_reply.h"
#include "srv_sessions.h"
#include "srv_store.h"

static int health(srv_call *c, srv_answer *a, srv_req **r)
{
    (void)r;
    srv *sv = c->sv;
    cJSON *o = cJSON_CreateObject();
    pthread_mutex_lock(&sv->lock);
    cJSON_AddStringToObject(o, "status", sv->stopping ? "stopping" : "ok");
    cJSON_AddNumberToObject(o, "active_streams", sv->n_active);
    cJSON_AddNumberToObject(o, "queued_streams", sv->n_queue);
    cJSON_AddNumberToObject(o, "sessions", sv->n_sessions);
    pthread_mutex_unlock(&sv->lock);
    cJSON_AddStringToObject(o, "model", sv->name);
    cJSON_AddNumberToObject(o, "parallel", sv->cfg.parallel);
    cJSON_AddNumberToObject(o, "queue", sv->cfg.queue);
    cJSON_AddNumberToObject(o, "max_sessions", sv->cfg.max_sessions);
    cJSON_AddNumberToObject(o, "session_idle_seconds", sv->cfg.session_idle_s);
    cJSON_AddNumberToObject(o, "uptime_seconds", srv_now() - sv->started);
    srv_answer_json(a, sv->stopping ? 503 : 200, o);
    return 0;
}

static int metrics(srv_call *c, srv_answer *a, srv_req **r)
{
    (void)r;
    a->status = 200, a->type = "text/plain; version=0.0.4";
    if (!(a->body = srv_metrics_text(c->sv, &a->len))) srv_answer_error(a, 500, NULL, "out of memory");
    return 0;
}

static cJSON *model_json(const srv *sv)
{
    cJSON *o = cJSON_CreateObject(), *x = cJSON_CreateObject();
    const txlm_model_params *p = &sv->p;
    static const char *const tok[] = {"word", "char-byte", "char-text8"};
    cJSON_AddStringToObject(o, "id", sv->name);
    cJSON_AddStringToObject(o, "object", "model");
    cJSON_AddNumberToObject(o, "created", (double)(long long)((double)time(NULL) - (srv_now() - sv->started)));
    cJSON_AddStringToObject(o, "owned_by", "txlm");
    cJSON_AddNumberToObject(x, "n_token", p->n_token);
    cJSON_AddNumberToObject(x, "n_layer", p->n_layer);
    cJSON_AddNumberToObject(x, "d_model", p->d_model);
    cJSON_AddNumberToObject(x, "mem_len", sv->cfg.so.mem_len ? sv->cfg.so.mem_len : p->mem_len);
    cJSON_AddNumberToObject(x, "segment", sv->seg);
    cJSON_AddStringToObject(x, "tokenizer", p->tokenizer <= 2 ? tok[p->tokenizer] : "other");
    cJSON_AddItemToObject(o, "txlm", x);
    return o;
}

static int models(srv_call *c, srv_answer *a, srv_req **r)
{
    (void)r;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "object", "list");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(o, "data"), model_json(c->sv));
    srv_answer_json(a, 200, o);
    return 0;
}

static int model(srv_call *c, srv_answer *a, srv_req **r)
{
    (void)r;
    if (strcmp(c->id, c->sv->name)) srv_answer_error(a, 404, "model", "no model \"%.100s\": this server has %s", c->id, c->sv->name);
    else srv_answer_json(a, 200, model_json(c->sv));
    return 0;
}

static int chat(srv_call *c, srv_answer *a, srv_req **r)
{
    (void)r;
    srv_answer_error(a, 400, NULL, "%s is a plain language model (Transformer-XL), not a chat model: it has no roles or "
                     "chat template. Use /v1/completions with a prompt; a session (POST /v1/sessions) keeps a "
                     "conversation's memory between requests", c->sv->name);
    return 0;
}

static int tokenize(srv_call *c, srv_answer *a, srv_req **r)
{
    (void)r;
    srv_err e = {0};
    const char *text = NULL;
    cJSON *o = srv_json_object(c->body, c->body_len, 0, &e);
    if (o && srv_json_string(o, "text", &text, &e) == 0) srv_fail(&e, 400, "text", "text is required");
    int32_t *ids = NULL;
    size_t n = 0;
    txlm_status st = e.status ? TXLM_OK : txlm_tokenize(c->sv->m, text, strlen(text), &ids, &n);
    if (st) srv_fail(&e, 400, "text", "%s", txlm_last_error());
    cJSON_Delete(o);
    if (e.status) return srv_answer_err(a, &e), 0;
    /* printed as it goes: a tree of cJSON numbers took some 64 bytes a token (a million for a 1 MiB text) */
    srv_buf b = {0};
    srv_buf_reserve(&b, 16 + 8 * n);
    srv_buf_str(&b, "{\"tokens\":[");
    for (size_t i = 0; i < n; i++) srv_buf_printf(&b, i ? ",%d" : "%d", ids[i]);
    srv_buf_str(&b, "]}");
    txlm_free(ids);
    if (b.oom) return srv_buf_free(&b), srv_answer_error(a, 500, NULL, "out of memory"), 0;
    a->status = 200, a->body = b.p, a->len = b.len;
    return 0;
}

static int detokenize(srv_call *c, srv_answer *a, srv_req **r)
{
    (void)r;
    srv_err e = {0};
    cJSON *o = srv_json_object(c->body, c->body_len, 0, &e);
    const cJSON *t = o ? cJSON_GetObjectItemCaseSensitive(o, "tokens") : NULL;
    int32_t *ids = NULL;
    size_t n = 0;
    if (o && !cJSON_IsArray(t)) srv_fail(&e, 400, "tokens", "tokens must be an array of token ids");
    if (!e.status) srv_json_ids(t, "tokens", txlm_vocab_size(c->sv->m), &ids, &n, &e);
    char *text = NULL;
    if (!e.status && txlm_detokenize(c->sv->m, ids, n, &text)) srv_fail(&e, 500, NULL, "%s", txlm_last_error());
    cJSON_Delete(o);
    free(ids);
    if (e.status) return srv_answer_err(a, &e), 0;
    cJSON *out = cJSON_CreateObject();
    srv_json_add_text(out, "text", text, strlen(text));
    txlm_free(text);
    srv_answer_json(a, 200, out);
    return 0;
}

/* ---- sessions ---------------------------------------------------------- */

static int session_new(srv_call *c, srv_answer *a, srv_req **r)
{
    (void)r;
    srv_err e = {0};
    uint64_t seed = 0;
    int given = 0, retry = 0;
    if (!c->octet_stream) {
        cJSON *o = srv_json_object(c->body, c->body_len, 1, &e);
        given = o ? srv_json_u64(o, "seed", &seed, &e) : 0;
        cJSON_Delete(o);
        if (e.status) return srv_answer_err(a, &e), 0;
    }
    srv_session *x = srv_session_new(c->sv, c->key, given ? &seed : NULL, c->octet_stream ? c->body : NULL, c->body_len, &retry, &e);
    if (!x) return srv_answer_err(a, &e), a->retry_after = retry, 0;
    srv_fault_pause("slow-new-session"); /* the reaper's chance, were the new session not held */
    /* made busy, released here with its facts read under the same lock:
     * the reaper cannot free it in between, however short --session-idle */
    pthread_mutex_lock(&c->sv->lock);
    srv_session_release(c->sv, x);
    cJSON *o = srv_session_json(c->sv, x);
    pthread_mutex_unlock(&c->sv->lock);
    srv_answer_json(a, 200, o);
    snprintf(a->session, sizeof a->session, "%s", x->id);
    return 0;
}

static int session_list(srv_call *c, srv_answer *a, srv_req **r)
{
    (void)r;
    pthread_mutex_lock(&c->sv->lock);
    cJSON *o = srv_session_list(c->sv, c->key);
    pthread_mutex_unlock(&c->sv->lock);
    srv_answer_json(a, 200, o);
    return 0;
}

static int session_get(srv_call *c, srv_answer *a, srv_req **r)
{
    (void)r;
    srv_err e = {0};
    pthread_mutex_lock(&c->sv->lock);
    srv_session *x = srv_session_find(c->sv, c->id, c->key, &e);
    cJSON *o = x ? srv_session_json(c->sv, x) : NULL;
    pthread_mutex_unlock(&c->sv->lock);
    if (x) srv_answer_json(a, 200, o);
    else srv_answer_err(a, &e);
    return 0;
}

static int session_delete(srv_call *c, srv_answer *a, srv_req **r)
{
    (void)r;
    srv_err e = {0};
    pthread_mutex_lock(&c->sv->lock);
    srv_session *x = srv_session_remove(c->sv, c->id, c->key, &e);
    pthread_mutex_unlock(&c->sv->lock);
    if (!x) return srv_answer_err(a, &e), 0;
    srv_store_forget(c->sv, x);
    srv_session_free(x);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", c->id);
    cJSON_AddStringToObject(o, "object", "session.deleted");
    cJSON_AddTrueToObject(o, "deleted");
    srv_answer_json(a, 200, o);
    return 0;
}

/* GET: the state in txlm_session_save's format; PUT: one restored into the
 * session. The session is claimed meanwhile: no request can use it. */
static int session_state(srv_call *c, srv_answer *a, srv_req **r)
{
    (void)r;
    srv_err e = {0};
    pthread_mutex_lock(&c->sv->lock);
    srv_session *x = srv_session_claim(c->sv, c->id, c->key, &e);
    pthread_mutex_unlock(&c->sv->lock);
    if (!x) return srv_answer_err(a, &e), 0;
    if (srv_session_ready(c->sv, x, &e)) {
        pthread_mutex_lock(&c->sv->lock);
        srv_session_release(c->sv, x);
        pthread_mutex_unlock(&c->sv->lock);
        return srv_answer_err(a, &e), 0;
    }
    txlm_status st = TXLM_OK;
    size_t size = 0;
    if (!strcmp(c->method, "GET")) {
        size = txlm_session_state_size(x->s);
        if (!(a->body = malloc(size ? size : 1))) st = TXLM_ERR_OUT_OF_MEMORY;
        else st = txlm_session_save(x->s, a->body, size, &a->len);
        a->status = 200, a->type = "application/octet-stream";
        if (st) free(a->body), a->body = NULL, srv_answer_error(a, 500, NULL, "saving the state: %s", txlm_last_error());
    } else if (!c->octet_stream) {
        srv_answer_error(a, 415, NULL, "a state is sent as Content-Type: application/octet-stream");
    } else if ((st = txlm_session_restore(x->s, c->body, c->body_len))) {
        srv_answer_error(a, 400, NULL, "the state was refused: %s (%s)", txlm_last_error(), txlm_status_string(st));
    }
    pthread_mutex_lock(&c->sv->lock);
    if (!st && strcmp(c->method, "GET") && !a->body) /* restored: the state's memory and sampler */
        x->tokens = 0, x->from_state = txlm_session_memory_len(x->s) > 0, x->seeded = 0;
    srv_session_release(c->sv, x);
    cJSON *o = strcmp(c->method, "GET") && !a->body ? srv_session_json(c->sv, x) : NULL;
    pthread_mutex_unlock(&c->sv->lock);
    if (o) srv_answer_json(a, 200, o);
    return 0;
}

/* ---- routes ------------------------------------------------------------ */

/* Where a handler runs: on libmicrohttpd's polling thread (FRONT: it only
 * reads the server's state, in microseconds), or on a worker thread
 * (WORKER: it reads a body of up to --max-body, tokenizes, makes, frees,
 * saves or restores a session), so that the polling thread never waits
 * on model work. */
enum { WORKER = 0, FRONT = 1 };

typedef struct route {
    const char *path;              /* "*" stands for a session's or model's id */
    const char *method;
    srv_handler fn;
    int front;
} route;

static const route routes[] = {
    {"/health", "GET", health, FRONT},
    {"/metrics", "GET", metrics, FRONT},
    {"/v1/models", "GET", models, FRONT},
    {"/v1/models/*", "GET", model, FRONT},
    {"/v1/completions", "POST", srv_handle_completions, WORKER},
    {"/v1/chat/completions", "POST", chat, FRONT},
    {"/v1/score", "POST", srv_handle_score, WORKER},
    {"/v1/tokenize", "POST", tokenize, WORKER},
    {"/v1/detokenize", "POST", detokenize, WORKER},
    {"/v1/sessions", "GET", session_list, FRONT},
    {"/v1/sessions", "POST", session_new, WORKER},
    {"/v1/sessions/*", "GET", session_get, FRONT},
    {"/v1/sessions/*", "DELETE", session_delete, WORKER},
    {"/v1/sessions/*/state", "GET", session_state, WORKER},
    {"/v1/sessions/*/state", "PUT", session_state, WORKER},
    {"/v1/sessions/*/completions", "POST", srv_handle_completions, WORKER},
    {"/v1/sessions/*/score", "POST", srv_handle_score, WORKER},
};

/* url against a path with one "*" (a non-empty run without '/'); the id into id. */
static int matches(const char *path, const char *url, char *id, size_t cap)
{
    const char *star = strchr(path, '*');
    if (!star) return !strcmp(path, url);
    size_t pre = (size_t)(star - path);
    if (strncmp(path, url, pre)) return 0;
    size_t n = strcspn(url + pre, "/");
    if (n == 0 || n >= cap || strcmp(star + 1, url + pre + n)) return 0;
    memcpy(id, url + pre, n);
    id[n] = 0;
    return 1;
}

srv_handler srv_route(const char *url, const char *method, char *id, size_t id_cap, int *front, srv_answer *a)
{
    char allow[64] = "";
    for (size_t i = 0; i < sizeof routes / sizeof *routes; i++) {
        if (!matches(routes[i].path, url, id, id_cap)) continue;
        if (!strcmp(routes[i].method, method)) return *front = routes[i].front, routes[i].fn;
        snprintf(allow + strlen(allow), sizeof allow - strlen(allow), "%s%s", *allow ? ", " : "", routes[i].method);
    }
    if (!*allow) {
        srv_answer_error(a, 404, NULL, "no endpoint %.200s (docs/server.md lists them)", url);
        return NULL;
    }
    srv_answer_error(a, 405, NULL, "%s %.200s: this endpoint takes %s", method, url, allow);
    static __thread char allowed[64];
    memcpy(allowed, allow, sizeof allowed);
    a->allow = allowed;
    return NULL;
}

int srv_route_takes_state(const char *url)
{
    char id[96];
    return !strcmp(url, "/v1/sessions") || matches("/v1/sessions/*/state", url, id, sizeof id);
}
