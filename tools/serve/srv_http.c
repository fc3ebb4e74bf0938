/* libmicrohttpd glue (srv_http.h). */
#include "srv_http.h"

#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srv_conns.h"
#include "srv_metrics.h"
#include "srv_reply.h"

/* What one HTTP request holds between the calls of the access handler. */
typedef struct http_ctx {
    srv_buf body;
    size_t limit;
    int too_big;
    int answered;
    srv_handler handler;
    char id[96];
    srv_req *req;                  /* handed to the scheduler */
    int status;
    double t0;
    int key;
    char method[12], path[160];    /* for --log, printable bytes only */
    char session[80];              /* the session the request used or made, for --log */
} http_ctx;

/* src as printable ASCII (anything else as '?'), cut to fit out. */
static void printable(char *out, size_t cap, const char *src)
{
    size_t n = 0;
    for (; src && src[n] && n + 1 < cap; n++) out[n] = src[n] > 0x20 && src[n] < 0x7f ? src[n] : '?';
    out[n] = 0;
}

void srv_answer_error(srv_answer *a, int status, const char *param, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    a->status = status;
    a->body = srv_error_body(status, param, msg, &a->len);
}

void srv_answer_err(srv_answer *a, const srv_err *e) { srv_answer_error(a, e->status, e->param, "%s", e->msg); }

void srv_answer_json(srv_answer *a, int status, cJSON *o)
{
    a->status = status;
    a->body = srv_json_print(o, &a->len);
    if (!a->body) srv_answer_error(a, 500, NULL, "out of memory");
}

static enum MHD_Result send_answer(struct MHD_Connection *c, http_ctx *h, srv_answer *a)
{
    struct MHD_Response *res = MHD_create_response_from_buffer_with_free_callback(a->len, a->body, free);
    if (!res) return free(a->body), MHD_NO;
    MHD_add_response_header(res, "Content-Type", a->type ? a->type : "application/json");
    char n[24];
    if (a->retry_after) snprintf(n, sizeof n, "%d", a->retry_after), MHD_add_response_header(res, "Retry-After", n);
    if (a->allow) MHD_add_response_header(res, "Allow", a->allow);
    if (a->status == 401) MHD_add_response_header(res, "WWW-Authenticate", "Bearer");
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)a->status, res);
    MHD_destroy_response(res);
    h->answered = 1, h->status = a->status;
    return ok;
}

/* The index of the key in "Authorization: Bearer KEY", compared in
 * constant time; -1 when the server has no keys; -2: refused. */
static int check_key(const srv *sv, struct MHD_Connection *c)
{
    if (!sv->cfg.n_keys) return -1;
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (!auth || strncmp(auth, "Bearer ", 7)) return -2;
    auth += 7;
    size_t n = strlen(auth);
    int found = -2;
    for (uint32_t k = 0; k < sv->cfg.n_keys; k++) {
        const char *key = sv->cfg.keys[k];
        size_t kn = strlen(key);
        unsigned diff = (unsigned)(kn ^ n);
        for (size_t i = 0; i < n; i++) diff |= (unsigned char)auth[i] ^ (unsigned char)key[i < kn ? i : 0];
        if (!diff && found == -2) found = (int)k;
    }
    return found;
}

/* The first call, headers read: the route, the key and the declared body
 * size are checked before any body is read. 1 when answered. */
static int first_call(srv *sv, struct MHD_Connection *c, const char *url, const char *method, http_ctx *h, srv_answer *a)
{
    const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    const char *type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    int state = type && !strncmp(type, "application/octet-stream", 24) && srv_route_takes_state(url);
    h->limit = state ? sv->max_state : sv->cfg.max_body;
    printable(h->method, sizeof h->method, method);
    printable(h->path, sizeof h->path, url);
    srv_metrics_request(&sv->metrics, url);
    if (sv->stopping) return srv_answer_error(a, 503, NULL, "the server is shutting down"), a->retry_after = 1, 1;
    if (!(h->handler = srv_route(url, method, h->id, sizeof h->id, a))) return 1;
    if (strstr(url, "/v1/sessions/") == url) printable(h->session, sizeof h->session, h->id);
    if (strcmp(url, "/health") && (h->key = check_key(sv, c)) == -2)
        return srv_answer_error(a, 401, NULL, "a valid \"Authorization: Bearer KEY\" header is required"), 1;
    /* before the size: a state sent as JSON would otherwise meet --max-body's 413 */
    if (!strcmp(method, "PUT") && srv_route_takes_state(url) && !state)
        return srv_answer_error(a, 415, NULL, "a state is sent as Content-Type: application/octet-stream"), 1;
    if (len && strtoull(len, NULL, 10) > h->limit)
        return srv_answer_error(a, 413, NULL, "the body is %s bytes, over the limit of %zu (--max-body)", len, h->limit), 1;
    return 0;
}

/* The body whole: the handler answers, or hands work to the scheduler. */
static enum MHD_Result dispatch(srv *sv, struct MHD_Connection *c, const char *method, http_ctx *h)
{
    srv_answer a = {0};
    if (h->too_big) {
        srv_answer_error(&a, 413, NULL, "the body is over the limit of %zu bytes (--max-body)", h->limit);
        return send_answer(c, h, &a);
    }
    if (h->body.oom) return srv_answer_error(&a, 500, NULL, "out of memory"), send_answer(c, h, &a);
    srv_call call = {.sv = sv, .conn = c, .method = method, .id = h->id[0] ? h->id : NULL, .body = h->body.p ? h->body.p : "",
                     .body_len = h->body.len, .key = h->key,
                     .content_type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type")};
    srv_req *r = NULL;
    int queued = h->handler(&call, &a, &r);
    if (a.session[0]) memcpy(h->session, a.session, sizeof h->session);
    if (queued && r->user) printable(h->session, sizeof h->session, r->user->id);
    if (!queued) return send_answer(c, h, &a);
    h->req = r; /* submitted, connection suspended or streaming (srv_work_submit) */
    return MHD_YES;
}

/* Resumed: the scheduler's answer is ready. */
static enum MHD_Result resumed(srv *sv, struct MHD_Connection *c, http_ctx *h)
{
    srv_req *r = h->req;
    srv_answer a = {0};
    pthread_mutex_lock(&sv->lock);
    if (!r->finished) { /* woken early: wait again */
        r->suspended = 1;
        MHD_suspend_connection(c);
        pthread_mutex_unlock(&sv->lock);
        return MHD_YES;
    }
    a.status = r->status, a.body = r->body, a.len = r->body_len;
    r->body = NULL;
    pthread_mutex_unlock(&sv->lock);
    if (!a.body) srv_answer_error(&a, 500, NULL, "out of memory");
    return send_answer(c, h, &a);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *data, size_t *size, void **con_cls)
{
    (void)version;
    srv *sv = cls;
    http_ctx *h = *con_cls;
    if (!h) {
        if (!(h = calloc(1, sizeof *h))) return MHD_NO;
        *con_cls = h;
        h->t0 = srv_now();
        srv_answer a = {0};
        return first_call(sv, c, url, method, h, &a) ? send_answer(c, h, &a) : MHD_YES;
    }
    if (h->answered && !h->req) return MHD_YES;
    if (*size) {
        /* a slow client is cut off by the whole request's deadline (srv_conns.c); here the body just grows */
        if (h->body.len + *size > h->limit) h->too_big = 1;
        else srv_buf_add(&h->body, data, *size);
        *size = 0;
        return MHD_YES;
    }
    if (h->req && h->req->gen.stream && h->req->kind == SRV_COMPLETION) {
        /* an event stream whose answer could not be queued: close, the streams are cancelled */
        pthread_mutex_lock(&sv->lock);
        int gone = h->req->cancelled;
        pthread_mutex_unlock(&sv->lock);
        return gone ? MHD_NO : MHD_YES;
    }
    if (h->req) return resumed(sv, c, h);
    srv_conns_received(sv, c);
    return dispatch(sv, c, method, h);
}

/* The request is over (answered, or the connection failed): the
 * scheduler lets go of its streams if they still run. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    srv *sv = cls;
    http_ctx *h = *con_cls;
    if (!h) return;
    srv_req *r = h->req;
    int dead = 0;
    pthread_mutex_lock(&sv->lock);
    if (r) {
        r->conn = NULL;
        if (!r->finished) r->cancelled = 1, pthread_cond_signal(&sv->wake);
        srv_work_unlink(sv, r);
        dead = srv_req_unref(r);
        pthread_cond_broadcast(&sv->idle);
    }
    pthread_mutex_unlock(&sv->lock);
    srv_conns_completed(sv, c);
    int status = h->status ? h->status : r ? (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? 200 : 499) : 0;
    srv_metrics_response(&sv->metrics, status);
    if (sv->cfg.log)
        fprintf(stderr, "txlm: serve: %s %s %d %.3f s%s%s%s\n", h->method, h->path, status, srv_now() - h->t0,
                h->session[0] ? " session " : "", h->session,
                toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (connection closed before the end)");
    if (dead) srv_req_free(r);
    srv_buf_free(&h->body);
    free(h);
    *con_cls = NULL;
}

int srv_http_start(srv *sv, int fd)
{
    sv->daemon = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL, on_request, sv,
                                  MHD_OPTION_LISTEN_SOCKET, fd,
                                  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(sv->cfg.request_timeout_s + 0.999),
                                  MHD_OPTION_CONNECTION_LIMIT, (unsigned)sv->cfg.max_connections,
                                  MHD_OPTION_NOTIFY_COMPLETED, on_completed, sv,
                                  MHD_OPTION_NOTIFY_CONNECTION, srv_conns_notify, sv,
                                  MHD_OPTION_END);
    if (!sv->daemon) return fprintf(stderr, "txlm: serve: the HTTP server did not start (libmicrohttpd)\n"), -1;
    return 0;
}

void srv_http_stop(srv *sv)
{
    if (sv->daemon) MHD_stop_daemon(sv->daemon);
    sv->daemon = NULL;
}
