/* The HTTP side (libmicrohttpd, one polling thread): a request's body
 * gathered within its limits, the key checked, the route's handler
 * called (on the polling thread for the few routes that only read the
 * server's state, else on a worker thread: srv_pool.h), and its answer
 * sent, at once or once the scheduler is done (the connection suspended
 * meanwhile), or streamed as server-sent events. */
#ifndef TXLM_SRV_HTTP_H
#define TXLM_SRV_HTTP_H

#include "serve.h"
#include "srv_json.h"

typedef struct srv_answer {
    int status;
    char *body;                    /* malloc'd */
    size_t len;
    const char *type;              /* NULL: application/json */
    int retry_after;               /* seconds, for 429 and 503 (0: none) */
    const char *allow;             /* the methods, for 405 */
    char session[80];              /* a session the answer made (for --log), or "" */
} srv_answer;

/* One HTTP request as a handler sees it. */
typedef struct srv_call {
    srv *sv;
    const char *method;
    const char *id;                /* the {id} of /v1/sessions/{id}/..., or NULL */
    const char *body;              /* NUL-terminated */
    size_t body_len;
    int octet_stream;              /* Content-Type: application/octet-stream (a session state) */
    int key;                       /* the API key's index (-1: the server has none) */
} srv_call;

/* A handler answers at once (0, *a filled) or hands work to the
 * scheduler (1, the request in *r, already submitted: srv_work_submit).
 * It runs on a worker thread, where it may take its time (the routes
 * marked front in srv_routes.c: on the polling thread, and quick). */
typedef int (*srv_handler)(srv_call *c, srv_answer *a, srv_req **r);

/* Starts the daemon on the listening socket fd. 0, or -1 after printing why. */
int srv_http_start(srv *sv, int fd);
void srv_http_stop(srv *sv);

/* Answers: an error (OpenAI's shape), a JSON object (deleted). */
void srv_answer_error(srv_answer *a, int status, const char *param, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void srv_answer_err(srv_answer *a, const srv_err *e);
void srv_answer_json(srv_answer *a, int status, cJSON *o);

/* srv_routes.c: the handler of a path and method; NULL after filling a
 * (404, or 405 with the methods allowed). id receives the path's {id};
 * *front whether it runs on the polling thread (it only reads the
 * server's state: health, metrics, models, a session's facts). */
srv_handler srv_route(const char *url, const char *method, char *id, size_t id_cap, int *front, srv_answer *a);
/* Whether the route's body may be a session state (a larger limit). */
int srv_route_takes_state(const char *url);

/* srv_work.c: the handlers that run the model. */
int srv_handle_completions(srv_call *c, srv_answer *a, srv_req **r);
int srv_handle_score(srv_call *c, srv_answer *a, srv_req **r);
/* The session named by the path or the body's "session" field, claimed
 * for r (none: r->user stays NULL): 0, or -1 after filling e. */
int srv_work_claim(srv_call *c, const cJSON *o, srv_req *r, srv_err *e);
/* Hands r to the scheduler: 0 (r queued and among the requests the HTTP
 * side holds; srv_http.c then gives it its connection), or -1 after
 * filling a (429 or 503; r's session is released, r is the caller's to free). */
int srv_work_submit(srv_call *c, srv_req *r, srv_answer *a);
/* locked: a streamed completion's event stream queued on r's connection
 * (from the polling thread). 0, or -1: r is cancelled. */
int srv_work_start_events(srv_req *r);
/* locked: r leaves the list of requests the HTTP side holds. */
void srv_work_unlink(srv *sv, srv_req *r);

#endif
