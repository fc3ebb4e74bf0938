/* TxlmModel: a .txlm file loaded on a device (its own txlm_context), as a
 * GInitable and GAsyncInitable: loading runs on a worker thread with its
 * progress notified on the caller's main context. */
#include <string.h>

#include "txlm-glib-private.h"
#include "txlm-job.h"

/**
 * TxlmModel:
 *
 * A model loaded from a `.txlm` file onto a device: its weights, its
 * vocabulary and tokenizer. Read-only once loaded, it may be used from any
 * thread; each of its #TxlmSession objects holds one text's memory.
 *
 * A model is made by txlm_model_load_async() (or txlm_model_new() from a
 * script). To choose the device or follow the loading, construct one and
 * initialise it through #GAsyncInitable: set #TxlmModel:path and
 * #TxlmModel:device, connect to `notify::progress`, then call
 * g_async_initable_init_async(); the notifications arrive on the
 * thread-default main context of that call, all of them before its
 * callback runs.
 *
 * Each model opens its own Vulkan context on its device. A model stays
 * alive as long as any of its sessions does.
 */
struct _TxlmModel {
    GObject parent;
    char *path;
    TxlmDevice *device;
    gboolean no_verify;
    double progress;

    enum { LOAD_NONE, LOAD_RUNNING, LOAD_DONE, LOAD_FAILED } state;
    GError *load_error; /* LOAD_FAILED: what init gave, given again */
    txlm_context *ctx;
    txlm_model *handle;
    txlm_model_params params;
};

static void initable_iface_init(GInitableIface *iface);
static void async_initable_iface_init(GAsyncInitableIface *iface);

G_DEFINE_TYPE_WITH_CODE(TxlmModel, txlm_model, G_TYPE_OBJECT,
                        G_IMPLEMENT_INTERFACE(G_TYPE_INITABLE, initable_iface_init)
                            G_IMPLEMENT_INTERFACE(G_TYPE_ASYNC_INITABLE, async_initable_iface_init))

enum { PROP_0, PROP_PATH, PROP_DEVICE, PROP_NO_VERIFY, PROP_PROGRESS, PROP_LOADED, N_PROPS };
static GParamSpec *props[N_PROPS];

static void txlm_model_finalize(GObject *object)
{
    TxlmModel *m = TXLM_MODEL(object);
    txlm_model_free(m->handle);
    txlm_context_destroy(m->ctx);
    g_clear_error(&m->load_error);
    g_clear_object(&m->device);
    g_free(m->path);
    G_OBJECT_CLASS(txlm_model_parent_class)->finalize(object);
}

static void txlm_model_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    TxlmModel *m = TXLM_MODEL(object);
    switch (id) {
    case PROP_PATH: g_value_set_string(value, m->path); break;
    case PROP_DEVICE: g_value_set_object(value, m->device); break;
    case PROP_NO_VERIFY: g_value_set_boolean(value, m->no_verify); break;
    case PROP_PROGRESS: g_value_set_double(value, m->progress); break;
    case PROP_LOADED: g_value_set_boolean(value, m->state == LOAD_DONE); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void txlm_model_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
    TxlmModel *m = TXLM_MODEL(object);
    switch (id) {
    case PROP_PATH: m->path = g_value_dup_string(value); break;
    case PROP_DEVICE: m->device = g_value_dup_object(value); break;
    case PROP_NO_VERIFY: m->no_verify = g_value_get_boolean(value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void txlm_model_class_init(TxlmModelClass *klass)
{
    GObjectClass *oc = G_OBJECT_CLASS(klass);
    oc->finalize = txlm_model_finalize;
    oc->get_property = txlm_model_get_property;
    oc->set_property = txlm_model_set_property;
    /**
     * TxlmModel:path: (type filename)
     *
     * The `.txlm` file to load (construct-only).
     */
    props[PROP_PATH] = g_param_spec_string("path", NULL, NULL, NULL,
                                           G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
    /**
     * TxlmModel:device:
     *
     * The device to load on (construct-only; %NULL: the `TXLM_DEVICE`
     * environment variable, else the preferred device). Once loaded, the
     * device the model runs on.
     */
    props[PROP_DEVICE] = g_param_spec_object("device", NULL, NULL, TXLM_TYPE_DEVICE,
                                             G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_EXPLICIT_NOTIFY |
                                                 G_PARAM_STATIC_STRINGS);
    /**
     * TxlmModel:no-verify:
     *
     * Skip the per-tensor hashes while loading (construct-only; faster,
     * but a damaged file is then found only where its structure is
     * broken).
     */
    props[PROP_NO_VERIFY] = g_param_spec_boolean("no-verify", NULL, NULL, FALSE,
                                                 G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
    /**
     * TxlmModel:progress:
     *
     * How much of the model is on the device, from 0 to 1 (the fraction of
     * its bytes), notified as each tensor is uploaded, on the main context
     * of the loading call (non-decreasing, 1 last, all before the call's
     * callback).
     */
    props[PROP_PROGRESS] = g_param_spec_double("progress", NULL, NULL, 0, 1, 0,
                                               G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
    /**
     * TxlmModel:loaded:
     *
     * Whether the model is loaded (and sessions can be created).
     */
    props[PROP_LOADED] =
        g_param_spec_boolean("loaded", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(oc, N_PROPS, props);
}

static void txlm_model_init(TxlmModel *m) { (void)m; }

/* ---- loading ----------------------------------------------------------- */

/* What the worker made, put into the model by settle_load on the caller's side. */
typedef struct {
    char *path;
    char device[16]; /* the device's index; "" for txlm's default */
    gboolean no_verify;
    txlm_context *ctx;
    txlm_model *handle;
    txlm_device_info info;
    guint index;   /* the device's place in txlm_list_devices' list */
    GError *error; /* a copy of the job's error, kept by the model */
} load_job;

static void load_job_free(load_job *l)
{
    txlm_model_free(l->handle);
    txlm_context_destroy(l->ctx);
    g_clear_error(&l->error);
    g_free(l->path);
    g_free(l);
}

static void load_fail(TxlmJob *job, load_job *l, GError *error)
{
    l->error = g_error_copy(error);
    txlm_job_return_error(job, error);
}

/* The place of the device the context opened in txlm_list_devices' list:
 * the one asked for, or the one txlm chose (found by name and id). */
static guint device_index(const load_job *l)
{
    if (l->device[0]) return (guint)g_ascii_strtoull(l->device, NULL, 10);
    uint32_t count = 0;
    guint index = 0;
    txlm_device_info *all = NULL;
    if (!txlm_list_devices(NULL, 0, &count) && count && (all = g_new0(txlm_device_info, count)) &&
        !txlm_list_devices(all, count, &count))
        for (uint32_t i = count; i-- > 0;)
            if (!strcmp(all[i].name, l->info.name) && all[i].device_id == l->info.device_id) index = i;
    g_free(all);
    return index;
}

static void load_run(TxlmJob *job)
{
    load_job *l = txlm_job_data(job);
    if (!l->path) {
        load_fail(job, l, g_error_new_literal(TXLM_ERROR, TXLM_ERROR_INVALID_ARGUMENT, "TxlmModel: no path given"));
        return;
    }
    if (txlm_job_cancelled(job)) {
        load_fail(job, l, g_error_new_literal(G_IO_ERROR, G_IO_ERROR_CANCELLED, "loading the model cancelled"));
        return;
    }
    txlm_context_options co = {.device = l->device[0] ? l->device : NULL};
    txlm_model_options mo = {.no_verify = l->no_verify, .progress = txlm_job_progress, .progress_user = job};
    txlm_status st = txlm_context_create(&co, &l->ctx);
    if (!st) st = txlm_model_load(l->ctx, l->path, &mo, &l->handle);
    if (!st) st = txlm_context_device(l->ctx, &l->info);
    if (st) {
        GError *error = txlm_glib_error_new(st); /* (txlm_last_error() before the frees) */
        g_clear_pointer(&l->handle, txlm_model_free);
        g_clear_pointer(&l->ctx, txlm_context_destroy);
        load_fail(job, l, error);
        return;
    }
    l->index = device_index(l);
    txlm_job_return_boolean(job);
}

static void on_load_progress(GObject *object, gpointer fraction)
{
    TxlmModel *m = TXLM_MODEL(object);
    m->progress = *(double *)fraction;
    g_object_notify_by_pspec(object, props[PROP_PROGRESS]);
}

/* On the caller's side, before the result: the model takes what was loaded. */
static void settle_load(TxlmJob *job)
{
    TxlmModel *m = TXLM_MODEL(txlm_job_object(job));
    load_job *l = txlm_job_data(job);
    if (!l->handle) {
        m->state = LOAD_FAILED;
        m->load_error = g_steal_pointer(&l->error);
        return;
    }
    m->ctx = g_steal_pointer(&l->ctx);
    m->handle = g_steal_pointer(&l->handle);
    txlm_model_get_params(m->handle, &m->params);
    g_clear_object(&m->device);
    m->device = txlm_glib_device_new(l->index, &l->info);
    m->state = LOAD_DONE;
    if (m->progress != 1.0) {
        m->progress = 1.0;
        g_object_notify_by_pspec(G_OBJECT(m), props[PROP_PROGRESS]);
    }
    g_object_notify_by_pspec(G_OBJECT(m), props[PROP_DEVICE]);
    g_object_notify_by_pspec(G_OBJECT(m), props[PROP_LOADED]);
}

/* A job loading m, or NULL with *error set when m is loaded, loading or failed. */
static TxlmJob *load_job_new(TxlmModel *m, GCancellable *cancellable, GError **error)
{
    if (m->state == LOAD_RUNNING) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_PENDING, "the model is being loaded");
        return NULL;
    }
    if (m->state == LOAD_FAILED) {
        if (error) *error = g_error_copy(m->load_error);
        return NULL;
    }
    load_job *l = g_new0(load_job, 1);
    l->path = g_strdup(m->path);
    l->no_verify = m->no_verify;
    if (m->device) g_snprintf(l->device, sizeof l->device, "%u", txlm_device_get_index(m->device));
    m->state = LOAD_RUNNING;
    TxlmJob *job = txlm_job_new(m, cancellable, load_run, l, (GDestroyNotify)load_job_free);
    txlm_job_set_settle(job, settle_load);
    txlm_job_set_progress_event(job, on_load_progress);
    return job;
}

static gboolean initable_init(GInitable *initable, GCancellable *cancellable, GError **error)
{
    TxlmModel *m = TXLM_MODEL(initable);
    if (m->state == LOAD_DONE) return TRUE;
    TxlmJob *job = load_job_new(m, cancellable, error);
    return job && txlm_job_run_sync(job, NULL, error);
}

static void initable_iface_init(GInitableIface *iface) { iface->init = initable_init; }

static void async_init(GAsyncInitable *initable, int io_priority, GCancellable *cancellable,
                       GAsyncReadyCallback callback, gpointer user_data)
{
    TxlmModel *m = TXLM_MODEL(initable);
    GError *error = NULL;
    TxlmJob *job = m->state == LOAD_DONE ? NULL : load_job_new(m, cancellable, &error);
    if (job) {
        txlm_job_start(job, io_priority, async_init, callback, user_data);
        return;
    }
    /* loaded already (TRUE again), or loading or failed (an error) */
    GTask *task = g_task_new(m, cancellable, callback, user_data);
    g_task_set_source_tag(task, async_init);
    if (error) g_task_return_error(task, error);
    else g_task_return_pointer(task, GINT_TO_POINTER(TRUE), NULL);
    g_object_unref(task);
}

static gboolean async_init_finish(GAsyncInitable *initable, GAsyncResult *res, GError **error)
{
    g_return_val_if_fail(g_task_is_valid(res, initable), FALSE);
    return g_task_propagate_pointer(G_TASK(res), error) != NULL;
}

static void async_initable_iface_init(GAsyncInitableIface *iface)
{
    iface->init_async = async_init;
    iface->init_finish = async_init_finish;
}

/**
 * txlm_model_new:
 * @path: (type filename): a `.txlm` file
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @error: return location for a #GError, or %NULL
 *
 * Loads a model on the default device (the `TXLM_DEVICE` environment
 * variable, else the preferred device), on the calling thread: for
 * scripts; a program with a user interface calls txlm_model_load_async().
 * #TxlmModel:progress is notified on the calling thread as tensors are
 * uploaded, and cancelling @cancellable (from another thread) stops the
 * load after the tensor being uploaded.
 *
 * Returns: (transfer full): the loaded model, or %NULL with @error set:
 *   %TXLM_ERROR_IO for a file that cannot be read (one that does not
 *   exist), %TXLM_ERROR_FORMAT or %TXLM_ERROR_CHECKSUM for a damaged one,
 *   %G_IO_ERROR_CANCELLED when cancelled
 */
TxlmModel *txlm_model_new(const char *path, GCancellable *cancellable, GError **error)
{
    g_return_val_if_fail(path != NULL, NULL);
    return g_initable_new(TXLM_TYPE_MODEL, cancellable, error, "path", path, NULL);
}

/**
 * txlm_model_load_async:
 * @path: (type filename): a `.txlm` file
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @callback: (scope async): called on the thread-default main context of
 *   the caller once the model is loaded or the load failed
 * @user_data: (closure): data for @callback
 *
 * Loads a model on a worker thread, on the default device (the
 * `TXLM_DEVICE` environment variable, else the preferred device); call
 * txlm_model_load_finish() from @callback, whose source object is the
 * model. Cancelling @cancellable stops the load after the tensor being
 * uploaded. To choose the device or follow the progress, see #TxlmModel.
 */
void txlm_model_load_async(const char *path, GCancellable *cancellable, GAsyncReadyCallback callback,
                           gpointer user_data)
{
    g_return_if_fail(path != NULL);
    g_async_initable_new_async(TXLM_TYPE_MODEL, G_PRIORITY_DEFAULT, cancellable, callback, user_data, "path", path,
                               NULL);
}

/**
 * txlm_model_load_finish:
 * @result: the #GAsyncResult given to the callback of txlm_model_load_async()
 * @error: return location for a #GError, or %NULL
 *
 * The result of txlm_model_load_async().
 *
 * Returns: (transfer full): the loaded model, or %NULL with @error set (as
 *   txlm_model_new() sets it)
 */
TxlmModel *txlm_model_load_finish(GAsyncResult *result, GError **error)
{
    g_return_val_if_fail(G_IS_ASYNC_RESULT(result), NULL);
    GObject *source = g_async_result_get_source_object(result);
    g_return_val_if_fail(TXLM_IS_MODEL(source), NULL);
    GObject *model = g_async_initable_new_finish(G_ASYNC_INITABLE(source), result, error);
    g_object_unref(source);
    return model ? TXLM_MODEL(model) : NULL;
}

/* ---- what a loaded model tells --------------------------------------------- */

txlm_model *txlm_glib_model_handle(TxlmModel *model) { return model->state == LOAD_DONE ? model->handle : NULL; }

static gboolean check_loaded(TxlmModel *model, GError **error)
{
    if (model->state == LOAD_DONE) return TRUE;
    g_set_error_literal(error, TXLM_ERROR, TXLM_ERROR_INVALID_ARGUMENT, "the model is not loaded");
    return FALSE;
}

/**
 * txlm_model_get_path:
 * @model: a #TxlmModel
 *
 * Returns: (transfer none) (type filename) (nullable): the #TxlmModel:path property
 */
const char *txlm_model_get_path(TxlmModel *model)
{
    g_return_val_if_fail(TXLM_IS_MODEL(model), NULL);
    return model->path;
}

/**
 * txlm_model_get_device:
 * @model: a #TxlmModel
 *
 * Returns: (transfer none) (nullable): the #TxlmModel:device property: the
 *   device the model runs on, once loaded
 */
TxlmDevice *txlm_model_get_device(TxlmModel *model)
{
    g_return_val_if_fail(TXLM_IS_MODEL(model), NULL);
    return model->device;
}

/**
 * txlm_model_get_no_verify:
 * @model: a #TxlmModel
 *
 * Returns: the #TxlmModel:no-verify property
 */
gboolean txlm_model_get_no_verify(TxlmModel *model)
{
    g_return_val_if_fail(TXLM_IS_MODEL(model), FALSE);
    return model->no_verify;
}

/**
 * txlm_model_get_progress:
 * @model: a #TxlmModel
 *
 * Returns: the #TxlmModel:progress property
 */
double txlm_model_get_progress(TxlmModel *model)
{
    g_return_val_if_fail(TXLM_IS_MODEL(model), 0);
    return model->progress;
}

/**
 * txlm_model_get_loaded:
 * @model: a #TxlmModel
 *
 * Returns: the #TxlmModel:loaded property
 */
gboolean txlm_model_get_loaded(TxlmModel *model)
{
    g_return_val_if_fail(TXLM_IS_MODEL(model), FALSE);
    return model->state == LOAD_DONE;
}

/**
 * txlm_model_get_vocab_size:
 * @model: a #TxlmModel
 *
 * Returns: the number of symbols in the model's vocabulary (0 before it is loaded)
 */
guint txlm_model_get_vocab_size(TxlmModel *model)
{
    g_return_val_if_fail(TXLM_IS_MODEL(model), 0);
    return model->state == LOAD_DONE ? txlm_vocab_size(model->handle) : 0;
}

/**
 * txlm_model_get_max_memory:
 * @model: a #TxlmModel
 *
 * The memory length of the model's sessions: the tokens each keeps of
 * what it was fed (the model's `mem_len`), what
 * txlm_session_get_memory_length() reaches once that many are fed.
 *
 * Returns: the tokens a session's memory holds at most (0 before the model is loaded)
 */
guint txlm_model_get_max_memory(TxlmModel *model)
{
    g_return_val_if_fail(TXLM_IS_MODEL(model), 0);
    return model->state == LOAD_DONE ? model->params.mem_len : 0;
}

/**
 * txlm_model_get_validation_messages:
 * @model: a #TxlmModel
 *
 * Messages the Vulkan validation layer printed on the model's device so
 * far: 0 unless validation is on (the `TXLM_VALIDATION=1` environment
 * variable), and 0 for a correct program.
 *
 * Returns: the number of validation messages
 */
guint64 txlm_model_get_validation_messages(TxlmModel *model)
{
    g_return_val_if_fail(TXLM_IS_MODEL(model), 0);
    return model->ctx ? txlm_context_validation_messages(model->ctx) : 0;
}

/**
 * txlm_model_tokenize:
 * @model: a loaded #TxlmModel
 * @text: the text (UTF-8)
 * @n_tokens: (out): the number of tokens
 * @error: return location for a #GError, or %NULL
 *
 * The token ids of @text with the model's own tokenizer, as a session
 * would be fed them (thread-safe; no session is involved).
 *
 * Returns: (transfer full) (array length=n_tokens) (nullable): the ids
 *   (%NULL for a text without tokens, or with @error set)
 */
gint32 *txlm_model_tokenize(TxlmModel *model, const char *text, gsize *n_tokens, GError **error)
{
    g_return_val_if_fail(TXLM_IS_MODEL(model), NULL);
    g_return_val_if_fail(text != NULL && n_tokens != NULL, NULL);
    *n_tokens = 0;
    if (!check_loaded(model, error)) return NULL;
    int32_t *ids = NULL;
    size_t n = 0;
    txlm_status st = txlm_tokenize(model->handle, text, strlen(text), &ids, &n);
    if (st) {
        txlm_glib_set_error(error, st);
        return NULL;
    }
    gint32 *out = n ? g_memdup2(ids, n * sizeof *ids) : NULL;
    txlm_free(ids);
    *n_tokens = n;
    return out;
}

/**
 * txlm_model_create_session:
 * @model: a loaded #TxlmModel
 * @error: return location for a #GError, or %NULL
 *
 * A new session of the model, its memory empty, with the settings `txlm
 * generate` uses (segments of the model's `tgt_len` tokens, its memory
 * length, clamping and start). The session keeps the model alive.
 * Several sessions of one model may run at once, each on its own thread.
 *
 * Returns: (transfer full): the session, or %NULL with @error set
 *   (%TXLM_ERROR_OUT_OF_MEMORY where its memory does not fit on the device)
 */
TxlmSession *txlm_model_create_session(TxlmModel *model, GError **error)
{
    g_return_val_if_fail(TXLM_IS_MODEL(model), NULL);
    if (!check_loaded(model, error)) return NULL;
    txlm_session_options so = {.same_length = -1, .max_segment = model->params.tgt_len ? model->params.tgt_len : 128};
    txlm_session *s = NULL;
    txlm_status st = txlm_session_create(model->handle, &so, &s);
    if (st) {
        txlm_glib_set_error(error, st);
        return NULL;
    }
    return txlm_glib_session_new(model, s);
}
