/* Saving and restoring a session's state (its memory, last output row and
 * sampler), to bytes or to a file. Quick calls (the memory's size), on a
 * worker thread all the same: a state of a long memory is megabytes read
 * back from the device. The engine's calls cannot be stopped midway: a
 * cancel seen before one starts gives G_IO_ERROR_CANCELLED, after, none. */
#include "txlm-session-private.h"

typedef struct {
    GBytes *state; /* restore */
    char *path;    /* to or from a file */
} state_job;

static void state_job_free(state_job *j)
{
    g_clear_pointer(&j->state, g_bytes_unref);
    g_free(j->path);
    g_free(j);
}

static state_job *state_job_new(GBytes *state, const char *path)
{
    state_job *j = g_new0(state_job, 1);
    j->state = state ? g_bytes_ref(state) : NULL;
    j->path = g_strdup(path);
    return j;
}

static txlm_session *handle_of(TxlmJob *job) { return txlm_glib_session_handle(TXLM_SESSION(txlm_job_object(job))); }

static gboolean cancelled_before(TxlmJob *job, const char *what)
{
    if (!txlm_job_cancelled(job)) return FALSE;
    txlm_glib_job_cancelled(job, what);
    return TRUE;
}

static void save_run(TxlmJob *job)
{
    txlm_session *s = handle_of(job);
    if (cancelled_before(job, "saving the state")) return;
    size_t size = txlm_session_state_size(s), written = 0;
    char *buf = g_malloc(size);
    txlm_status st = txlm_session_save(s, buf, size, &written);
    if (st) {
        g_free(buf);
        txlm_glib_job_fail(job, st);
        return;
    }
    txlm_job_return_pointer(job, g_bytes_new_take(buf, written), (GDestroyNotify)g_bytes_unref);
}

static void restore_run(TxlmJob *job)
{
    state_job *j = txlm_job_data(job);
    if (cancelled_before(job, "restoring the state")) return;
    gsize size = 0;
    const void *data = g_bytes_get_data(j->state, &size);
    txlm_status st = txlm_session_restore(handle_of(job), data ? data : "", size);
    if (st) txlm_glib_job_fail(job, st);
    else txlm_job_return_boolean(job);
}

static void save_file_run(TxlmJob *job)
{
    state_job *j = txlm_job_data(job);
    if (cancelled_before(job, "saving the state")) return;
    txlm_status st = txlm_session_save_file(handle_of(job), j->path);
    if (st) txlm_glib_job_fail(job, st);
    else txlm_job_return_boolean(job);
}

static void restore_file_run(TxlmJob *job)
{
    state_job *j = txlm_job_data(job);
    if (cancelled_before(job, "restoring the state")) return;
    txlm_status st = txlm_session_restore_file(handle_of(job), j->path);
    if (st) txlm_glib_job_fail(job, st);
    else txlm_job_return_boolean(job);
}

/**
 * txlm_session_save_async:
 * @session: a #TxlmSession
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @callback: (scope async): called on the thread-default main context of
 *   the caller with the state
 * @user_data: (closure): data for @callback
 *
 * Saves the session's state (its memory, last output row and sampler;
 * versioned, checksummed and bound to the model) on a worker thread;
 * txlm_session_save_finish() gives it as bytes, which
 * txlm_session_restore_async() puts back into this or another session of
 * the same model, after which generating goes on exactly as it would
 * have from here.
 */
void txlm_session_save_async(TxlmSession *session, GCancellable *cancellable, GAsyncReadyCallback callback,
                             gpointer user_data)
{
    g_return_if_fail(TXLM_IS_SESSION(session));
    txlm_glib_session_start(session, "save", save_run, state_job_new(NULL, NULL), (GDestroyNotify)state_job_free,
                            cancellable, txlm_session_save_async, callback, user_data);
}

/**
 * txlm_session_save_finish:
 * @session: a #TxlmSession
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError, or %NULL
 *
 * The result of txlm_session_save_async().
 *
 * Returns: (transfer full): the state, or %NULL with @error set
 */
GBytes *txlm_session_save_finish(TxlmSession *session, GAsyncResult *result, GError **error)
{
    return txlm_glib_session_finish(session, result, txlm_session_save_async, error);
}

/**
 * txlm_session_save_sync:
 * @session: a #TxlmSession
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @error: return location for a #GError, or %NULL
 *
 * txlm_session_save_async() on the calling thread.
 *
 * Returns: (transfer full): the state, or %NULL with @error set
 */
GBytes *txlm_session_save_sync(TxlmSession *session, GCancellable *cancellable, GError **error)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), NULL);
    gpointer state = NULL;
    if (!txlm_glib_session_run(session, "save", save_run, state_job_new(NULL, NULL), (GDestroyNotify)state_job_free,
                               cancellable, &state, error))
        return NULL;
    return state;
}

/**
 * txlm_session_restore_async:
 * @session: a #TxlmSession
 * @state: a state from txlm_session_save_finish() (of a session of the same model)
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @callback: (scope async): called on the thread-default main context of
 *   the caller when the state is restored
 * @user_data: (closure): data for @callback
 *
 * Replaces the session's state with @state on a worker thread. A state of
 * another model fails with %TXLM_ERROR_INVALID_ARGUMENT, a damaged one
 * with %TXLM_ERROR_CHECKSUM or %TXLM_ERROR_FORMAT, and the session is then
 * left as it was.
 */
void txlm_session_restore_async(TxlmSession *session, GBytes *state, GCancellable *cancellable,
                                GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail(TXLM_IS_SESSION(session));
    g_return_if_fail(state != NULL);
    txlm_glib_session_start(session, "restore", restore_run, state_job_new(state, NULL),
                            (GDestroyNotify)state_job_free, cancellable, txlm_session_restore_async, callback,
                            user_data);
}

/**
 * txlm_session_restore_finish:
 * @session: a #TxlmSession
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError, or %NULL
 *
 * The result of txlm_session_restore_async().
 *
 * Returns: %TRUE, or %FALSE with @error set
 */
gboolean txlm_session_restore_finish(TxlmSession *session, GAsyncResult *result, GError **error)
{
    return txlm_glib_session_finish(session, result, txlm_session_restore_async, error) != NULL;
}

/**
 * txlm_session_restore_sync:
 * @session: a #TxlmSession
 * @state: a state from txlm_session_save_finish()
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @error: return location for a #GError, or %NULL
 *
 * txlm_session_restore_async() on the calling thread.
 *
 * Returns: %TRUE, or %FALSE with @error set
 */
gboolean txlm_session_restore_sync(TxlmSession *session, GBytes *state, GCancellable *cancellable, GError **error)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), FALSE);
    g_return_val_if_fail(state != NULL, FALSE);
    return txlm_glib_session_run(session, "restore", restore_run, state_job_new(state, NULL),
                                 (GDestroyNotify)state_job_free, cancellable, NULL, error);
}

/**
 * txlm_session_save_to_file_async:
 * @session: a #TxlmSession
 * @path: (type filename): the file to write
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @callback: (scope async): called on the thread-default main context of
 *   the caller when the file is written
 * @user_data: (closure): data for @callback
 *
 * Saves the session's state to @path on a worker thread (what `txlm
 * generate --state-out` writes): through a temporary file renamed onto
 * @path, so that a crash never leaves a torn state there.
 */
void txlm_session_save_to_file_async(TxlmSession *session, const char *path, GCancellable *cancellable,
                                     GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail(TXLM_IS_SESSION(session));
    g_return_if_fail(path != NULL);
    txlm_glib_session_start(session, "save_to_file", save_file_run, state_job_new(NULL, path),
                            (GDestroyNotify)state_job_free, cancellable, txlm_session_save_to_file_async, callback,
                            user_data);
}

/**
 * txlm_session_save_to_file_finish:
 * @session: a #TxlmSession
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError, or %NULL
 *
 * The result of txlm_session_save_to_file_async().
 *
 * Returns: %TRUE, or %FALSE with @error set (%TXLM_ERROR_IO where the file
 *   cannot be written)
 */
gboolean txlm_session_save_to_file_finish(TxlmSession *session, GAsyncResult *result, GError **error)
{
    return txlm_glib_session_finish(session, result, txlm_session_save_to_file_async, error) != NULL;
}

/**
 * txlm_session_save_to_file_sync:
 * @session: a #TxlmSession
 * @path: (type filename): the file to write
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @error: return location for a #GError, or %NULL
 *
 * txlm_session_save_to_file_async() on the calling thread.
 *
 * Returns: %TRUE, or %FALSE with @error set
 */
gboolean txlm_session_save_to_file_sync(TxlmSession *session, const char *path, GCancellable *cancellable,
                                        GError **error)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), FALSE);
    g_return_val_if_fail(path != NULL, FALSE);
    return txlm_glib_session_run(session, "save_to_file", save_file_run, state_job_new(NULL, path),
                                 (GDestroyNotify)state_job_free, cancellable, NULL, error);
}

/**
 * txlm_session_restore_from_file_async:
 * @session: a #TxlmSession
 * @path: (type filename): a state file (from txlm_session_save_to_file_async()
 *   or `txlm generate --state-out`)
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @callback: (scope async): called on the thread-default main context of
 *   the caller when the state is restored
 * @user_data: (closure): data for @callback
 *
 * Replaces the session's state with the one in @path on a worker thread
 * (as txlm_session_restore_async(); anything but a regular file is
 * refused).
 */
void txlm_session_restore_from_file_async(TxlmSession *session, const char *path, GCancellable *cancellable,
                                          GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail(TXLM_IS_SESSION(session));
    g_return_if_fail(path != NULL);
    txlm_glib_session_start(session, "restore_from_file", restore_file_run, state_job_new(NULL, path),
                            (GDestroyNotify)state_job_free, cancellable, txlm_session_restore_from_file_async,
                            callback, user_data);
}

/**
 * txlm_session_restore_from_file_finish:
 * @session: a #TxlmSession
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError, or %NULL
 *
 * The result of txlm_session_restore_from_file_async().
 *
 * Returns: %TRUE, or %FALSE with @error set
 */
gboolean txlm_session_restore_from_file_finish(TxlmSession *session, GAsyncResult *result, GError **error)
{
    return txlm_glib_session_finish(session, result, txlm_session_restore_from_file_async, error) != NULL;
}

/**
 * txlm_session_restore_from_file_sync:
 * @session: a #TxlmSession
 * @path: (type filename): a state file
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @error: return location for a #GError, or %NULL
 *
 * txlm_session_restore_from_file_async() on the calling thread.
 *
 * Returns: %TRUE, or %FALSE with @error set
 */
gboolean txlm_session_restore_from_file_sync(TxlmSession *session, const char *path, GCancellable *cancellable,
                                             GError **error)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), FALSE);
    g_return_val_if_fail(path != NULL, FALSE);
    return txlm_glib_session_run(session, "restore_from_file", restore_file_run, state_job_new(NULL, path),
                                 (GDestroyNotify)state_job_free, cancellable, NULL, error);
}
