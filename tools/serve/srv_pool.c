/* The front door's worker threads (srv_pool.h). */
#include "srv_pool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WORKER_NICE 10

typedef struct srv_task {
    void (*run)(void *arg);
    void *arg;
    struct srv_task *next;
} srv_task;

typedef struct srv_pool {
    pthread_t *threads;
    uint32_t n_threads;
    pthread_cond_t work;           /* a task was queued, or the workers are to end */
    srv_task *head, *tail;
    uint32_t queued, running;
    int exit;
} srv_pool;

static void *worker(void *arg)
{
    srv *sv = arg;
    srv_pool *p = sv->workers;
    /* below the polling thread and the scheduler: on a machine with few
     * cores a tokenization takes the cores they leave, not their turn
     * (Linux: a thread's nice value is its own; this one is the server's
     * plus WORKER_NICE) */
    id_t self = (id_t)syscall(SYS_gettid);
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, self);
    if (!errno) setpriority(PRIO_PROCESS, self, nice + WORKER_NICE);
    pthread_mutex_lock(&sv->lock);
    for (;;) {
        srv_task *t = p->head;
        if (!t) {
            if (p->exit) break;
            pthread_cond_wait(&p->work, &sv->lock);
            continue;
        }
        p->head = t->next;
        if (!p->head) p->tail = NULL;
        p->queued--, p->running++;
        pthread_mutex_unlock(&sv->lock);
        t->run(t->arg);
        free(t);
        pthread_mutex_lock(&sv->lock);
        p->running--;
    }
    pthread_mutex_unlock(&sv->lock);
    return NULL;
}

int srv_pool_start(srv *sv, uint32_t n)
{
    srv_pool *p = calloc(1, sizeof *p);
    if (!p || !(p->threads = calloc(n, sizeof *p->threads))) {
        free(p);
        return fprintf(stderr, "txlm: serve: out of memory\n"), -1;
    }
    pthread_cond_init(&p->work, NULL);
    sv->workers = p;
    for (; p->n_threads < n; p->n_threads++)
        if (pthread_create(&p->threads[p->n_threads], NULL, worker, sv)) {
            srv_pool_stop(sv);
            return fprintf(stderr, "txlm: serve: no thread\n"), -1;
        }
    return 0;
}

int srv_pool_push(srv *sv, void (*run)(void *arg), void *arg)
{
    srv_pool *p = sv->workers;
    srv_task *t = calloc(1, sizeof *t);
    if (!t) return -1;
    t->run = run, t->arg = arg;
    if (p->tail) p->tail->next = t;
    else p->head = t;
    p->tail = t;
    p->queued++;
    pthread_cond_signal(&p->work);
    return 0;
}

uint32_t srv_pool_busy(const srv *sv)
{
    const srv_pool *p = sv->workers;
    return p ? p->queued + p->running : 0;
}

void srv_pool_stop(srv *sv)
{
    srv_pool *p = sv->workers;
    if (!p) return;
    pthread_mutex_lock(&sv->lock);
    p->exit = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&sv->lock);
    for (uint32_t i = 0; i < p->n_threads; i++) pthread_join(p->threads[i], NULL);
    while (p->head) {
        srv_task *t = p->head;
        p->head = t->next;
        free(t);
    }
    pthread_cond_destroy(&p->work);
    free(p->threads);
    free(p);
    sv->workers = NULL;
}
