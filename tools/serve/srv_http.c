/* libmicrohttpd glue (srv_http.h). libmicrohttpd calls on_request again
 * and again for one request: once its headers are read, once per piece of
 * body, once with no more body, and once more after each resumption of a
 * suspended connection. What a call must do depends on where the request
 * stands, which http_ctx.phase names. */
#include "srv_http.h"

#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srv_conns.h"
#include "srv_metrics.h"
#include "srv_pool.h"
#include "srv_reply.h"

/* Where a request stands between two calls of on_request. */
typedef enum http_phase {
    HTTP_BODY,       /* headers checked (route, key, declared size): the body arrives in pieces */
    HTTP_WORKING,    /* the body whole, its handler running on a worker thread (srv_pool.h): suspended */
    HTTP_READY,      /* the worker answered: the answer in h->ready, the connection resumed to send it */
    HTTP_WAITING,    /* its streams with the scheduler: suspended until the answer is ready (srv_req_wake) */
    HTTP_EVENTS,     /* a streamed completion handed to the scheduler: its event stream is to be started */
    HTTP_STREAMING,  /* the event stream queued: libmicrohttpd pulls the events (srv_work.c) */
    HTTP_ANSWERED,   /* an answer queued: nothing more to do */
} http_phase;

/* What one HTTP request holds between the calls of the access handler. */
typedef struct http_ctx {
    srv *sv;
    struct MHD_Connection *conn;
    http_phase phase;              /* written under srv.lock once a worker may hold the request */
    srv_buf body;
    size_t limit;                  /* the largest body this request may send */
    size_t reserved;               /* bytes of --max-body-total this request holds (its body) */
    int too_big, over_budget;      /* the body was past the limit or the budget: discarded, answered 413 or 429 */
    srv_handler handler;
    int front;                     /* the handler answers at once, on the polling thread */
    int octet_stream;              /* Content-Type: application/octet-stream */
    char id[96];
    int fd;
    srv_req *req;                  /* handed to the scheduler */
    srv_answer ready;              /* HTTP_READY: the worker's answer */
    int status;
    double t0;
    int key;
    char method[12], path[160];    /* for routing and --log, printable bytes only */
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

static enum MHD_Result send_answer(http_ctx *h, srv_answer *a)
{
    struct MHD_Response *res = MHD_create_response_from_buffer_with_free_callback(a->len, a->body, free);
    if (!res) return free(a->body), MHD_NO;
    MHD_add_response_header(res, "Content-Type", a->type ? a->type : "application/json");
    char n[24];
    if (a->retry_after) snprintf(n, sizeof n, "%d", a->retry_after), MHD_add_response_header(res, "Retry-After", n);
    if (a->allow) MHD_add_response_header(res, "Allow", a->allow);
    if (a->status == 401) MHD_add_response_header(res, "WWW-Authenticate", "Bearer");
    if (h->sv->stopping) MHD_add_response_header(res, "Connection", "close"); /* the client goes elsewhere */
    enum MHD_Result ok = MHD_queue_response(h->conn, (unsigned)a->status, res);
    MHD_destroy_response(res);
    h->phase = HTTP_ANSWERED, h->status = a->status;
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

/* ---- the server's budget for request bodies (--max-body-total) --------- */

/* n more bytes of body for h, if the budget has them. 1: held; 0: over. */
static int body_hold(http_ctx *h, size_t n)
{
    srv *sv = h->sv;
    pthread_mutex_lock(&sv->lock);
    int ok = sv->body_bytes + n <= sv->cfg.max_body_total;
    if (ok) sv->body_bytes += n, h->reserved += n;
    pthread_mutex_unlock(&sv->lock);
    return ok;
}

/* The body is done with: its bytes back to the budget. */
static void body_release(http_ctx *h)
{
    srv *sv = h->sv;
    srv_buf_free(&h->body);
    pthread_mutex_lock(&sv->lock);
    sv->body_bytes -= h->reserved;
    h->reserved = 0;
    pthread_mutex_unlock(&sv->lock);
}

static void busy_answer(srv *sv, srv_answer *a)
{
    srv_answer_error(a, 429, NULL, "the server holds %zu bytes of request bodies, the most it takes at once "
                     "(--max-body-total): try again shortly", sv->cfg.max_body_total);
    a->retry_after = 1;
}

/* ---- the phases -------------------------------------------------------- */

/* The first call, headers read: the route, the key and the declared body
 * size are checked, and the declared body held against the server's
 * budget, before any body is read. 1 when answered. */
static int headers(srv *sv, struct MHD_Connection *c, const char *url, const char *method, http_ctx *h, srv_answer *a)
{
    const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    const char *type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    h->octet_stream = type && !strncmp(type, "application/octet-stream", 24);
    int state = h->octet_stream && srv_route_takes_state(url);
    h->limit = state ? sv->max_state : sv->cfg.max_body;
    printable(h->method, sizeof h->method, method);
    printable(h->path, sizeof h->path, url);
    srv_metrics_request(&sv->metrics, url);
    h->handler = srv_route(url, method, h->id, sizeof h->id, &h->front, a);
    if (!h->handler) return 1;
    /* while stopping, /health says so itself (503); anything else is refused */
    if (sv->stopping && strcmp(url, "/health"))
        return srv_answer_error(a, 503, NULL, "the server is shutting down"), a->retry_after = 1, 1;
    if (strstr(url, "/v1/sessions/") == url) printable(h->session, sizeof h->session, h->id);
    if (strcmp(url, "/health") && (h->key = check_key(sv, c)) == -2)
        return srv_answer_error(a, 401, NULL, "a valid \"Authorization: Bearer KEY\" header is required"), 1;
    /* before the size: a state sent as JSON would otherwise meet --max-body's 413 */
    if (!strcmp(method, "PUT") && srv_route_takes_state(url) && !state)
        return srv_answer_error(a, 415, NULL, "a state is sent as Content-Type: application/octet-stream"), 1;
    unsigned long long declared = len ? strtoull(len, NULL, 10) : 0;
    if (declared > h->limit)
        return srv_answer_error(a, 413, NULL, "the body is %s bytes, over the limit of %zu (--max-body)", len, h->limit), 1;
    if (declared && !body_hold(h, declared)) return busy_answer(sv, a), 1;
    if (declared) srv_buf_reserve(&h->body, declared); /* one allocation: a large body is never copied as it grows */
    return 0;
}

/* A piece of body: kept, or (past the limit or the budget) dropped. */
static void body_piece(http_ctx *h, const char *data, size_t size)
{
    if (h->too_big || h->over_budget) return;
    if (h->body.len + size > h->limit) {
        h->too_big = 1;
    } else if (h->body.len + size > h->reserved && !body_hold(h, h->body.len + size - h->reserved)) {
        h->over_budget = 1; /* a chunked body, held as it comes */
    } else {
        srv_buf_add(&h->body, data, size);
        return;
    }
    body_release(h);
}

static srv_call call_of(http_ctx *h)
{
    return (srv_call){.sv = h->sv, .method = h->method, .id = h->id[0] ? h->id : NULL, .body = h->body.p ? h->body.p : "",
                      .body_len = h->body.len, .octet_stream = h->octet_stream, .key = h->key};
}

/* locked: the request r, handed to the scheduler by a worker, gets its
 * connection: it waits for the answer, or (streamed) resumes to start
 * its events. */
static void attach(http_ctx *h, srv_req *r)
{
    h->req = r;
    r->conn = h->conn, r->fd = h->fd;
    if (r->kind == SRV_COMPLETION && r->gen.stream) {
        h->phase = HTTP_EVENTS;
        MHD_resume_connection(h->conn);
        return;
    }
    h->phase = HTTP_WAITING;
    r->suspended = 1;
    srv_req_wake(r); /* its answer may be ready already */
}

/* A worker runs the handler; the connection is resumed (or left waiting
 * for the scheduler) when it is done. */
static void work(void *arg)
{
    http_ctx *h = arg;
    srv *sv = h->sv;
    srv_answer a = {0};
    srv_req *r = NULL;
    srv_call call = call_of(h);
    int queued = h->handler(&call, &a, &r);
    body_release(h);
    pthread_mutex_lock(&sv->lock);
    if (a.session[0]) memcpy(h->session, a.session, sizeof h->session);
    if (queued && r->user) printable(h->session, sizeof h->session, r->user->id);
    if (queued) {
        attach(h, r);
    } else {
        h->ready = a;
        h->phase = HTTP_READY;
        MHD_resume_connection(h->conn);
    }
    pthread_mutex_unlock(&sv->lock);
}

/* The body whole: answered here (413, 429, a front route), or handed to a worker. */
static enum MHD_Result body_done(srv *sv, http_ctx *h)
{
    srv_answer a = {0};
    if (h->too_big) srv_answer_error(&a, 413, NULL, "the body is over the limit of %zu bytes (--max-body)", h->limit);
    else if (h->over_budget) busy_answer(sv, &a);
    else if (h->body.oom) srv_answer_error(&a, 500, NULL, "out of memory");
    if (a.body) return send_answer(h, &a);
    if (h->front) {
        srv_call call = call_of(h);
        h->handler(&call, &a, &(srv_req *){NULL});
        body_release(h);
        return send_answer(h, &a);
    }
    const union MHD_ConnectionInfo *fd = MHD_get_connection_info(h->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    h->fd = fd ? fd->connect_fd : -1;
    /* under the lock: the worker cannot resume the connection before it is suspended */
    pthread_mutex_lock(&sv->lock);
    int refused = srv_pool_push(sv, work, h);
    if (!refused) h->phase = HTTP_WORKING, MHD_suspend_connection(h->conn);
    pthread_mutex_unlock(&sv->lock);
    if (refused) return body_release(h), srv_answer_error(&a, 500, NULL, "out of memory"), send_answer(h, &a);
    return MHD_YES;
}

/* Resumed while waiting for the scheduler: its answer, or (woken early) wait again. */
static enum MHD_Result waiting(srv *sv, http_ctx *h)
{
    srv_req *r = h->req;
    srv_answer a = {0};
    pthread_mutex_lock(&sv->lock);
    if (!r->finished) {
        r->suspended = 1;
        MHD_suspend_connection(h->conn);
        pthread_mutex_unlock(&sv->lock);
        return MHD_YES;
    }
    a.status = r->status, a.body = r->body, a.len = r->body_len;
    r->body = NULL;
    pthread_mutex_unlock(&sv->lock);
    if (!a.body) srv_answer_error(&a, 500, NULL, "out of memory");
    return send_answer(h, &a);
}

/* A streamed completion's events start: the response that pulls them is
 * queued (an answer that cannot be queued closes the connection, and the
 * streams are cancelled in on_completed). */
static enum MHD_Result events(srv *sv, http_ctx *h)
{
    pthread_mutex_lock(&sv->lock);
    int ok = !srv_work_start_events(h->req);
    h->phase = HTTP_STREAMING;
    pthread_mutex_unlock(&sv->lock);
    return ok ? MHD_YES : MHD_NO;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *data, size_t *size, void **con_cls)
{
    (void)version;
    srv *sv = cls;
    http_ctx *h = *con_cls;
    if (!h) { /* the first call: the headers */
        if (!(h = calloc(1, sizeof *h))) return MHD_NO;
        *con_cls = h;
        h->sv = sv, h->conn = c, h->t0 = srv_now(), h->fd = -1, h->phase = HTTP_BODY;
        srv_answer a = {0};
        return headers(sv, c, url, method, h, &a) ? send_answer(h, &a) : MHD_YES;
    }
    pthread_mutex_lock(&sv->lock); /* a worker may have moved it on */
    http_phase phase = h->phase;
    pthread_mutex_unlock(&sv->lock);
    switch (phase) {
    case HTTP_BODY:
        if (!*size) { /* no more body */
            srv_conns_received(sv, c);
            return body_done(sv, h);
        }
        /* a slow client is cut off by the whole request's deadline (srv_conns.c); here the body just grows */
        body_piece(h, data, *size);
        *size = 0;
        return MHD_YES;
    case HTTP_READY: return send_answer(h, &h->ready);
    case HTTP_WAITING: return waiting(sv, h);
    case HTTP_EVENTS: return events(sv, h);
    case HTTP_WORKING:   /* suspended: libmicrohttpd does not call */
    case HTTP_STREAMING: /* the events are pulled by read_events */
    case HTTP_ANSWERED: *size = 0; return MHD_YES;
    }
    return MHD_NO;
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
    body_release(h);
    if (h->phase == HTTP_READY) free(h->ready.body); /* resumed, never sent */
    free(h);
    *con_cls = NULL;
}

int srv_http_start(srv *sv, int fd)
{
    sv->daemon = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL, on_request, sv,
                                  MHD_OPTION_LISTEN_SOCKET, fd,
                                  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(sv->cfg.request_timeout_s + 0.999),
                                  MHD_OPTION_CONNECTION_LIMIT, (unsigned)sv->cfg.max_connections,
                                  MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)sv->cfg.max_connections_per_ip,
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
