/* txlm serve: the model over HTTP, OpenAI's completions protocol and
 * txlm's own endpoints (docs/server.md). This file: the options, the
 * start, and the stop on SIGTERM or SIGINT (no new work, 503 meanwhile;
 * what runs may finish within --grace seconds, then is cancelled; the
 * sessions written to --session-dir; exit status 0; a second signal, or
 * a thread that does not end within its bound, exits at once with 1). */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_batch.h"
#include "cli_files.h"
#include "serve.h"
#include "srv_conns.h"
#include "srv_fault.h"
#include "srv_http.h"
#include "srv_listen.h"
#include "srv_pool.h"
#include "srv_sessions.h"
#include "srv_store.h"

static void usage(void)
{
    printf("usage: txlm serve -m MODEL [--host 127.0.0.1] [--port 8080] [--parallel N] [--queue N]\n"
           "                  [--api-key KEY]... [--api-key-file FILE] [--max-sessions N] [--session-idle S]\n"
           "                  [--max-tokens N] [--max-n N] [--max-logprobs N] [--max-body BYTES]\n"
           "                  [--max-body-total BYTES] [--request-timeout S] [--max-connections N]\n"
           "                  [--max-connections-per-ip N] [--workers N] [--grace S] [--session-dir DIR]\n"
           "                  [--alias NAME] [--id-prefix P] [--log] [--mem-len M] [--clamp-len C]\n"
           "                  [--same-length 0|1] [--zero-memory 0|1] [--no-verify]\n\n"
           "An HTTP server for one model: OpenAI's /v1/completions (and /v1/models), txlm's /v1/score,\n"
           "/v1/tokenize, /v1/detokenize and /v1/sessions (a Transformer-XL memory kept between requests),\n"
           "GET /health and GET /metrics (Prometheus). docs/server.md has the protocol and examples.\n\n"
           "  --host H            the address to listen on (default 127.0.0.1: this machine only)\n"
           "  --port P            default 8080; 0 picks a free port (told on stderr)\n"
           "  --parallel N        streams generated together, sharing each pass (default 4)\n"
           "  --queue N           streams that may wait beyond them; more get 429 (default 64)\n"
           "  --api-key KEY       every endpoint but /health needs \"Authorization: Bearer KEY\";\n"
           "                      repeatable (a session belongs to the key that made it)\n"
           "  --api-key-file F    keys, one a line\n"
           "  --max-sessions N    sessions kept at once (default 16); --session-idle S frees one unused\n"
           "                      for S seconds (default 600)\n"
           "  --max-tokens N      the largest max_tokens a request may ask (default 4096), and the\n"
           "                      longest prompt with echo and logprobs\n"
           "  --max-n N           the most choices of one request, n x prompts (default 16)\n"
           "  --max-logprobs N    the largest logprobs (default 20)\n"
           "  --max-body BYTES    the largest request body (default 1048576; a session state may be\n"
           "                      as large as the model's largest state on top)\n"
           "  --max-body-total BYTES  request bodies held at once, all connections together; past it\n"
           "                      429 (default: 256 MiB, or twice the model's largest state if more)\n"
           "  --request-timeout S a request must arrive whole within S seconds (default 30); the same\n"
           "                      idle limit ends silent connections\n"
           "  --max-connections N default 1024; --max-connections-per-ip N: from one address (default\n"
           "                      0: no limit; behind a proxy every client has the proxy's address)\n"
           "  --workers N         threads that read bodies, tokenize and make, save and restore\n"
           "                      sessions, off the thread that answers every connection (default 2)\n"
           "  --grace S           on SIGTERM/SIGINT, streams running may finish within S s (default 10);\n"
           "                      a second signal exits at once\n"
           "  --session-dir DIR   sessions written there at SIGTERM/SIGINT and served again, under the\n"
           "                      same ids, by a server started with the same DIR\n"
           "  --alias NAME        the model's name in answers (default: the file's name)\n"
           "  --id-prefix P       session ids start with \"P-\" (default \"sess\"): give each server behind\n"
           "                      a proxy its own, so the proxy can route a session to its server\n"
           "  --log               a line on stderr as each request ends: method, path, status, seconds,\n"
           "                      the session it used or made\n");
}

static const char *const own_flags[] = {
    "-m", "--model", "--host", "--port", "--parallel", "--queue", "--api-key", "--api-key-file", "--max-sessions",
    "--session-idle", "--max-tokens", "--max-n", "--max-logprobs", "--max-body", "--request-timeout",
    "--max-connections", "--grace", "--alias", "--id-prefix", "--max-body-total", "--max-connections-per-ip", "--workers",
    "--session-dir", NULL};

static int parse_seconds(const char *v, const char *flag, double *out)
{
    char *end;
    double x = strtod(v, &end);
    if (!*v || *end || !(x > 0 && x < 1e7)) return cli_error("%s: \"%s\" is not a number of seconds above 0", flag, v);
    *out = x;
    return 0;
}

/* --api-key-file: one key a line (blank lines skipped). */
static int read_keys(const char *path, srv_config *c, char **owned)
{
    size_t len = 0;
    if (!(*owned = cli_read_file(path, &len))) return 1;
    for (char *line = strtok(*owned, "\r\n"); line; line = strtok(NULL, "\r\n")) {
        const char **k = realloc(c->keys, (c->n_keys + 1) * sizeof *k);
        if (!k) return cli_error("out of memory");
        c->keys = k;
        c->keys[c->n_keys++] = line;
    }
    return c->n_keys ? 0 : cli_error("--api-key-file %s: no keys in it", path);
}

/* A numeric option in range: 0, or 1 after printing why. */
static int u32_in(const char *v, const char *f, uint32_t lo, uint32_t hi, uint32_t *out)
{
    if (cli_parse_u32(v, f, out)) return 1;
    return *out >= lo && *out <= hi ? 0 : cli_error("%s: %u is outside [%u, %u]", f, *out, lo, hi);
}

static int u64_in(const char *v, const char *f, uint64_t lo, uint64_t hi, size_t *out)
{
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (!*v || *end || *v == '-' || x < lo || x > hi)
        return cli_error("%s: \"%s\" is not a number in [%llu, %llu]", f, v, (unsigned long long)lo, (unsigned long long)hi);
    *out = (size_t)x;
    return 0;
}

static int option(const char *f, const char *v, srv_config *c, char **keyfile)
{
    uint32_t x = 0;
    if (!strcmp(f, "-m") || !strcmp(f, "--model")) c->model = v;
    else if (!strcmp(f, "--host")) c->host = v;
    else if (!strcmp(f, "--port")) return u32_in(v, f, 0, 65535, &x) || (c->port = (int)x, 0);
    else if (!strcmp(f, "--parallel")) return u32_in(v, f, 1, CLI_MAX_STREAMS, &c->parallel);
    else if (!strcmp(f, "--queue")) return u32_in(v, f, 0, 1u << 20, &c->queue);
    else if (!strcmp(f, "--max-sessions")) return u32_in(v, f, 0, 1u << 16, &c->max_sessions);
    else if (!strcmp(f, "--max-tokens")) return u32_in(v, f, 1, 1u << 24, &c->max_tokens);
    else if (!strcmp(f, "--max-n")) return u32_in(v, f, 1, 4096, &c->max_n);
    else if (!strcmp(f, "--max-logprobs")) return u32_in(v, f, 0, 32, &c->max_logprobs);
    else if (!strcmp(f, "--max-connections")) return u32_in(v, f, 1, 1u << 20, &c->max_connections);
    else if (!strcmp(f, "--max-body")) return u32_in(v, f, 64, 1u << 30, &x) || (c->max_body = x, 0);
    else if (!strcmp(f, "--max-body-total")) return u64_in(v, f, 64, 1ull << 40, &c->max_body_total);
    else if (!strcmp(f, "--max-connections-per-ip")) return u32_in(v, f, 0, 1u << 20, &c->max_connections_per_ip);
    else if (!strcmp(f, "--workers")) return u32_in(v, f, 1, 64, &c->workers);
    else if (!strcmp(f, "--session-dir")) c->session_dir = v;
    else if (!strcmp(f, "--session-idle")) return parse_seconds(v, f, &c->session_idle_s);
    else if (!strcmp(f, "--request-timeout")) return parse_seconds(v, f, &c->request_timeout_s);
    else if (!strcmp(f, "--grace")) return parse_seconds(v, f, &c->grace_s);
    else if (!strcmp(f, "--alias")) c->alias = v;
    else if (!strcmp(f, "--id-prefix")) {
        if (!*v || strlen(v) > 32 || strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != strlen(v))
            return cli_error("--id-prefix: \"%s\" is not 1 to 32 letters, digits or _", v);
        c->id_prefix = v;
    } else if (!strcmp(f, "--api-key")) {
        const char **k = realloc(c->keys, (c->n_keys + 1) * sizeof *k);
        if (!k) return cli_error("out of memory");
        c->keys = k, c->keys[c->n_keys++] = v;
        if (!*v) return cli_error("--api-key: an empty key");
    } else if (!strcmp(f, "--api-key-file")) *keyfile = (char *)v;
    else return -1;
    return 0;
}

/* 0 = run, 1 = error, 2 = help shown. */
static int parse(int argc, char **argv, srv_config *c, char **owned_keys)
{
    char *keyfile = NULL;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) return usage(), 2;
        if (!strcmp(f, "--no-verify")) { c->mo.no_verify = 1; continue; }
        if (!strcmp(f, "--log")) { c->log = 1; continue; }
        if (!(v = cli_option_value(argc, argv, &i, "serve", own_flags))) return 1;
        int r = option(f, v, c, &keyfile);
        if (r > 0) return 1;
        if (r < 0 && (r = cli_session_option(f, v, &c->so)) != 0)
            return r > 0 ? 1 : cli_error("serve: unknown option \"%s\" (see txlm serve --help)", f);
    }
    if (!c->model) return cli_error("serve: -m MODEL is required");
    if (c->max_body_total && c->max_body_total < c->max_body)
        return cli_error("--max-body-total %zu is less than --max-body %zu: no body could arrive", c->max_body_total, c->max_body);
    if (cli_stdout_not_input("the model", c->model, "--api-key-file", keyfile, NULL)) return 1;
    if (keyfile && read_keys(keyfile, c, owned_keys)) return 1;
    return cli_check_input(c->model, "-m");
}

double srv_now(void) { return cli_now(); }

/* The model's name in answers: --alias, else the file's name without .txlm. */
static void model_name(srv *sv)
{
    const char *base = strrchr(sv->cfg.model, '/');
    base = base ? base + 1 : sv->cfg.model;
    snprintf(sv->name, sizeof sv->name, "%s", sv->cfg.alias ? sv->cfg.alias : base);
    size_t n = strlen(sv->name);
    if (!sv->cfg.alias && n > 5 && !strcmp(sv->name + n - 5, ".txlm")) sv->name[n - 5] = 0;
}

/* The model, the batch and its pooled sessions, the tables. 0, or 1 after printing why. */
static int open_all(srv *sv, cli_batch *cb)
{
    if (cli_open_model(sv->cfg.model, &sv->cfg.mo, &sv->ctx, &sv->m)) return 1;
    txlm_model_get_params(sv->m, &sv->p);
    /* segments of tgt_len, as txlm generate feeds a prompt and txlm score a text */
    sv->seg = sv->p.tgt_len ? sv->p.tgt_len : 128;
    sv->cfg.so.max_segment = sv->seg;
    sv->start = sv->p.eos_id >= 0 ? sv->p.eos_id : 0;
    uint32_t mem = sv->cfg.so.mem_len ? sv->cfg.so.mem_len : sv->p.mem_len;
    /* every layer's memory and its input, and the last row: the largest state, with room to spare */
    sv->max_state = 2 * ((size_t)sv->p.n_layer + 1) * mem * sv->p.d_model * sizeof(float) +
                    (size_t)sv->p.n_token * sizeof(float) + (1u << 20);
    if (!sv->cfg.max_body_total) /* a maximal state and the bodies beside it */
        sv->cfg.max_body_total = 2 * sv->max_state > (256u << 20) ? 2 * sv->max_state : 256u << 20;
    if (sv->max_state > sv->cfg.max_body_total) sv->max_state = sv->cfg.max_body_total; /* no state above the budget */
    model_name(sv);
    if (cli_batch_open(cb, sv->m, sv->cfg.parallel, &sv->cfg.so)) return 1;
    sv->batch = cb->b, sv->pool = cb->s;
    uint32_t all = sv->cfg.parallel + sv->cfg.queue;
    sv->pool_busy = calloc(sv->cfg.parallel, 1);
    sv->pool_bytes = calloc(sv->cfg.parallel, sizeof *sv->pool_bytes);
    txlm_memory_use mu = {0}, bu = {0};
    txlm_model_memory(sv->m, &mu), txlm_batch_memory(sv->batch, &bu);
    sv->fixed_bytes = mu.device_bytes + bu.device_bytes;
    uint64_t per_stream = cb->z.stream_ring_bytes + cb->z.stream_scratch_bytes;
    sv->planned_bytes = mu.device_bytes + cb->z.total_bytes + (uint64_t)sv->cfg.max_sessions * per_stream;
    for (uint32_t k = 0; sv->pool_bytes && k < sv->cfg.parallel; k++) sv->pool_bytes[k] = srv_device_bytes(sv->pool[k]);
    sv->queue = calloc(all, sizeof *sv->queue);
    sv->active = calloc(all, sizeof *sv->active);
    sv->sessions = calloc(sv->cfg.max_sessions + 1, sizeof *sv->sessions);
    if (!sv->pool_busy || !sv->pool_bytes || !sv->queue || !sv->active || !sv->sessions || srv_conns_init(sv)) return cli_error("out of memory");
    return sv->cfg.session_dir ? srv_store_open(sv) : 0;
}

/* How long the stop waits, past the grace period, for what may be in a
 * device call: the streams to end once cancelled (the pass under way to
 * finish), then the last answers to be written and the workers to finish
 * (a state restored, a session made). A thread stuck in a device call
 * that never returns cannot be joined: past this the process exits. 30 s,
 * or four times the slowest pass seen when that is longer: a first pass,
 * which may compile the device's kernels (seconds on a CPU device, more
 * on a busy one), or a large model on a slow device is not taken for a
 * hung one. The threads, once idle, end at once: THREADS_WAIT_S. */
static double device_wait_s(srv *sv)
{
    if (srv_fault("short-stop-wait")) return 2.0;
    double slowest = (double)atomic_load(&sv->metrics.slowest_step_us) / 1e6;
    return 4 * slowest > 30.0 ? 4 * slowest : 30.0;
}

#define THREADS_WAIT_S 5.0

static const char *signal_name(int sig) { return sig == SIGINT ? "SIGINT" : "SIGTERM"; }

/* What the stop waits for (each read under srv.lock). */
static int streams_ended(const srv *sv) { return sv->n_active + sv->n_queue == 0; }
static int answers_written(const srv *sv) { return sv->n_live == 0 && srv_pool_busy(sv) == 0; }
static int threads_ended(const srv *sv) { return sv->sched_done && sv->reaper_done; }
static int reaper_ended(const srv *sv) { return sv->reaper_done; }

/* Waits until done(sv) or `seconds` pass (1: done). A second SIGTERM or
 * SIGINT meanwhile ends the process at once, with status 1: what was not
 * written (answers, --session-dir's sessions) is lost. */
static int wait_until(srv *sv, const sigset_t *sigs, double seconds, int (*done)(const srv *))
{
    double end = srv_now() + seconds;
    for (;;) {
        pthread_mutex_lock(&sv->lock);
        int ok = done(sv);
        pthread_mutex_unlock(&sv->lock);
        if (ok) return 1;
        if (srv_now() >= end) return 0;
        int sig = sigtimedwait(sigs, NULL, &(struct timespec){0, 20 * 1000 * 1000});
        if (sig > 0) {
            fprintf(stderr, "txlm: serve: %s again: exiting at once\n", signal_name(sig));
            _exit(1);
        }
    }
}

static void ask_threads_to_end(srv *sv)
{
    pthread_mutex_lock(&sv->lock);
    sv->sched_exit = sv->reaper_exit = 1;
    pthread_cond_signal(&sv->wake);
    pthread_cond_signal(&sv->reaper_wake);
    pthread_mutex_unlock(&sv->lock);
}

/* SIGTERM or SIGINT: no new work (the server keeps listening and answers
 * 503, /health included, so that a balancer sees it going); what runs
 * may finish within the grace period, then is cancelled; answers go out;
 * the sessions are written to --session-dir; the threads end. Each wait
 * past the grace period is bounded (device_wait_s, THREADS_WAIT_S). */
static void stop(srv *sv, int sig, const sigset_t *sigs)
{
    fprintf(stderr, "txlm: serve: %s: stopping (running streams have %.0f s to finish)\n", signal_name(sig),
            sv->cfg.grace_s);
    pthread_mutex_lock(&sv->lock);
    sv->stopping = 1;
    pthread_cond_signal(&sv->wake);
    pthread_mutex_unlock(&sv->lock);
    wait_until(sv, sigs, sv->cfg.grace_s, streams_ended);
    double grace_end = srv_now();
    pthread_mutex_lock(&sv->lock);
    sv->cancel_all = 1;
    pthread_cond_signal(&sv->wake);
    pthread_mutex_unlock(&sv->lock);
    double bound = device_wait_s(sv);
    int settled = wait_until(sv, sigs, bound, streams_ended) && wait_until(sv, sigs, bound, answers_written);
    if (settled && sv->cfg.session_dir) srv_store_save_all(sv);
    ask_threads_to_end(sv);
    if (!settled || !wait_until(sv, sigs, THREADS_WAIT_S, threads_ended)) {
        wait_until(sv, sigs, 1, reaper_ended); /* it never waits on the device: asked to end, it does at once */
        pthread_mutex_lock(&sv->lock);
        int sched_gone = sv->sched_done, reaper_gone = sv->reaper_done;
        uint32_t streams = sv->n_active + sv->n_queue, requests = sv->n_live, tasks = srv_pool_busy(sv);
        pthread_mutex_unlock(&sv->lock);
        fprintf(stderr, "txlm: serve: the work did not end within %.0f s after the grace period (%u streams, %u requests "
                "unanswered, %u with the workers%s; a device call that never returns?): exiting without cleaning up%s\n",
                srv_now() - grace_end, streams, requests, tasks, sched_gone ? "" : ", the scheduler in a pass",
                sv->cfg.session_dir ? "; the sessions were not written" : "");
        if (sched_gone) pthread_join(sv->sched, NULL); /* those that did end are joined, the stuck one left */
        if (reaper_gone) pthread_join(sv->reaper, NULL);
        _exit(1);
    }
    pthread_join(sv->sched, NULL);
    pthread_join(sv->reaper, NULL);
    srv_pool_stop(sv);
    srv_http_stop(sv);
}

/* Listening, the threads, then waiting for a signal. 0, or 1 after printing why. */
static int run(srv *sv, const sigset_t *sigs)
{
    int port = 0, fd = srv_listen(sv->cfg.host, sv->cfg.port, &port);
    if (fd < 0 || srv_http_start(sv, fd)) return fd >= 0 ? close(fd), 1 : 1;
    sv->started = srv_now();
    if (srv_pool_start(sv, sv->cfg.workers)) return srv_http_stop(sv), 1;
    if (pthread_create(&sv->sched, NULL, srv_sched_main, sv)) return srv_pool_stop(sv), srv_http_stop(sv), cli_error("serve: no thread");
    if (pthread_create(&sv->reaper, NULL, srv_reaper_main, sv)) {
        ask_threads_to_end(sv);
        pthread_join(sv->sched, NULL);
        return srv_pool_stop(sv), srv_http_stop(sv), cli_error("serve: no thread");
    }
    fprintf(stderr, "txlm: serve: listening on http://%s%s%s:%d (model %s, %u streams a pass, %u more may wait)\n",
            strchr(sv->cfg.host, ':') ? "[" : "", sv->cfg.host, strchr(sv->cfg.host, ':') ? "]" : "", port, sv->name,
            sv->cfg.parallel, sv->cfg.queue);
    int sig = 0;
    sigwait(sigs, &sig);
    stop(sv, sig, sigs);
    return 0;
}

static void free_all(srv *sv, cli_batch *cb)
{
    if (sv->sessions) {
        srv_session **all = calloc(sv->n_sessions + 1, sizeof *all);
        uint32_t n = all ? srv_session_expire(sv, 1, all) : 0;
        for (uint32_t i = 0; i < n; i++) srv_session_free(all[i]);
        free(all);
    }
    cli_batch_free(cb);
    srv_conns_free(sv);
    free(sv->pool_busy), free(sv->pool_bytes), free(sv->queue), free(sv->active), free(sv->sessions);
    txlm_model_free(sv->m);
    txlm_context_destroy(sv->ctx);
    pthread_mutex_destroy(&sv->lock);
    pthread_cond_destroy(&sv->wake);
    pthread_cond_destroy(&sv->reaper_wake);
}

int cmd_serve(int argc, char **argv)
{
    srv sv = {.cfg = {.host = "127.0.0.1", .port = 8080, .parallel = 4, .queue = 64, .max_sessions = 16,
                      .max_tokens = 4096, .max_n = 16, .max_logprobs = 20, .max_connections = 1024, .max_body = 1 << 20, .workers = 2,
                      .session_idle_s = 600, .request_timeout_s = 30, .grace_s = 10, .id_prefix = "sess",
                      .so = {.same_length = -1}}};
    char *owned_keys = NULL;
    int rc = parse(argc, argv, &sv.cfg, &owned_keys);
    if (rc) return free(sv.cfg.keys), free(owned_keys), rc == 2 ? 0 : 1;
    /* the signals are taken by sigwait alone: every thread started later inherits the mask */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    pthread_mutex_init(&sv.lock, NULL);
    pthread_cond_init(&sv.wake, NULL);
    pthread_cond_init(&sv.reaper_wake, NULL);
    cli_batch cb = {0};
    rc = open_all(&sv, &cb) || run(&sv, &sigs);
    if (!rc && sv.ctx) rc = cli_validation_status(sv.ctx);
    free_all(&sv, &cb);
    free(sv.cfg.keys);
    free(owned_keys);
    return rc;
}
