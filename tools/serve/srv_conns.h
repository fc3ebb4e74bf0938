/* Connections and their deadlines. libmicrohttpd's timeout is an idle
 * one: a client sending a byte a second would never hit it. Each
 * connection here has a deadline instead: a request must arrive whole
 * (headers and body) within --request-timeout of the connection opening
 * or of the previous answer's end; one that does not is shut down. The
 * reaper thread also notices clients that left while their connection
 * waits for the scheduler (their streams are cancelled) and frees idle
 * sessions. */
#ifndef TXLM_SRV_CONNS_H
#define TXLM_SRV_CONNS_H

#include <microhttpd.h>

#include "serve.h"

int srv_conns_init(srv *sv);
void srv_conns_free(srv *sv);
/* libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION callback. */
void srv_conns_notify(void *cls, struct MHD_Connection *c, void **socket_context, enum MHD_ConnectionNotificationCode code);
/* The request on c has arrived whole: its deadline no longer runs. */
void srv_conns_received(srv *sv, struct MHD_Connection *c);
/* Its answer is sent: the next request's deadline starts. */
void srv_conns_completed(srv *sv, struct MHD_Connection *c);
/* The open connections now. */
uint32_t srv_conns_count(srv *sv);

/* The reaper thread: every 200 ms, until sv->reaper_exit. */
void *srv_reaper_main(void *arg);

#endif
