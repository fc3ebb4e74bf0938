/* TxlmSession: one text's memory on a model, its sampling settings as
 * properties, the ::token signal, and the rule of one call at a time. The
 * calls themselves: txlm-session-generate.c, txlm-session-text.c (feed,
 * score), txlm-session-state.c (save, restore). */
#include <math.h>

#include "txlm-session-private.h"

/**
 * TxlmSession:
 *
 * The memory of one text on a #TxlmModel (what it was fed, the last
 * `mem_len` tokens of it), with the calls that move it on: generating
 * (txlm_session_generate_async()), feeding text
 * (txlm_session_feed_async()), scoring a text word by word
 * (txlm_session_score_async()), saving and restoring its state
 * (txlm_session_save_async(), txlm_session_restore_async(), and to and
 * from files). Made by txlm_model_create_session(); it keeps its model
 * alive.
 *
 * Each call runs on a worker thread; its signals, notifications and
 * callback arrive on the thread-default main context of the thread that
 * made it. A session runs one call at a time: a call made while another
 * runs fails with %G_IO_ERROR_BUSY and leaves the running one alone
 * (#TxlmSession:busy tells which state it is in). Several sessions, of
 * one model or of several, run at once.
 *
 * Cancelling a call's #GCancellable stops the engine at its next safe
 * point (after the segment or token being computed); the call then fails
 * with %G_IO_ERROR_CANCELLED, and the memory holds exactly what was fed
 * up to there: the prompt's tokens fed and every token generated (each
 * one announced by #TxlmSession::token), the text's tokens scored.
 *
 * The sampling settings (#TxlmSession:temperature, #TxlmSession:top-k,
 * #TxlmSession:top-p, #TxlmSession:repeat-penalty,
 * #TxlmSession:repeat-last-n, #TxlmSession:stop-strings) default to those
 * of `txlm generate`, and a generation with the same seed and settings
 * gives exactly the text `txlm generate --no-display-prompt` prints.
 * They are read when a generation starts.
 */
struct _TxlmSession {
    GObject parent;
    TxlmModel *model;
    txlm_session *handle;
    gint busy;              /* atomic: 1 while a call holds the session */
    const char *busy_with;  /* the name of that call (atomic pointer) */
    gint memory_length;     /* atomic: the memory's rows as of the last step */
    double progress;

    GMutex lock; /* the settings below */
    double temperature, top_p, repeat_penalty;
    guint top_k, repeat_last_n;
    char **stops;
};

G_DEFINE_TYPE(TxlmSession, txlm_session, G_TYPE_OBJECT)

enum {
    PROP_0,
    PROP_MODEL,
    PROP_BUSY,
    PROP_PROGRESS,
    PROP_TEMPERATURE,
    PROP_TOP_K,
    PROP_TOP_P,
    PROP_REPEAT_PENALTY,
    PROP_REPEAT_LAST_N,
    PROP_STOP_STRINGS,
    N_PROPS
};
static GParamSpec *props[N_PROPS];

enum { SIGNAL_TOKEN, N_SIGNALS };
static guint signals[N_SIGNALS];

static void txlm_session_finalize(GObject *object)
{
    TxlmSession *s = TXLM_SESSION(object);
    txlm_session_free(s->handle);
    g_clear_object(&s->model);
    g_strfreev(s->stops);
    g_mutex_clear(&s->lock);
    G_OBJECT_CLASS(txlm_session_parent_class)->finalize(object);
}

static void txlm_session_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    TxlmSession *s = TXLM_SESSION(object);
    switch (id) {
    case PROP_MODEL: g_value_set_object(value, s->model); break;
    case PROP_BUSY: g_value_set_boolean(value, txlm_session_get_busy(s)); break;
    case PROP_PROGRESS: g_value_set_double(value, s->progress); break;
    case PROP_TEMPERATURE: g_value_set_double(value, txlm_session_get_temperature(s)); break;
    case PROP_TOP_K: g_value_set_uint(value, txlm_session_get_top_k(s)); break;
    case PROP_TOP_P: g_value_set_double(value, txlm_session_get_top_p(s)); break;
    case PROP_REPEAT_PENALTY: g_value_set_double(value, txlm_session_get_repeat_penalty(s)); break;
    case PROP_REPEAT_LAST_N: g_value_set_uint(value, txlm_session_get_repeat_last_n(s)); break;
    case PROP_STOP_STRINGS: g_value_take_boxed(value, txlm_session_get_stop_strings(s)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void txlm_session_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
    TxlmSession *s = TXLM_SESSION(object);
    switch (id) {
    case PROP_TEMPERATURE: txlm_session_set_temperature(s, g_value_get_double(value)); break;
    case PROP_TOP_K: txlm_session_set_top_k(s, g_value_get_uint(value)); break;
    case PROP_TOP_P: txlm_session_set_top_p(s, g_value_get_double(value)); break;
    case PROP_REPEAT_PENALTY: txlm_session_set_repeat_penalty(s, g_value_get_double(value)); break;
    case PROP_REPEAT_LAST_N: txlm_session_set_repeat_last_n(s, g_value_get_uint(value)); break;
    case PROP_STOP_STRINGS: txlm_session_set_stop_strings(s, g_value_get_boxed(value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

#define RW (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS)
#define RO (G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS)

static void txlm_session_class_init(TxlmSessionClass *klass)
{
    GObjectClass *oc = G_OBJECT_CLASS(klass);
    oc->finalize = txlm_session_finalize;
    oc->get_property = txlm_session_get_property;
    oc->set_property = txlm_session_set_property;
    /**
     * TxlmSession:model:
     *
     * The model the session runs on (kept alive by the session).
     */
    props[PROP_MODEL] = g_param_spec_object("model", NULL, NULL, TXLM_TYPE_MODEL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    /**
     * TxlmSession:busy:
     *
     * Whether a call is running on the session (another one would fail
     * with %G_IO_ERROR_BUSY). Becomes %TRUE when a call starts (notified
     * on the thread starting it) and %FALSE just before the call's
     * callback runs (notified on its main context): what a stop button's
     * sensitivity follows.
     */
    props[PROP_BUSY] = g_param_spec_boolean("busy", NULL, NULL, FALSE, RO);
    /**
     * TxlmSession:progress:
     *
     * How far the running (or last) call has got, from 0 to 1: tokens
     * generated of those asked for (0 throughout a generation with no
     * limit), segments of a text fed or scored; 1 once a call succeeded.
     * Notified on the call's main context, before its callback.
     */
    props[PROP_PROGRESS] = g_param_spec_double("progress", NULL, NULL, 0, 1, 0, RO);
    /**
     * TxlmSession:temperature:
     *
     * Sampling temperature: 1 draws from the model's own distribution
     * (the default, as `txlm generate`), below 1 sharpens it, 0 or less
     * takes the most likely token (greedy).
     */
    props[PROP_TEMPERATURE] = g_param_spec_double("temperature", NULL, NULL, -G_MAXFLOAT, G_MAXFLOAT, 1.0, RW);
    /**
     * TxlmSession:top-k:
     *
     * Keep only the k most likely tokens when drawing (0, the default: all).
     */
    props[PROP_TOP_K] = g_param_spec_uint("top-k", NULL, NULL, 0, G_MAXINT32, 0, RW);
    /**
     * TxlmSession:top-p:
     *
     * Keep the smallest set of tokens with this much probability when
     * drawing (0, the default, or 1: all).
     */
    props[PROP_TOP_P] = g_param_spec_double("top-p", NULL, NULL, 0, 1, 0, RW);
    /**
     * TxlmSession:repeat-penalty:
     *
     * llama.cpp's repetition penalty: the log-probability of each token
     * among the last #TxlmSession:repeat-last-n (the prompt's included) is
     * multiplied by it, so above 1 makes repeats less likely (1, the
     * default, or 0: off).
     */
    props[PROP_REPEAT_PENALTY] = g_param_spec_double("repeat-penalty", NULL, NULL, 0, G_MAXFLOAT, 1.0, RW);
    /**
     * TxlmSession:repeat-last-n:
     *
     * The tokens #TxlmSession:repeat-penalty looks back over (64, as
     * `txlm generate`).
     */
    props[PROP_REPEAT_LAST_N] = g_param_spec_uint("repeat-last-n", NULL, NULL, 0, G_MAXUINT32, 64, RW);
    /**
     * TxlmSession:stop-strings:
     *
     * Strings that end a generation: once the text generated contains one,
     * the generation stops there, and the text before it is the last
     * given (the stop string is not). %NULL or empty (the default): none.
     * None may be empty.
     */
    props[PROP_STOP_STRINGS] = g_param_spec_boxed("stop-strings", NULL, NULL, G_TYPE_STRV, RW);
    g_object_class_install_properties(oc, N_PROPS, props);

    /**
     * TxlmSession::token:
     * @session: the session
     * @text: the text the token adds to the continuation (UTF-8, may be empty)
     *
     * Emitted once for each token a generation draws and feeds, in order,
     * on the thread-default main context of the thread that called
     * txlm_session_generate_async() (on the calling thread for
     * txlm_session_generate_sync()), all of them before the call's
     * callback. @text is what the token made final: a word the next token
     * may still change (a wt103 model's `@-@` joins), text that may begin
     * a stop string or an incomplete UTF-8 character is held back and
     * comes with a later token; the last token's text includes all that
     * was held. Put together, the texts are the generation's result
     * (txlm_session_generate_finish()), and after a cancelled generation
     * the tokens announced are the tokens the memory took in.
     */
    signals[SIGNAL_TOKEN] = g_signal_new("token", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                         G_TYPE_NONE, 1, G_TYPE_STRING | G_SIGNAL_TYPE_STATIC_SCOPE);
}

static void txlm_session_init(TxlmSession *s)
{
    g_mutex_init(&s->lock);
    s->temperature = 1.0;
    s->top_p = 0.0;
    s->repeat_penalty = 1.0;
    s->repeat_last_n = 64;
}

TxlmSession *txlm_glib_session_new(TxlmModel *model, txlm_session *handle)
{
    TxlmSession *s = g_object_new(TXLM_TYPE_SESSION, NULL);
    s->model = g_object_ref(model);
    s->handle = handle;
    return s;
}

txlm_session *txlm_glib_session_handle(TxlmSession *session) { return session->handle; }
txlm_model *txlm_glib_session_model_handle(TxlmSession *session) { return txlm_glib_model_handle(session->model); }

void txlm_glib_session_note_memory(TxlmSession *session)
{
    g_atomic_int_set(&session->memory_length, (gint)txlm_session_memory_len(session->handle));
}

/* ---- one call at a time ---------------------------------------------------- */

static gboolean claim(TxlmSession *s, const char *what, GError **error)
{
    if (!g_atomic_int_compare_and_exchange(&s->busy, 0, 1)) {
        const char *running = g_atomic_pointer_get(&s->busy_with);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_BUSY,
                    "the session is busy with %s: it runs one call at a time (wait for that call's callback, or "
                    "cancel it, before %s)",
                    running ? running : "another call", what);
        return FALSE;
    }
    g_atomic_pointer_set(&s->busy_with, what);
    return TRUE;
}

static void release(TxlmSession *s)
{
    g_atomic_pointer_set(&s->busy_with, NULL);
    g_atomic_int_set(&s->busy, 0);
}

static void set_progress(TxlmSession *s, double f)
{
    if (s->progress == f) return;
    s->progress = f;
    g_object_notify_by_pspec(G_OBJECT(s), props[PROP_PROGRESS]);
}

static void on_progress(GObject *object, gpointer fraction) { set_progress(TXLM_SESSION(object), *(double *)fraction); }

int txlm_glib_session_progress(void *job, double fraction)
{
    txlm_glib_session_note_memory(TXLM_SESSION(txlm_job_object(job)));
    return txlm_job_progress(job, fraction);
}

void txlm_glib_session_emit_token(GObject *session, gpointer text)
{
    g_signal_emit(session, signals[SIGNAL_TOKEN], 0, (const char *)text);
}

/* On the caller's side once the work and its events are done: the memory
 * as it ended, and the session free for the next call. */
static void settle(TxlmJob *job)
{
    TxlmSession *s = TXLM_SESSION(txlm_job_object(job));
    txlm_glib_session_note_memory(s);
    if (txlm_job_succeeded(job)) set_progress(s, 1.0);
    release(s);
    g_object_notify_by_pspec(G_OBJECT(s), props[PROP_BUSY]);
}

static TxlmJob *new_job(TxlmSession *s, const char *what, TxlmJobRun run, gpointer data, GDestroyNotify free,
                        GCancellable *cancellable, GError **error)
{
    if (!claim(s, what, error)) {
        if (free) free(data);
        return NULL;
    }
    g_object_notify_by_pspec(G_OBJECT(s), props[PROP_BUSY]);
    set_progress(s, 0.0);
    TxlmJob *job = txlm_job_new(s, cancellable, run, data, free);
    txlm_job_set_settle(job, settle);
    txlm_job_set_progress_event(job, on_progress);
    return job;
}

void txlm_glib_session_start(TxlmSession *session, const char *what, TxlmJobRun run, gpointer data,
                             GDestroyNotify free, GCancellable *cancellable, gpointer source_tag,
                             GAsyncReadyCallback callback, gpointer user_data)
{
    GError *error = NULL;
    TxlmJob *job = new_job(session, what, run, data, free, cancellable, &error);
    if (job) txlm_job_start(job, G_PRIORITY_DEFAULT, source_tag, callback, user_data);
    else g_task_report_error(session, callback, user_data, source_tag, error);
}

gboolean txlm_glib_session_run(TxlmSession *session, const char *what, TxlmJobRun run, gpointer data,
                               GDestroyNotify free, GCancellable *cancellable, gpointer *result, GError **error)
{
    TxlmJob *job = new_job(session, what, run, data, free, cancellable, error);
    return job && txlm_job_run_sync(job, result, error);
}

gpointer txlm_glib_session_finish(TxlmSession *session, GAsyncResult *result, gpointer source_tag, GError **error)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), NULL);
    g_return_val_if_fail(g_task_is_valid(result, session), NULL);
    g_return_val_if_fail(g_async_result_is_tagged(result, source_tag), NULL);
    return g_task_propagate_pointer(G_TASK(result), error);
}

void txlm_glib_job_fail(TxlmJob *job, txlm_status status) { txlm_job_return_error(job, txlm_glib_error_new(status)); }

void txlm_glib_job_cancelled(TxlmJob *job, const char *what)
{
    txlm_job_return_error(job, g_error_new(G_IO_ERROR, G_IO_ERROR_CANCELLED, "%s cancelled", what));
}

/* ---- what the session tells -------------------------------------------------- */

/**
 * txlm_session_get_model:
 * @session: a #TxlmSession
 *
 * Returns: (transfer none): the #TxlmSession:model property
 */
TxlmModel *txlm_session_get_model(TxlmSession *session)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), NULL);
    return session->model;
}

/**
 * txlm_session_get_busy:
 * @session: a #TxlmSession
 *
 * Returns: the #TxlmSession:busy property
 */
gboolean txlm_session_get_busy(TxlmSession *session)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), FALSE);
    return g_atomic_int_get(&session->busy) != 0;
}

/**
 * txlm_session_get_progress:
 * @session: a #TxlmSession
 *
 * Returns: the #TxlmSession:progress property
 */
double txlm_session_get_progress(TxlmSession *session)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), 0);
    return session->progress;
}

/**
 * txlm_session_get_memory_length:
 * @session: a #TxlmSession
 *
 * The tokens the session's memory holds: each token fed or generated
 * since it was created or cleared, up to txlm_model_get_max_memory() (the
 * oldest then make way). While a call runs, as of its last segment or
 * token on the worker thread, which may be ahead of the signals the main
 * context has emitted.
 *
 * Returns: the number of tokens in memory
 */
guint txlm_session_get_memory_length(TxlmSession *session)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), 0);
    return (guint)g_atomic_int_get(&session->memory_length);
}

/**
 * txlm_session_clear_memory:
 * @session: a #TxlmSession
 * @error: return location for a #GError, or %NULL
 *
 * Forgets the memory: the next text fed starts a new text (quick; no
 * device work).
 *
 * Returns: %TRUE, or %FALSE with @error set to %G_IO_ERROR_BUSY while a
 *   call runs on the session
 */
gboolean txlm_session_clear_memory(TxlmSession *session, GError **error)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), FALSE);
    if (!claim(session, "clear_memory", error)) return FALSE;
    txlm_session_reset(session->handle);
    txlm_glib_session_note_memory(session);
    release(session);
    return TRUE;
}

/* ---- sampling settings ------------------------------------------------------- */

void txlm_glib_session_sampling(TxlmSession *session, txlm_glib_sampling *out)
{
    g_mutex_lock(&session->lock);
    out->sampling = (txlm_sampling){.temperature = (float)session->temperature, .top_k = session->top_k,
                                    .top_p = (float)session->top_p};
    out->repeat_penalty = (float)session->repeat_penalty;
    out->repeat_last_n = session->repeat_last_n;
    out->stops = g_strdupv(session->stops);
    g_mutex_unlock(&session->lock);
}

void txlm_glib_sampling_clear(txlm_glib_sampling *s) { g_clear_pointer(&s->stops, g_strfreev); }

/* Sets a double setting under the lock; notifies when it changed. */
static void set_double(TxlmSession *s, double *field, double v, int prop)
{
    g_mutex_lock(&s->lock);
    gboolean changed = *field != v;
    *field = v;
    g_mutex_unlock(&s->lock);
    if (changed) g_object_notify_by_pspec(G_OBJECT(s), props[prop]);
}

static void set_uint(TxlmSession *s, guint *field, guint v, int prop)
{
    g_mutex_lock(&s->lock);
    gboolean changed = *field != v;
    *field = v;
    g_mutex_unlock(&s->lock);
    if (changed) g_object_notify_by_pspec(G_OBJECT(s), props[prop]);
}

static double get_double(TxlmSession *s, const double *field)
{
    g_mutex_lock(&s->lock);
    double v = *field;
    g_mutex_unlock(&s->lock);
    return v;
}

static guint get_uint(TxlmSession *s, const guint *field)
{
    g_mutex_lock(&s->lock);
    guint v = *field;
    g_mutex_unlock(&s->lock);
    return v;
}

/**
 * txlm_session_get_temperature:
 * @session: a #TxlmSession
 *
 * Returns: the #TxlmSession:temperature property
 */
double txlm_session_get_temperature(TxlmSession *session)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), 1.0);
    return get_double(session, &session->temperature);
}

/**
 * txlm_session_set_temperature:
 * @session: a #TxlmSession
 * @temperature: the temperature (a finite number; 0 or less: greedy)
 *
 * Sets the #TxlmSession:temperature property.
 */
void txlm_session_set_temperature(TxlmSession *session, double temperature)
{
    g_return_if_fail(TXLM_IS_SESSION(session));
    g_return_if_fail(isfinite(temperature) && fabs(temperature) <= G_MAXFLOAT);
    set_double(session, &session->temperature, temperature, PROP_TEMPERATURE);
}

/**
 * txlm_session_get_top_k:
 * @session: a #TxlmSession
 *
 * Returns: the #TxlmSession:top-k property
 */
guint txlm_session_get_top_k(TxlmSession *session)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), 0);
    return get_uint(session, &session->top_k);
}

/**
 * txlm_session_set_top_k:
 * @session: a #TxlmSession
 * @top_k: the tokens to keep (0: all; at most %G_MAXINT32)
 *
 * Sets the #TxlmSession:top-k property.
 */
void txlm_session_set_top_k(TxlmSession *session, guint top_k)
{
    g_return_if_fail(TXLM_IS_SESSION(session));
    g_return_if_fail(top_k <= G_MAXINT32);
    set_uint(session, &session->top_k, top_k, PROP_TOP_K);
}

/**
 * txlm_session_get_top_p:
 * @session: a #TxlmSession
 *
 * Returns: the #TxlmSession:top-p property
 */
double txlm_session_get_top_p(TxlmSession *session)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), 0);
    return get_double(session, &session->top_p);
}

/**
 * txlm_session_set_top_p:
 * @session: a #TxlmSession
 * @top_p: the probability to keep, in [0, 1] (0 or 1: all)
 *
 * Sets the #TxlmSession:top-p property.
 */
void txlm_session_set_top_p(TxlmSession *session, double top_p)
{
    g_return_if_fail(TXLM_IS_SESSION(session));
    g_return_if_fail(top_p >= 0 && top_p <= 1);
    set_double(session, &session->top_p, top_p, PROP_TOP_P);
}

/**
 * txlm_session_get_repeat_penalty:
 * @session: a #TxlmSession
 *
 * Returns: the #TxlmSession:repeat-penalty property
 */
double txlm_session_get_repeat_penalty(TxlmSession *session)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), 1.0);
    return get_double(session, &session->repeat_penalty);
}

/**
 * txlm_session_set_repeat_penalty:
 * @session: a #TxlmSession
 * @repeat_penalty: the penalty (1 or 0: off; not negative)
 *
 * Sets the #TxlmSession:repeat-penalty property.
 */
void txlm_session_set_repeat_penalty(TxlmSession *session, double repeat_penalty)
{
    g_return_if_fail(TXLM_IS_SESSION(session));
    g_return_if_fail(repeat_penalty >= 0 && repeat_penalty <= G_MAXFLOAT);
    set_double(session, &session->repeat_penalty, repeat_penalty, PROP_REPEAT_PENALTY);
}

/**
 * txlm_session_get_repeat_last_n:
 * @session: a #TxlmSession
 *
 * Returns: the #TxlmSession:repeat-last-n property
 */
guint txlm_session_get_repeat_last_n(TxlmSession *session)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), 64);
    return get_uint(session, &session->repeat_last_n);
}

/**
 * txlm_session_set_repeat_last_n:
 * @session: a #TxlmSession
 * @repeat_last_n: the tokens the penalty looks back over
 *
 * Sets the #TxlmSession:repeat-last-n property.
 */
void txlm_session_set_repeat_last_n(TxlmSession *session, guint repeat_last_n)
{
    g_return_if_fail(TXLM_IS_SESSION(session));
    set_uint(session, &session->repeat_last_n, repeat_last_n, PROP_REPEAT_LAST_N);
}

/**
 * txlm_session_get_stop_strings:
 * @session: a #TxlmSession
 *
 * Returns: (transfer full) (array zero-terminated=1) (nullable): a copy of
 *   the #TxlmSession:stop-strings property
 */
char **txlm_session_get_stop_strings(TxlmSession *session)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), NULL);
    g_mutex_lock(&session->lock);
    char **v = g_strdupv(session->stops);
    g_mutex_unlock(&session->lock);
    return v;
}

/**
 * txlm_session_set_stop_strings:
 * @session: a #TxlmSession
 * @stop_strings: (array zero-terminated=1) (nullable): the stop strings
 *   (copied), or %NULL for none
 *
 * Sets the #TxlmSession:stop-strings property. An empty string among them
 * makes the next generation fail with %TXLM_ERROR_INVALID_ARGUMENT
 * before it feeds anything.
 */
void txlm_session_set_stop_strings(TxlmSession *session, const char *const *stop_strings)
{
    g_return_if_fail(TXLM_IS_SESSION(session));
    char **v = stop_strings && stop_strings[0] ? g_strdupv((char **)stop_strings) : NULL;
    g_mutex_lock(&session->lock);
    char **old = session->stops;
    session->stops = v;
    g_mutex_unlock(&session->lock);
    g_strfreev(old);
    g_object_notify_by_pspec(G_OBJECT(session), props[PROP_STOP_STRINGS]);
}
