/* The front door's workers: a few threads that do a request's work
 * before the scheduler or its answer (its JSON read, up to --max-body of
 * text tokenized, a session made or deleted, a state saved or restored,
 * a stored session brought back), so that libmicrohttpd's polling thread
 * only moves bytes and every other connection, streams included, goes on
 * meanwhile. The polling thread suspends the connection and hands the
 * task over (srv_http.c); the task's end resumes it. */
#ifndef TXLM_SRV_POOL_H
#define TXLM_SRV_POOL_H

#include "serve.h"

/* Starts n threads. 0, or -1 after printing why. */
int srv_pool_start(srv *sv, uint32_t n);
/* locked: queues run(arg) for the next free worker. 0, or -1 (out of memory). */
int srv_pool_push(srv *sv, void (*run)(void *arg), void *arg);
/* locked: tasks queued or running. */
uint32_t srv_pool_busy(const srv *sv);
/* The workers end once the queue is empty (not locked; joins them). */
void srv_pool_stop(srv *sv);

#endif
