/* Calls on a worker thread with their events delivered in order before
 * their result (txlm-job.h). */
#include "txlm-job.h"

typedef struct {
    TxlmJobEvent fn;
    gpointer data;
    GDestroyNotify free;
} job_event;

struct _TxlmJob {
    gatomicrefcount ref;
    GObject *object;
    GCancellable *cancellable;
    TxlmJobRun run;
    gpointer data;
    GDestroyNotify data_free;
    TxlmJobSettle settle;
    TxlmJobEvent on_progress;

    /* an _async call: the caller's task, whose context takes the events */
    GTask *task;
    GMutex lock;            /* guards events and drain_scheduled */
    GQueue events;          /* job_event *, oldest first */
    gboolean drain_scheduled;

    /* the outcome */
    gboolean returned;
    gpointer result;
    GDestroyNotify result_free;
    GError *error;
};

TxlmJob *txlm_job_new(gpointer object, GCancellable *cancellable, TxlmJobRun run, gpointer data,
                      GDestroyNotify data_free)
{
    TxlmJob *job = g_new0(TxlmJob, 1);
    g_atomic_ref_count_init(&job->ref);
    job->object = g_object_ref(object);
    job->cancellable = cancellable ? g_object_ref(cancellable) : NULL;
    job->run = run;
    job->data = data;
    job->data_free = data_free;
    g_mutex_init(&job->lock);
    g_queue_init(&job->events);
    return job;
}

static TxlmJob *job_ref(TxlmJob *job)
{
    g_atomic_ref_count_inc(&job->ref);
    return job;
}

static void event_free(job_event *e)
{
    if (e->free) e->free(e->data);
    g_free(e);
}

static void job_unref(TxlmJob *job)
{
    if (!g_atomic_ref_count_dec(&job->ref)) return;
    g_queue_clear_full(&job->events, (GDestroyNotify)event_free);
    g_mutex_clear(&job->lock);
    if (job->result && job->result_free) job->result_free(job->result);
    g_clear_error(&job->error);
    if (job->data_free) job->data_free(job->data);
    g_clear_object(&job->task);
    g_clear_object(&job->cancellable);
    g_object_unref(job->object);
    g_free(job);
}

void txlm_job_set_settle(TxlmJob *job, TxlmJobSettle settle) { job->settle = settle; }
void txlm_job_set_progress_event(TxlmJob *job, TxlmJobEvent on_progress) { job->on_progress = on_progress; }
gpointer txlm_job_data(TxlmJob *job) { return job->data; }
GObject *txlm_job_object(TxlmJob *job) { return job->object; }
gboolean txlm_job_cancelled(TxlmJob *job) { return g_cancellable_is_cancelled(job->cancellable); }
gboolean txlm_job_succeeded(TxlmJob *job) { return job->returned && !job->error; }

/* Emits the events posted so far, oldest first (on the caller's context). */
static void drain(TxlmJob *job)
{
    for (;;) {
        g_mutex_lock(&job->lock);
        job_event *e = g_queue_pop_head(&job->events);
        if (!e) job->drain_scheduled = FALSE;
        g_mutex_unlock(&job->lock);
        if (!e) return;
        e->fn(job->object, e->data);
        event_free(e);
    }
}

static gboolean drain_source(gpointer job)
{
    drain(job);
    return G_SOURCE_REMOVE;
}

void txlm_job_post(TxlmJob *job, TxlmJobEvent event, gpointer data, GDestroyNotify free)
{
    if (!job->task) { /* a synchronous call: here and now */
        event(job->object, data);
        if (free) free(data);
        return;
    }
    job_event *e = g_new(job_event, 1);
    *e = (job_event){event, data, free};
    g_mutex_lock(&job->lock);
    g_queue_push_tail(&job->events, e);
    gboolean schedule = !job->drain_scheduled;
    job->drain_scheduled = TRUE;
    g_mutex_unlock(&job->lock);
    if (!schedule) return;
    GSource *source = g_idle_source_new();
    g_source_set_priority(source, g_task_get_priority(job->task));
    g_source_set_callback(source, drain_source, job_ref(job), (GDestroyNotify)job_unref);
    g_source_set_static_name(source, "[txlm-glib] events");
    g_source_attach(source, g_task_get_context(job->task));
    g_source_unref(source);
}

int txlm_job_progress(void *user, double fraction)
{
    TxlmJob *job = user;
    if (job->on_progress) {
        double *f = g_new(double, 1);
        *f = fraction;
        txlm_job_post(job, job->on_progress, f, g_free);
    }
    return txlm_job_cancelled(job);
}

void txlm_job_return_pointer(TxlmJob *job, gpointer result, GDestroyNotify free)
{
    g_return_if_fail(!job->returned);
    job->returned = TRUE;
    job->result = result;
    job->result_free = free;
}

void txlm_job_return_boolean(TxlmJob *job) { txlm_job_return_pointer(job, GINT_TO_POINTER(TRUE), NULL); }

void txlm_job_return_error(TxlmJob *job, GError *error)
{
    g_return_if_fail(!job->returned);
    job->returned = TRUE;
    job->error = error;
}

static void worker(GTask *inner, gpointer source, gpointer job, GCancellable *cancellable)
{
    (void)inner, (void)source, (void)cancellable;
    ((TxlmJob *)job)->run(job);
}

/* On the caller's context once the worker is done: the events still queued,
 * then the settling, then the result. */
static void worker_done(GObject *source, GAsyncResult *res, gpointer user)
{
    (void)source, (void)res;
    TxlmJob *job = user;
    drain(job);
    if (job->settle) job->settle(job);
    GTask *task = g_steal_pointer(&job->task);
    if (job->error) {
        g_task_return_error(task, g_steal_pointer(&job->error));
    } else {
        GDestroyNotify free = job->result_free;
        job->result_free = NULL;
        g_task_return_pointer(task, g_steal_pointer(&job->result), free);
    }
    g_object_unref(task);
    job_unref(job);
}

void txlm_job_start(TxlmJob *job, int io_priority, gpointer source_tag, GAsyncReadyCallback callback,
                    gpointer user_data)
{
    job->task = g_task_new(job->object, job->cancellable, callback, user_data);
    g_task_set_source_tag(job->task, source_tag);
    g_task_set_priority(job->task, io_priority);
    /* the result says what the engine did: a call that finished before it
     * saw the cancel succeeded, and its work is in the session */
    g_task_set_check_cancellable(job->task, FALSE);
    /* the worker's own task, made on the same context: its callback,
     * worker_done, runs there after the work returns */
    GTask *inner = g_task_new(NULL, NULL, worker_done, job);
    g_task_set_priority(inner, io_priority);
    g_task_set_task_data(inner, job, NULL);
    g_task_run_in_thread(inner, worker);
    g_object_unref(inner);
}

gboolean txlm_job_run_sync(TxlmJob *job, gpointer *result, GError **error)
{
    job->run(job);
    if (job->settle) job->settle(job);
    gboolean ok = job->error == NULL;
    if (!ok) g_propagate_error(error, g_steal_pointer(&job->error));
    else if (result) {
        *result = g_steal_pointer(&job->result);
        job->result_free = NULL;
    }
    job_unref(job);
    return ok;
}
