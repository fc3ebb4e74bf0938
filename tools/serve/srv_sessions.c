/* Server sessions (srv_sessions.h). */
#include "srv_sessions.h"

#include "srv_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/* 128 random bits: an id cannot be guessed, only handed out. */
static int random_id(const char *prefix, char *out, size_t cap)
{
    uint8_t r[16];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) return -1;
    int n = snprintf(out, cap, "%s-", prefix);
    for (size_t i = 0; i < sizeof r && n + 2 < (int)cap; i++) n += snprintf(out + n, cap - (size_t)n, "%02x", r[i]);
    return 0;
}

static uint64_t random_seed(void)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, 0) != (ssize_t)sizeof s) s = (uint64_t)(srv_now() * 1e9);
    return s & 0xffffffffu; /* short enough to type back */
}

/* The seconds until the stalest idle session expires (the cap's Retry-After). */
static int soonest_expiry(const srv *sv)
{
    double soonest = sv->cfg.session_idle_s, now = srv_now();
    for (uint32_t i = 0; i < sv->n_sessions; i++)
        if (!sv->sessions[i]->busy && sv->sessions[i]->last_used + sv->cfg.session_idle_s - now < soonest)
            soonest = sv->sessions[i]->last_used + sv->cfg.session_idle_s - now;
    return soonest < 1 ? 1 : (int)(soonest + 0.999);
}

/* Makes the txlm_session (outside the lock: it allocates device memory). */
static int make(srv *sv, srv_session *x, const uint64_t *seed, const void *state, size_t len, srv_err *e)
{
    txlm_session_options so = sv->cfg.so;
    so.max_segment = sv->seg;
    txlm_status st = txlm_session_create(sv->m, &so, &x->s);
    if (st) return srv_fail(e, st == TXLM_ERR_OUT_OF_MEMORY ? 503 : 500, NULL, "creating a session: %s", txlm_last_error());
    if (state && (st = txlm_session_restore(x->s, state, len)))
        return srv_fail(e, 400, NULL, "the state was refused: %s (%s)", txlm_last_error(), txlm_status_string(st));
    if (!state || seed) {
        x->seed = seed ? *seed : random_seed();
        x->seeded = 1;
        txlm_session_set_seed(x->s, x->seed);
    }
    x->tokens = 0;
    x->from_state = state && txlm_session_memory_len(x->s) > 0;
    return 0;
}

srv_session *srv_session_new(srv *sv, int key, const uint64_t *seed, const void *state, size_t state_len, int *retry_after,
                             srv_err *e)
{
    if (!sv->cfg.max_sessions) /* never servable: a 429 would have its client retry for ever */
        return srv_fail(e, 400, NULL, "this server keeps no sessions (--max-sessions 0)"), NULL;
    srv_session *x = calloc(1, sizeof *x);
    if (!x || random_id(sv->cfg.id_prefix, x->id, sizeof x->id)) return free(x), srv_fail(e, 500, NULL, "out of memory"), NULL;
    x->key = key;
    x->busy = 1; /* reserved while it is made */
    pthread_mutex_lock(&sv->lock);
    int full = sv->n_sessions >= sv->cfg.max_sessions;
    if (full) *retry_after = soonest_expiry(sv);
    else sv->sessions[sv->n_sessions++] = x;
    pthread_mutex_unlock(&sv->lock);
    if (full) {
        free(x);
        srv_fail(e, 429, NULL, "%u session%s exist%s, the most this server keeps (--max-sessions): delete one, or wait for "
                 "one to be idle for %.0f s", sv->cfg.max_sessions, sv->cfg.max_sessions == 1 ? "" : "s",
                 sv->cfg.max_sessions == 1 ? "s" : "", sv->cfg.session_idle_s);
        return NULL;
    }
    int rc = make(sv, x, seed, state, state_len, e);
    pthread_mutex_lock(&sv->lock);
    x->created = x->last_used = srv_now();
    x->made = !rc;
    if (rc) {
        for (uint32_t i = 0; i < sv->n_sessions; i++)
            if (sv->sessions[i] == x) sv->sessions[i] = sv->sessions[--sv->n_sessions];
    }
    pthread_mutex_unlock(&sv->lock);
    if (rc) srv_session_free(x), x = NULL;
    return x;
}

static int find(const srv *sv, const char *id, int key)
{
    for (uint32_t i = 0; i < sv->n_sessions; i++)
        if (!strcmp(sv->sessions[i]->id, id) && sv->sessions[i]->key == key && sv->sessions[i]->made) return (int)i;
    return -1;
}

srv_session *srv_session_find(srv *sv, const char *id, int key, srv_err *e)
{
    int i = find(sv, id, key);
    if (i >= 0) return sv->sessions[i];
    /* an id is PREFIX-HEX: another prefix is another server's (docs/server.md, servers behind nginx) */
    size_t pn = strlen(sv->cfg.id_prefix), theirs = strcspn(id, "-");
    if (id[theirs] == '-' && (theirs != pn || strncmp(id, sv->cfg.id_prefix, pn)))
        return srv_fail(e, 404, "session", "session \"%.80s\" belongs to another server: its prefix is \"%.*s\", this "
                        "server's is \"%s\" (--id-prefix); send it to the server that made it", id, (int)(theirs < 40 ? theirs : 40),
                        id, sv->cfg.id_prefix), NULL;
    return srv_fail(e, 404, "session", "no session \"%.80s\" (it may have expired after %.0f s idle)", id,
                    sv->cfg.session_idle_s), NULL;
}

srv_session *srv_session_claim(srv *sv, const char *id, int key, srv_err *e)
{
    srv_session *x = srv_session_find(sv, id, key, e);
    if (!x) return NULL;
    if (x->busy) return srv_fail(e, 409, "session", "session %s is busy with another request", x->id), NULL;
    x->busy = 1;
    return x;
}

int srv_session_ready(srv *sv, srv_session *x, srv_err *e) { return x->stored ? srv_store_load(sv, x, e) : 0; }

uint64_t srv_device_bytes(const txlm_session *s)
{
    txlm_memory_use u = {0};
    return s && !txlm_session_memory(s, &u) ? u.device_bytes : 0;
}

void srv_session_release(srv *sv, srv_session *x)
{
    (void)sv;
    x->busy = 0;
    x->last_used = srv_now();
    x->device_bytes = srv_device_bytes(x->s);
}

srv_session *srv_session_remove(srv *sv, const char *id, int key, srv_err *e)
{
    srv_session *x = srv_session_claim(sv, id, key, e);
    if (!x) return NULL;
    int i = find(sv, id, key);
    sv->sessions[i] = sv->sessions[--sv->n_sessions];
    return x;
}

void srv_session_free(srv_session *x)
{
    if (!x) return;
    txlm_session_free(x->s);
    free(x);
}

uint32_t srv_session_expire(srv *sv, int all, srv_session **out)
{
    uint32_t n = 0;
    double now = srv_now();
    for (uint32_t i = 0; i < sv->n_sessions;) {
        srv_session *x = sv->sessions[i];
        if (!x->busy && (all || now - x->last_used > sv->cfg.session_idle_s)) {
            out[n++] = x;
            sv->sessions[i] = sv->sessions[--sv->n_sessions];
        } else {
            i++;
        }
    }
    return n;
}

cJSON *srv_session_json(const srv *sv, const srv_session *x)
{
    cJSON *o = cJSON_CreateObject();
    double now = srv_now(), wall = (double)time(NULL);
    cJSON_AddStringToObject(o, "id", x->id);
    cJSON_AddStringToObject(o, "object", "session");
    cJSON_AddNumberToObject(o, "created", (double)(long long)(wall - (now - x->created)));
    cJSON_AddNumberToObject(o, "tokens", (double)x->tokens);
    cJSON_AddBoolToObject(o, "from_state", x->from_state);
    if (x->seeded) cJSON_AddNumberToObject(o, "seed", (double)x->seed);
    else cJSON_AddNullToObject(o, "seed");
    if (x->busy) cJSON_AddNullToObject(o, "memory_rows");
    else cJSON_AddNumberToObject(o, "memory_rows", x->stored ? x->stored_rows : txlm_session_memory_len(x->s));
    cJSON_AddBoolToObject(o, "busy", x->busy);
    cJSON_AddNumberToObject(o, "idle_seconds", x->busy ? 0 : now - x->last_used);
    cJSON_AddNumberToObject(o, "expires_after_idle_seconds", sv->cfg.session_idle_s);
    return o;
}

cJSON *srv_session_list(const srv *sv, int key)
{
    cJSON *o = cJSON_CreateObject(), *data = cJSON_CreateArray();
    cJSON_AddStringToObject(o, "object", "list");
    for (uint32_t i = 0; i < sv->n_sessions; i++)
        if (sv->sessions[i]->key == key && sv->sessions[i]->made)
            cJSON_AddItemToArray(data, srv_session_json(sv, sv->sessions[i]));
    cJSON_AddItemToObject(o, "data", data);
    cJSON_AddNumberToObject(o, "max_sessions", sv->cfg.max_sessions);
    cJSON_AddNumberToObject(o, "sessions", sv->n_sessions);
    return o;
}
