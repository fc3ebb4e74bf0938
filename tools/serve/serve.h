/* txlm serve: an HTTP server speaking the OpenAI completions protocol,
 * with Transformer-XL memories kept as sessions and concurrent requests
 * sharing passes (docs/server.md). Only the public API (txlm.h).
 *
 * Threads: libmicrohttpd's one polling thread reads requests and writes
 * answers, and runs the handlers that only read the server's state
 * (srv_http.c, srv_routes.c); a few worker threads run every other
 * handler: JSON bodies read, texts tokenized, sessions made, saved,
 * restored and brought back from --session-dir (srv_pool.c, srv_work.c,
 * srv_routes.c, srv_store.c); the scheduler thread runs every pass on
 * the device (srv_sched.c); the reaper thread enforces deadlines, notices
 * clients that went away and expires idle sessions (srv_conns.c); the
 * main thread waits for a signal and stops the others (cmd_serve.c).
 * One mutex, srv.lock, guards everything they share. */
#ifndef TXLM_SERVE_H
#define TXLM_SERVE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "gen_common.h"
#include "srv_buf.h"
#include "txlm.h"

struct MHD_Daemon;
struct MHD_Connection;

typedef struct srv_config {
    const char *model, *host, *alias, *id_prefix;
    int port;                      /* 0: any free port (told on stderr) */
    uint32_t parallel;             /* streams in one pass */
    uint32_t queue;                /* streams waiting beyond them; more: 429 */
    uint32_t max_sessions;
    uint32_t max_tokens;           /* the largest max_tokens a request may ask */
    uint32_t max_n;                /* the most choices of one request */
    uint32_t max_logprobs;
    uint32_t max_connections;
    uint32_t max_connections_per_ip; /* 0: no limit */
    size_t max_body;               /* bytes */
    size_t max_body_total;         /* request bodies held at once, all connections together */
    uint32_t workers;              /* threads for the front door's work (srv_pool.h) */
    const char *session_dir;       /* sessions kept across restarts (srv_store.h), or NULL */
    double session_idle_s;         /* a session unused this long is freed */
    double request_timeout_s;      /* a request must arrive whole within this */
    double grace_s;                /* SIGTERM: running streams may finish within this */
    const char **keys;             /* --api-key, repeatable (none: no auth) */
    uint32_t n_keys;
    int log;                       /* a line per request on stderr */
    txlm_session_options so;
    txlm_model_options mo;
} srv_config;

typedef enum srv_kind { SRV_COMPLETION, SRV_SCORE } srv_kind;

/* What a completion asks for, parsed and checked (srv_params.c). */
typedef struct srv_gen {
    gen_opts g;                    /* sampling, penalty, stops, n_gen (max_tokens), seed */
    uint32_t n;                    /* choices per prompt */
    int echo, stream, include_usage;
    int logprobs;                  /* -1: none, else top-N per token */
    uint32_t n_prompts;
    int32_t **ids;                 /* [n_prompts] token ids */
    size_t *n_ids;
    char **texts;                  /* [n_prompts] the prompt as given, or NULL for token ids */
} srv_gen;

/* A server session: a txlm_session kept between requests. */
typedef struct srv_session {
    char id[80];
    int key;                       /* the API key that made it (-1: no keys) */
    txlm_session *s;
    int made;                      /* 0 while it is made (outside the lock): hidden from lists and lookups */
    double created, last_used;     /* srv_now()'s clock */
    uint64_t tokens;               /* fed since it was made or last given a state */
    int from_state;                /* its memory came from a state (which holds rows, not how many tokens made them) */
    uint64_t seed;                 /* the seed it was made or last reseeded with, when seeded */
    int seeded;                    /* 0: its sampler is a state's, or went on from one */
    int busy;                      /* a request or an export holds it */
    uint64_t device_bytes;         /* its device memory, as the engine reports it when no call holds it */
    int stored;                    /* listed from --session-dir, its state still on disk (s is NULL: srv_store.h) */
    uint32_t stored_rows;          /* then, the memory rows the state holds */
} srv_session;

/* Whether a session holds what came before (memory, a last row): a
 * request on it goes on from there. */
static inline int srv_session_goes_on(const srv_session *x) { return x->tokens > 0 || x->from_state; }

/* A top-N list: ids and log-probabilities, most likely first. */
typedef struct srv_top {
    int32_t ids[32];
    float lp[32];
    uint32_t n;
} srv_top;

/* Per-token log-probabilities of a choice (OpenAI's "logprobs" object). */
typedef struct srv_lps {
    int32_t *ids;
    double *lp;                    /* NAN: none (a text's first token) */
    srv_top *top;
    size_t *offset;                /* where the token's text starts in the choice's text */
    size_t n, cap;
} srv_lps;

typedef enum srv_phase { JOB_QUEUED, JOB_PROMPT, JOB_DRAW, JOB_FEED, JOB_DONE } srv_phase;

struct srv_req;

/* One stream: a choice of a completion, or a scored text. */
typedef struct srv_job {
    struct srv_req *req;
    uint32_t index;                /* the choice's index */
    srv_session *user;             /* a server session, or NULL: a pooled session */
    int pool_slot;
    txlm_session *s;
    srv_phase phase;
    int started;
    /* input: in[0..n_feed) are fed; scoring targets tg[0..n_feed) */
    const int32_t *in;
    size_t n_in, n_feed, fed;
    int32_t *tg;
    int logprobs;                  /* each token drawn gets its log-probability and top list */
    int rows;                      /* echo with logprobs: full rows while feeding the prompt */
    int first_pending;             /* the first input token's log-probability is still to be read from the session's last row */
    /* the buffers below: allocated when the job starts (srv_job_buffers), sized by its input */
    double *in_lp;                 /* [n_in] log p of each input token (NAN: none) */
    srv_top *in_top;               /* [n_in] with rows */
    float *seg_out;                /* one segment's rows (at most the prompt's) or target log-probabilities */
    size_t held;                   /* their bytes (the metric txlm_stream_buffer_bytes) */
    uint32_t top_n;                /* entries of each top list */
    const float *row;              /* [n_token]: the next token's distribution, the scheduler's for one step */
    /* generation */
    gen_stream st;
    FILE *mem;                     /* st.out: the choice's text */
    char *text;
    size_t len;
    size_t gen_from;               /* where the generated text starts in it (after the echo) */
    size_t made;
    int32_t pending;               /* drawn, not yet fed */
    int finishing;                 /* done once pending is fed */
    const char *finish;            /* "length", "stop", "cancelled", or NULL */
    srv_lps lps;
    size_t sent_text, sent_lps;    /* streamed so far */
    int final_sent;
    double t_start, t_prompt, t_end; /* when it entered the batch, its input was fed, it ended */
    char *error;                   /* why the stream failed, or NULL */
    int error_status;
    /* what the session's facts take on when the job lets go of it (under
     * srv.lock: the HTTP side reads them meanwhile) */
    uint64_t user_fed;             /* tokens fed into the server session */
    int user_forgot;               /* a failed pass: its memory is forgotten */
} srv_job;

/* One HTTP request's work, shared by the HTTP side (the polling thread
 * and the worker that read it) and the scheduler. */
typedef struct srv_req {
    struct srv *sv;
    struct MHD_Connection *conn;   /* set once its streams are queued (srv_http.c's attach), NULL once the HTTP side is done */
    int fd;                        /* its socket, to notice a client that left */
    srv_kind kind;
    int refs;                      /* the HTTP side and the scheduler */
    int suspended;                 /* its connection waits for the scheduler */
    int cancelled;                 /* the client left, or the server stops */
    int finished;                  /* every job done, the answer ready */
    int key;
    char id[40];
    long long created;
    double t_submit;
    srv_gen gen;                   /* completions */
    int words, nats;               /* scoring */
    char *text;                    /* scoring: the text */
    size_t text_len;
    txlm_token_spans spans;
    srv_session *user;
    uint64_t seed;
    int seed_known;                /* 0: a session's sampler went on from a state, its seed unknown */
    srv_job *jobs;
    uint32_t n_jobs, n_done;
    srv_buf sse;                   /* streamed events not yet sent */
    srv_buf out;                   /* the scheduler's events of this step, before they are handed over */
    int status;                    /* the answer, when not streamed */
    char *body;
    size_t body_len;
    struct srv_req *next_live;
} srv_req;

typedef struct srv_metrics {
    atomic_uint_fast64_t requests[8]; /* by srv_endpoint */
    atomic_uint_fast64_t responses[6];/* 2xx 4xx 429 5xx ... (srv_metrics.c) */
    atomic_uint_fast64_t prompt_tokens, generated_tokens, scored_tokens;
    atomic_uint_fast64_t steps, step_us, step_hist[12], slowest_step_us;
    atomic_uint_fast64_t cancelled, cut_off, rejected_full, sessions_expired;
    atomic_uint_fast64_t stream_bytes; /* streams' log-probability buffers held now (srv_job_buffers) */
} srv_metrics;

typedef struct srv {
    srv_config cfg;
    txlm_context *ctx;
    txlm_model *m;
    txlm_model_params p;
    char name[128];
    size_t max_state;              /* the body limit of a session state: the largest state of this model */
    int32_t start;                 /* a text's start, fed when there is no prompt (<eos>, as txlm generate) */
    uint32_t seg;                  /* max_segment: the model's tgt_len, as txlm generate and score feed */
    txlm_batch *batch;
    txlm_session **pool;
    uint8_t *pool_busy;
    uint64_t *pool_bytes;          /* each pooled session's device memory when no call holds it */
    uint64_t fixed_bytes;          /* the model's and the batch's device memory */
    uint64_t planned_bytes;        /* the start-up plan: model, batch, pool and --max-sessions sessions */
    pthread_mutex_t lock;
    pthread_cond_t wake;           /* the scheduler: work arrived, or it is to end */
    pthread_cond_t reaper_wake;    /* the reaper: it is to end (else it wakes every 200 ms) */
    srv_job **queue;               /* waiting streams, oldest first */
    uint32_t n_queue;
    srv_job **active;
    uint32_t n_active;
    srv_req *live;                 /* requests the HTTP side holds */
    uint32_t n_live;
    srv_session **sessions;
    uint32_t n_sessions;
    atomic_int stopping;           /* refuse new work (read without the lock by the HTTP thread) */
    int cancel_all;                /* the grace period is over */
    int sched_exit, reaper_exit;   /* the main thread asks them to end */
    int sched_done, reaper_done;   /* they have (the main thread waits for it, bounded, before joining) */
    size_t body_bytes;             /* request bodies held now (cfg.max_body_total) */
    struct srv_pool *workers;
    srv_metrics metrics;
    struct srv_conns *conns;
    struct MHD_Daemon *daemon;
    pthread_t sched, reaper;
    double started;
} srv;

double srv_now(void);

/* srv_sched.c: the scheduler thread. */
void *srv_sched_main(void *arg);
/* Queues a request's jobs (under srv.lock): 0, or the HTTP status that refuses it (429, 503). */
int srv_sched_submit(srv *sv, srv_req *r);

/* srv_req.c: requests' lifetimes (under srv.lock). */
srv_req *srv_req_new(srv *sv, srv_kind kind, int key);
/* Drops a reference: 1 when nothing holds r any more (srv_req_free it after unlocking). */
int srv_req_unref(srv_req *r);
/* News for r's client: its connection resumed if it waits for them. */
void srv_req_wake(srv_req *r);
/* Frees a request nothing holds (outside the lock). */
void srv_req_free(srv_req *r);

#endif
