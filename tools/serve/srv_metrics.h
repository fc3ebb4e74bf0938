/* Counters for GET /metrics (Prometheus' text format): requests by
 * endpoint, answers by status class, tokens, the queue, step latency. */
#ifndef TXLM_SRV_METRICS_H
#define TXLM_SRV_METRICS_H

#include "serve.h"

void srv_metrics_request(srv_metrics *m, const char *url);
void srv_metrics_response(srv_metrics *m, int status);
/* One pass of the batch took s seconds. */
void srv_metrics_step(srv_metrics *m, double s);
/* The whole text (malloc'd), the gauges read under srv.lock. */
char *srv_metrics_text(srv *sv, size_t *len);

#endif
