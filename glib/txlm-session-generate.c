/* Generating: the prompt fed, then tokens drawn and fed, each one's text
 * through the streaming detokenizer, the stop strings and UTF-8 to a
 * ::token signal; the loop of `txlm generate` (tools/txlm/cmd_generate.c,
 * gen_stream.c), token for token, so that the same seed and settings
 * give the same text. The engine's txlm_session_generate() draws and
 * feeds; its progress callback, after each token, takes the token's text
 * and is where a cancel is seen. */
#include <math.h>
#include <string.h>

#include "txlm-session-private.h"
#include "txlm-utf8-out.h"

enum { CHUNK = 64 }; /* tokens per txlm_session_generate call */

typedef struct {
    TxlmJob *job;
    txlm_session *s;
    char *prompt;
    gint n_tokens; /* -1: no limit */
    guint64 seed;
    txlm_glib_sampling samp;

    txlm_detokenizer *d;
    txlm_stopper *stop;
    size_t skip;              /* bytes of the prompt's own text the detokenizer gives back, not output */
    int32_t *window;          /* the last tokens (prompt's included) for the repetition penalty */
    uint32_t n_window, cap_window;
    txlm_utf8_out utf8;
    GString *text;            /* the continuation so far */
    int32_t tokens[CHUNK];    /* the current txlm_session_generate call's */
    size_t in_chunk;          /* tokens of it taken */
    gint64 made;
    gboolean finished;        /* the last token is taken: by count, stop string or cancel */
    gboolean stopped, cancelled;
    GError *failed;           /* a failure inside the progress callback */
} gen_run;

static void gen_run_free(gen_run *g)
{
    txlm_detokenizer_free(g->d);
    txlm_stopper_free(g->stop);
    g_free(g->window);
    if (g->text) g_string_free(g->text, TRUE);
    txlm_glib_sampling_clear(&g->samp);
    g_clear_error(&g->failed);
    g_free(g->prompt);
    g_free(g);
}

static void remember(gen_run *g, const int32_t *ids, size_t n)
{
    for (size_t i = 0; g->cap_window && i < n; i++) {
        if (g->n_window == g->cap_window) {
            memmove(g->window, g->window + 1, (g->cap_window - 1) * sizeof *g->window);
            g->n_window--;
        }
        g->window[g->n_window++] = ids[i];
    }
}

/* Detokenized bytes in: the prompt's own text skipped, then the stop
 * strings, then UTF-8, onto out. */
static txlm_status take_bytes(gen_run *g, const char *piece, size_t len, GString *out)
{
    size_t drop = MIN(len, g->skip);
    g->skip -= drop;
    const char *text;
    size_t n;
    int stopped = 0;
    txlm_status st = txlm_stopper_push(g->stop, piece + drop, len - drop, &text, &n, &stopped);
    if (st) return st;
    if (stopped) g->stopped = TRUE;
    txlm_utf8_out_push(&g->utf8, text, n, out);
    return TXLM_OK;
}

/* The end: what the detokenizer, the stop strings and UTF-8 held back. */
static txlm_status take_rest(gen_run *g, GString *out)
{
    const char *piece;
    size_t len;
    txlm_status st = txlm_detokenizer_flush(g->d, &piece, &len);
    if (!st) st = take_bytes(g, piece, len, out);
    if (!st) st = txlm_stopper_flush(g->stop, &piece, &len);
    if (st) return st;
    txlm_utf8_out_push(&g->utf8, piece, len, out);
    txlm_utf8_out_flush(&g->utf8, out);
    return TXLM_OK;
}

/* txlm_session_generate's progress callback: the token just drawn and fed
 * is tokens[in_chunk]. Its text goes out as a ::token event; non-zero ends
 * the generation (this token is the last: the count is reached, a stop
 * string completed, or the job was cancelled). */
static int on_token(void *user, double fraction)
{
    (void)fraction;
    gen_run *g = user;
    int32_t tok = g->tokens[g->in_chunk++];
    g->made++;
    remember(g, &tok, 1);
    txlm_glib_session_note_memory(TXLM_SESSION(txlm_job_object(g->job)));
    GString *piece = g_string_new(NULL);
    const char *bytes;
    size_t len;
    txlm_status st = txlm_detokenizer_push(g->d, tok, &bytes, &len);
    if (!st) st = take_bytes(g, bytes, len, piece);
    gboolean last = (g->n_tokens >= 0 && g->made == g->n_tokens) || g->stopped;
    if (!last && txlm_job_cancelled(g->job)) last = g->cancelled = TRUE;
    if (!st && last) st = take_rest(g, piece);
    if (st) {
        g->failed = txlm_glib_error_new(st); /* (the engine's message, before its generate call says "cancelled") */
        last = TRUE;
    }
    g->finished = last;
    g_string_append_len(g->text, piece->str, (gssize)piece->len);
    txlm_job_post(g->job, txlm_glib_session_emit_token, g_string_free(piece, FALSE), g_free);
    if (g->n_tokens > 0) txlm_job_progress(g->job, (double)g->made / g->n_tokens);
    return last;
}

/* The prompt's ids (g_free), or the start of a text (a line break) when
 * there is no prompt and nothing in memory, as txlm generate begins. */
static txlm_status prompt_ids(gen_run *g, txlm_model *m, int32_t **ids, size_t *n)
{
    int32_t *own = NULL;
    size_t len = strlen(g->prompt);
    txlm_status st = len ? txlm_tokenize(m, g->prompt, len, &own, n) : (*n = 0, TXLM_OK);
    *ids = st ? NULL : g_memdup2(own, *n * sizeof *own);
    txlm_free(own);
    if (st || *n || txlm_session_memory_len(g->s)) return st;
    txlm_model_params p;
    txlm_model_get_params(m, &p);
    g_free(*ids);
    *ids = g_new(int32_t, 1);
    (*ids)[0] = p.eos_id >= 0 ? p.eos_id : 0;
    *n = 1;
    return TXLM_OK;
}

/* The prompt's last line through the detokenizer, so the continuation's
 * spacing and punctuation join up; the text it gives back is the prompt's
 * own and is skipped. */
static txlm_status continue_prompt(gen_run *g, txlm_model *m, const int32_t *ids, size_t n)
{
    txlm_model_params p;
    txlm_model_get_params(m, &p);
    size_t from = n;
    while (from > 0 && ids[from - 1] != p.eos_id) from--;
    char *text = NULL;
    txlm_status st = txlm_detokenize(m, ids + from, n - from, &text);
    if (st) return st;
    g->skip = strlen(text);
    txlm_free(text);
    for (size_t i = from; i < n; i++) {
        const char *piece;
        size_t len;
        if ((st = txlm_detokenizer_push(g->d, ids[i], &piece, &len))) return st;
        g->skip -= MIN(len, g->skip);
    }
    return TXLM_OK;
}

/* Draws and feeds until on_token says the last token is taken. */
static txlm_status draw(gen_run *g)
{
    if (g->n_tokens == 0) return g->finished = TRUE, take_rest(g, g->text);
    while (!g->finished) {
        size_t want = g->n_tokens < 0 ? CHUNK : (size_t)MIN((gint64)CHUNK, g->n_tokens - g->made);
        /* the engine's penalty window is as long as it is given; txlm
         * generate's grows until it holds repeat-last-n tokens: one token
         * a call until then */
        if (g->n_window < g->cap_window) want = 1;
        txlm_repeat_penalty pen = {g->samp.repeat_penalty, g->window, g->n_window};
        g->in_chunk = 0;
        txlm_status st = txlm_session_generate(g->s, &g->samp.sampling, &pen, want, g->tokens, on_token, g, NULL);
        if (g->failed) return TXLM_ERR_CANCELLED; /* generate_run gives g->failed */
        if (st == TXLM_ERR_CANCELLED && g->finished) st = TXLM_OK; /* on_token ended it */
        if (st) return st;
    }
    return TXLM_OK;
}

/* Everything that can be refused, refused before the prompt is fed: an
 * error, or NULL. */
static GError *prepare(gen_run *g, txlm_model *m)
{
    if (g->n_tokens < -1)
        return g_error_new(TXLM_ERROR, TXLM_ERROR_INVALID_ARGUMENT,
                           "n_tokens: %d; give a count, or -1 for no limit", g->n_tokens);
    if (!isfinite(g->samp.sampling.temperature) || !isfinite(g->samp.repeat_penalty))
        return g_error_new_literal(TXLM_ERROR, TXLM_ERROR_INVALID_ARGUMENT,
                                   "temperature and repeat-penalty must be finite numbers");
    size_t n_stops = g->samp.stops ? g_strv_length(g->samp.stops) : 0;
    txlm_status st = txlm_detokenizer_create(m, &g->d);
    if (!st) st = txlm_stopper_create((const char *const *)g->samp.stops, n_stops, &g->stop);
    if (st) return txlm_glib_error_new(st);
    if (g->samp.repeat_penalty != 1 && g->samp.repeat_last_n) {
        g->cap_window = g->samp.repeat_last_n;
        g->window = g_new(int32_t, g->cap_window);
    }
    return NULL;
}

static void generate_run(TxlmJob *job)
{
    gen_run *g = txlm_job_data(job);
    TxlmSession *session = TXLM_SESSION(txlm_job_object(job));
    txlm_model *m = txlm_glib_session_model_handle(session);
    g->job = job;
    g->s = txlm_glib_session_handle(session);
    g->text = g_string_new(NULL);
    GError *refused = prepare(g, m);
    if (refused) {
        txlm_job_return_error(job, refused);
        return;
    }
    if (txlm_job_cancelled(job)) {
        txlm_glib_job_cancelled(job, "generation");
        return;
    }
    txlm_session_set_seed(g->s, g->seed);
    int32_t *ids;
    size_t n_ids;
    txlm_status st = prompt_ids(g, m, &ids, &n_ids);
    if (!st && n_ids) st = txlm_session_feed_long(g->s, ids, n_ids, txlm_glib_session_progress, job, NULL);
    if (!st) {
        remember(g, ids, n_ids);
        if (*g->prompt) st = continue_prompt(g, m, ids, n_ids);
    }
    g_free(ids);
    if (!st) st = draw(g);
    if (g->failed) {
        txlm_job_return_error(job, g_steal_pointer(&g->failed));
    } else if (st) {
        txlm_glib_job_fail(job, st);
    } else if (g->cancelled) {
        txlm_job_return_error(job, g_error_new(G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                               "generation cancelled after %" G_GINT64_FORMAT " tokens", g->made));
    } else {
        txlm_job_return_pointer(job, g_string_free(g_steal_pointer(&g->text), FALSE), g_free);
    }
}

static gen_run *gen_run_new(TxlmSession *session, const char *prompt, gint n_tokens, guint64 seed)
{
    gen_run *g = g_new0(gen_run, 1);
    g->prompt = g_strdup(prompt ? prompt : "");
    g->n_tokens = n_tokens;
    g->seed = seed;
    txlm_glib_session_sampling(session, &g->samp);
    return g;
}

/**
 * txlm_session_generate_async:
 * @session: a #TxlmSession
 * @prompt: (nullable): the text to continue, fed first (%NULL or empty:
 *   go on from the memory, or start a new text when it is empty)
 * @n_tokens: the tokens to generate, or -1 for no limit (until a stop
 *   string or a cancel; below -1: %TXLM_ERROR_INVALID_ARGUMENT)
 * @seed: the seed of the session's sampler (same seed, same settings,
 *   same memory: same text)
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @callback: (scope async): called on the thread-default main context of
 *   the caller when the generation ends
 * @user_data: (closure): data for @callback
 *
 * Feeds @prompt, then draws and feeds up to @n_tokens tokens with the
 * session's sampling settings, on a worker thread, as `txlm generate -p
 * PROMPT -n N --seed SEED` does: each token's text is emitted as
 * #TxlmSession::token on the caller's main context as it comes, and all
 * of them before @callback, which calls txlm_session_generate_finish().
 *
 * Cancelling @cancellable stops the prompt's feeding after its current
 * segment, or the generation after its current token; the call then
 * fails with %G_IO_ERROR_CANCELLED, and the memory holds the prompt's
 * tokens fed and every token announced by ::token. A call while another
 * runs on the session fails with %G_IO_ERROR_BUSY.
 */
void txlm_session_generate_async(TxlmSession *session, const char *prompt, gint n_tokens, guint64 seed,
                                 GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail(TXLM_IS_SESSION(session));
    txlm_glib_session_start(session, "generate", generate_run, gen_run_new(session, prompt, n_tokens, seed),
                            (GDestroyNotify)gen_run_free, cancellable, txlm_session_generate_async, callback,
                            user_data);
}

/**
 * txlm_session_generate_finish:
 * @session: a #TxlmSession
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError, or %NULL
 *
 * The result of txlm_session_generate_async().
 *
 * Returns: (transfer full): the text generated (the prompt not included;
 *   the ::token texts put together), or %NULL with @error set
 */
char *txlm_session_generate_finish(TxlmSession *session, GAsyncResult *result, GError **error)
{
    return txlm_glib_session_finish(session, result, txlm_session_generate_async, error);
}

/**
 * txlm_session_generate_sync:
 * @session: a #TxlmSession
 * @prompt: (nullable): the text to continue (as txlm_session_generate_async())
 * @n_tokens: the tokens to generate, or -1 for no limit
 * @seed: the seed of the session's sampler
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @error: return location for a #GError, or %NULL
 *
 * txlm_session_generate_async() on the calling thread, for scripts: the
 * #TxlmSession::token signals are emitted on the calling thread as the
 * tokens come.
 *
 * Returns: (transfer full): the text generated, or %NULL with @error set
 */
char *txlm_session_generate_sync(TxlmSession *session, const char *prompt, gint n_tokens, guint64 seed,
                                 GCancellable *cancellable, GError **error)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), NULL);
    gpointer text = NULL;
    if (!txlm_glib_session_run(session, "generate", generate_run, gen_run_new(session, prompt, n_tokens, seed),
                               (GDestroyNotify)gen_run_free, cancellable, &text, error))
        return NULL;
    return text;
}
