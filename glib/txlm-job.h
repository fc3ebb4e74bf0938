/* One call of txlm-glib on the engine: run on a worker thread for an
 * _async call (GTask), or on the calling thread for a synchronous one.
 * What the work reports as it goes (a token's text, progress) is posted
 * as events; an _async call's events are emitted on the caller's main
 * context in the order posted, all of them before its result is given:
 * the worker's completion first empties the queue of events and only
 * then returns the GTask, so the order holds by construction, whatever
 * order the main context dispatches its sources in. A synchronous call's
 * events are emitted at once, on the calling thread. Private. */
#ifndef TXLM_JOB_H
#define TXLM_JOB_H

#include <gio/gio.h>

typedef struct _TxlmJob TxlmJob;

/* The work: runs once, on the worker thread or the calling thread; it
 * posts events and ends with txlm_job_return_*. */
typedef void (*TxlmJobRun)(TxlmJob *job);
/* An event, emitted on the caller's main context (an _async call) or on
 * the calling thread (a synchronous one); object is the job's. */
typedef void (*TxlmJobEvent)(GObject *object, gpointer data);
/* Runs on the caller's main context once the work and all its events are
 * done, just before the result is given (or, for a synchronous call, on
 * the calling thread after the work): where a session says it is no
 * longer busy. */
typedef void (*TxlmJobSettle)(TxlmJob *job);

/* A job on object (a ref is taken) with the op's own data (freed with the job). */
TxlmJob *txlm_job_new(gpointer object, GCancellable *cancellable, TxlmJobRun run, gpointer data,
                      GDestroyNotify data_free);
void txlm_job_set_settle(TxlmJob *job, TxlmJobSettle settle);
/* Fractions from the engine's progress callbacks become this event (data: a double *). */
void txlm_job_set_progress_event(TxlmJob *job, TxlmJobEvent on_progress);

/* Runs the job on a worker thread; callback gets the result on the
 * thread-default main context of the caller. Consumes the caller's ref. */
void txlm_job_start(TxlmJob *job, int io_priority, gpointer source_tag, GAsyncReadyCallback callback,
                    gpointer user_data);
/* Runs the job here; TRUE, or FALSE with *error set. *result (may be NULL)
 * takes the result. Consumes the caller's ref. */
gboolean txlm_job_run_sync(TxlmJob *job, gpointer *result, GError **error);

gpointer txlm_job_data(TxlmJob *job);
GObject *txlm_job_object(TxlmJob *job);
gboolean txlm_job_cancelled(TxlmJob *job);
/* Whether the work returned a result, not an error (in settle). */
gboolean txlm_job_succeeded(TxlmJob *job);

/* From the work: an event to emit, in order; free (may be NULL) frees data after. */
void txlm_job_post(TxlmJob *job, TxlmJobEvent event, gpointer data, GDestroyNotify free);
/* A txlm_progress_fn (user: the job): posts the progress event, returns
 * non-zero once the job's cancellable is cancelled. */
int txlm_job_progress(void *job, double fraction);

/* The work's outcome (exactly one of them, once). */
void txlm_job_return_pointer(TxlmJob *job, gpointer result, GDestroyNotify free);
void txlm_job_return_boolean(TxlmJob *job);
void txlm_job_return_error(TxlmJob *job, GError *error);

#endif
