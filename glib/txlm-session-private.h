/* What the files of TxlmSession share: the handle, the one-call-at-a-time
 * claim, the settings read when a call starts, and starting a call on a
 * worker thread or running it here. Private. */
#ifndef TXLM_SESSION_PRIVATE_H
#define TXLM_SESSION_PRIVATE_H

#include "txlm-glib-private.h"
#include "txlm-job.h"

/* The sampling settings as a call starts (the session's properties). */
typedef struct {
    txlm_sampling sampling;
    float repeat_penalty;
    uint32_t repeat_last_n;
    char **stops; /* owned */
} txlm_glib_sampling;

void txlm_glib_session_sampling(TxlmSession *session, txlm_glib_sampling *out);
void txlm_glib_sampling_clear(txlm_glib_sampling *s);

/* The engine's session and model (used by the job that holds the claim). */
txlm_session *txlm_glib_session_handle(TxlmSession *session);
txlm_model *txlm_glib_session_model_handle(TxlmSession *session);

/* From the work: the memory's length as it is now (read by the job's thread). */
void txlm_glib_session_note_memory(TxlmSession *session);
/* A txlm_progress_fn (user: the job): notes the memory, posts the
 * session's progress, and returns non-zero once the job is cancelled. */
int txlm_glib_session_progress(void *job, double fraction);
/* An event: emits ::token with data (a string). */
void txlm_glib_session_emit_token(GObject *session, gpointer text);

/* One call on session: `what` names it in the busy error. The async form
 * claims the session (else the callback gets G_IO_ERROR_BUSY), runs `run`
 * on a worker thread and gives its result on the caller's main context;
 * the sync form runs it here. data is the call's own (freed with free). */
void txlm_glib_session_start(TxlmSession *session, const char *what, TxlmJobRun run, gpointer data,
                             GDestroyNotify free, GCancellable *cancellable, gpointer source_tag,
                             GAsyncReadyCallback callback, gpointer user_data);
gboolean txlm_glib_session_run(TxlmSession *session, const char *what, TxlmJobRun run, gpointer data,
                               GDestroyNotify free, GCancellable *cancellable, gpointer *result, GError **error);
/* The result of an _async call (a pointer; TRUE as GINT_TO_POINTER(1)). */
gpointer txlm_glib_session_finish(TxlmSession *session, GAsyncResult *result, gpointer source_tag, GError **error);

/* The failed status of the last call on this thread as the job's error. */
void txlm_glib_job_fail(TxlmJob *job, txlm_status status);
/* G_IO_ERROR_CANCELLED with a message, as the job's error. */
void txlm_glib_job_cancelled(TxlmJob *job, const char *what);

#endif
