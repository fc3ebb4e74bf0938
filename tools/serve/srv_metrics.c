/* Prometheus counters (srv_metrics.h). */
#include "srv_metrics.h"

#include <string.h>

#include "srv_conns.h"
#include "srv_pool.h"

static const char *const endpoints[8] = {"completions", "score", "sessions", "tokenize", "models", "health", "metrics", "other"};
static const char *const classes[6] = {"2xx", "4xx", "429", "5xx", "499", "other"};
/* step latency buckets, seconds */
static const double bounds[12] = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5};

void srv_metrics_request(srv_metrics *m, const char *url)
{
    int k = strstr(url, "/completions") ? 0 : strstr(url, "/score") ? 1 : strstr(url, "/sessions") ? 2
          : strstr(url, "tokenize") ? 3 : strstr(url, "/models") ? 4 : !strcmp(url, "/health") ? 5
          : !strcmp(url, "/metrics") ? 6 : 7;
    atomic_fetch_add(&m->requests[k], 1);
}

void srv_metrics_response(srv_metrics *m, int status)
{
    int k = status == 429 ? 2 : status == 499 ? 4 : status >= 200 && status < 300 ? 0 : status >= 400 && status < 500 ? 1
          : status >= 500 && status < 600 ? 3 : 5;
    atomic_fetch_add(&m->responses[k], 1);
}

void srv_metrics_step(srv_metrics *m, double s)
{
    atomic_fetch_add(&m->steps, 1);
    uint_fast64_t us = (uint_fast64_t)(s * 1e6), was = atomic_load(&m->slowest_step_us);
    atomic_fetch_add(&m->step_us, us);
    while (us > was && !atomic_compare_exchange_weak(&m->slowest_step_us, &was, us)) {
    }
    for (int i = 0; i < 12; i++)
        if (s <= bounds[i]) atomic_fetch_add(&m->step_hist[i], 1);
}

static void counter(srv_buf *b, const char *name, const char *help, uint64_t v)
{
    srv_buf_printf(b, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name, (unsigned long long)v);
}

static void gauge(srv_buf *b, const char *name, const char *help, double v)
{
    srv_buf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n%s %.17g\n", name, help, name, name, v);
}

static void steps(srv_buf *b, srv_metrics *m)
{
    srv_buf_str(b, "# HELP txlm_step_seconds Time of one pass of the batch (every stream's next token or segment).\n"
                   "# TYPE txlm_step_seconds histogram\n");
    for (int i = 0; i < 12; i++)
        srv_buf_printf(b, "txlm_step_seconds_bucket{le=\"%g\"} %llu\n", bounds[i], (unsigned long long)m->step_hist[i]);
    unsigned long long n = m->steps;
    srv_buf_printf(b, "txlm_step_seconds_bucket{le=\"+Inf\"} %llu\ntxlm_step_seconds_sum %.6f\ntxlm_step_seconds_count %llu\n",
                   n, (double)m->step_us / 1e6, n);
}

char *srv_metrics_text(srv *sv, size_t *len)
{
    srv_metrics *m = &sv->metrics;
    srv_buf b = {0};
    srv_buf_str(&b, "# HELP txlm_requests_total HTTP requests by endpoint.\n# TYPE txlm_requests_total counter\n");
    for (int i = 0; i < 8; i++)
        srv_buf_printf(&b, "txlm_requests_total{endpoint=\"%s\"} %llu\n", endpoints[i], (unsigned long long)m->requests[i]);
    srv_buf_str(&b, "# HELP txlm_responses_total Answers by status (499: the client left first).\n"
                    "# TYPE txlm_responses_total counter\n");
    for (int i = 0; i < 6; i++)
        srv_buf_printf(&b, "txlm_responses_total{status=\"%s\"} %llu\n", classes[i], (unsigned long long)m->responses[i]);
    counter(&b, "txlm_prompt_tokens_total", "Prompt tokens fed.", m->prompt_tokens);
    counter(&b, "txlm_generated_tokens_total", "Tokens drawn and fed.", m->generated_tokens);
    counter(&b, "txlm_scored_tokens_total", "Tokens scored.", m->scored_tokens);
    counter(&b, "txlm_cancelled_streams_total", "Streams cancelled because their client left.", m->cancelled);
    counter(&b, "txlm_rejected_total", "Requests refused with 429: the queue was full.", m->rejected_full);
    counter(&b, "txlm_connections_cut_total", "Connections shut down at the request deadline.", m->cut_off);
    counter(&b, "txlm_sessions_expired_total", "Sessions freed after their idle time.", m->sessions_expired);
    steps(&b, m);
    pthread_mutex_lock(&sv->lock);
    double q = sv->n_queue, act = sv->n_active, ses = sv->n_sessions, bodies = (double)sv->body_bytes;
    double tasks = srv_pool_busy(sv);
    uint64_t device = sv->fixed_bytes;
    for (uint32_t k = 0; k < sv->cfg.parallel; k++) device += sv->pool_bytes[k];
    for (uint32_t i = 0; i < sv->n_sessions; i++) device += sv->sessions[i]->device_bytes;
    pthread_mutex_unlock(&sv->lock);
    gauge(&b, "txlm_queue_depth", "Streams waiting for a place in the batch.", q);
    gauge(&b, "txlm_active_streams", "Streams in the batch.", act);
    gauge(&b, "txlm_sessions", "Sessions kept.", ses);
    gauge(&b, "txlm_connections", "Open connections.", srv_conns_count(sv));
    gauge(&b, "txlm_parallel", "Streams one pass holds (--parallel).", sv->cfg.parallel);
    gauge(&b, "txlm_device_bytes", "Device memory held: the model, the batch and its pooled sessions, the sessions "
          "(each as the engine reported it when last let go).", (double)device);
    gauge(&b, "txlm_device_planned_bytes", "Device memory the start-up plan allows: the model, the batch of --parallel "
          "streams and --max-sessions sessions.", (double)sv->planned_bytes);
    gauge(&b, "txlm_body_bytes", "Request bodies held now (--max-body-total).", bodies);
    gauge(&b, "txlm_stream_buffer_bytes", "Streams' buffers of log-probabilities held now (sized by each input, "
          "allocated when the stream starts).", (double)m->stream_bytes);
    gauge(&b, "txlm_worker_tasks", "Requests with the worker threads (reading, tokenizing, sessions), waiting or "
          "running.", tasks);
    *len = b.len;
    if (b.oom) srv_buf_free(&b);
    return b.p;
}
