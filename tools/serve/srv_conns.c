/* Connections, deadlines and the reaper (srv_conns.h). */
#include "srv_conns.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "srv_sessions.h"
#include "srv_store.h"

typedef struct conn {
    int fd;
    int receiving;                 /* a request is awaited: the deadline runs */
    double since;
    struct conn *prev, *next;
} conn;

typedef struct srv_conns {
    conn *head;
    uint32_t n;
} srv_conns;

int srv_conns_init(srv *sv) { return (sv->conns = calloc(1, sizeof *sv->conns)) ? 0 : -1; }

void srv_conns_free(srv *sv)
{
    if (!sv->conns) return;
    while (sv->conns->head) {
        conn *k = sv->conns->head;
        sv->conns->head = k->next;
        free(k);
    }
    free(sv->conns);
    sv->conns = NULL;
}

void srv_conns_notify(void *cls, struct MHD_Connection *c, void **socket_context, enum MHD_ConnectionNotificationCode code)
{
    srv *sv = cls;
    srv_conns *cs = sv->conns;
    pthread_mutex_lock(&sv->lock);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        conn *k = calloc(1, sizeof *k);
        const union MHD_ConnectionInfo *fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (k) {
            k->fd = fd ? fd->connect_fd : -1, k->receiving = 1, k->since = srv_now();
            k->next = cs->head;
            if (cs->head) cs->head->prev = k;
            cs->head = k, cs->n++;
        }
        *socket_context = k;
    } else if (*socket_context) {
        /* called before libmicrohttpd closes the socket: the reaper can
         * never shut down a descriptor that was reused by then */
        conn *k = *socket_context;
        if (k->prev) k->prev->next = k->next;
        else cs->head = k->next;
        if (k->next) k->next->prev = k->prev;
        cs->n--;
        free(k);
        *socket_context = NULL;
    }
    pthread_mutex_unlock(&sv->lock);
}

static void mark(srv *sv, struct MHD_Connection *c, int receiving)
{
    const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    pthread_mutex_lock(&sv->lock);
    conn *k = i ? i->socket_context : NULL;
    if (k) k->receiving = receiving, k->since = srv_now();
    pthread_mutex_unlock(&sv->lock);
}

void srv_conns_received(srv *sv, struct MHD_Connection *c) { mark(sv, c, 0); }
void srv_conns_completed(srv *sv, struct MHD_Connection *c) { mark(sv, c, 1); }

uint32_t srv_conns_count(srv *sv)
{
    pthread_mutex_lock(&sv->lock);
    uint32_t n = sv->conns->n;
    pthread_mutex_unlock(&sv->lock);
    return n;
}

/* locked: connections past their deadline are shut down; libmicrohttpd
 * then reads the end and closes them. */
static void cut_slow(srv *sv)
{
    double now = srv_now();
    for (conn *k = sv->conns->head; k; k = k->next) {
        if (!k->receiving || now - k->since <= sv->cfg.request_timeout_s || k->fd < 0) continue;
        shutdown(k->fd, SHUT_RDWR);
        k->receiving = 0;
        atomic_fetch_add(&sv->metrics.cut_off, 1);
    }
}

/* locked: a request waiting on the scheduler whose client closed its end
 * (a suspended connection is not polled by libmicrohttpd) is cancelled. */
static void find_gone(srv *sv)
{
    for (srv_req *r = sv->live; r; r = r->next_live) {
        if (!r->suspended || r->cancelled || r->fd < 0) continue;
        char b;
        ssize_t n = recv(r->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            r->cancelled = 1;
            pthread_cond_signal(&sv->wake);
        }
    }
}

void *srv_reaper_main(void *arg)
{
    srv *sv = arg;
    srv_session **expired = calloc(sv->cfg.max_sessions + 1, sizeof *expired);
    pthread_mutex_lock(&sv->lock);
    while (!sv->reaper_exit) {
        cut_slow(sv);
        find_gone(sv);
        uint32_t n = expired ? srv_session_expire(sv, 0, expired) : 0;
        pthread_mutex_unlock(&sv->lock);
        for (uint32_t i = 0; i < n; i++) srv_store_forget(sv, expired[i]), srv_session_free(expired[i]);
        atomic_fetch_add(&sv->metrics.sessions_expired, n);
        pthread_mutex_lock(&sv->lock);
        /* 200 ms, or less when the stop asks it to end */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 200 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        if (!sv->reaper_exit) pthread_cond_timedwait(&sv->reaper_wake, &sv->lock, &until);
    }
    sv->reaper_done = 1;
    pthread_mutex_unlock(&sv->lock);
    free(expired);
    return NULL;
}
