/* Feeding a text, and scoring one word by word: the surprisal of each of
 * its words, as `txlm score --words` computes it (tools/txlm/cmd_score.c):
 * the tokens' log-probabilities from segments of the session's length,
 * summed onto the text's own words. */
#include <math.h>
#include <string.h>

#include "txlm-session-private.h"

typedef struct {
    char *text;
} text_job;

static void text_job_free(text_job *t)
{
    g_free(t->text);
    g_free(t);
}

static text_job *text_job_new(const char *text)
{
    text_job *t = g_new0(text_job, 1);
    t->text = g_strdup(text);
    return t;
}

/* ---- feeding ---------------------------------------------------------------- */

static void feed_run(TxlmJob *job)
{
    text_job *t = txlm_job_data(job);
    txlm_session *s = txlm_glib_session_handle(TXLM_SESSION(txlm_job_object(job)));
    if (txlm_job_cancelled(job)) {
        txlm_glib_job_cancelled(job, "feeding the text");
        return;
    }
    txlm_status st = txlm_session_feed_text(s, t->text, strlen(t->text), txlm_glib_session_progress, job, NULL);
    if (st) txlm_glib_job_fail(job, st);
    else txlm_job_return_boolean(job);
}

/**
 * txlm_session_feed_async:
 * @session: a #TxlmSession
 * @text: the text to feed (tokenized with the model's tokenizer)
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @callback: (scope async): called on the thread-default main context of
 *   the caller when the text is in
 * @user_data: (closure): data for @callback
 *
 * Feeds @text into the session's memory on a worker thread, in segments
 * of the model's `tgt_len` tokens, computing no log-probabilities (a
 * context to generate from, a document to go on with). Cancelling stops
 * after the segment being fed: the call fails with %G_IO_ERROR_CANCELLED
 * and the memory holds the segments fed. #TxlmSession:progress follows
 * the segments.
 */
void txlm_session_feed_async(TxlmSession *session, const char *text, GCancellable *cancellable,
                             GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail(TXLM_IS_SESSION(session));
    g_return_if_fail(text != NULL);
    txlm_glib_session_start(session, "feed", feed_run, text_job_new(text), (GDestroyNotify)text_job_free, cancellable,
                            txlm_session_feed_async, callback, user_data);
}

/**
 * txlm_session_feed_finish:
 * @session: a #TxlmSession
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError, or %NULL
 *
 * The result of txlm_session_feed_async().
 *
 * Returns: %TRUE once the whole text is in, or %FALSE with @error set
 */
gboolean txlm_session_feed_finish(TxlmSession *session, GAsyncResult *result, GError **error)
{
    return txlm_glib_session_finish(session, result, txlm_session_feed_async, error) != NULL;
}

/**
 * txlm_session_feed_sync:
 * @session: a #TxlmSession
 * @text: the text to feed
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @error: return location for a #GError, or %NULL
 *
 * txlm_session_feed_async() on the calling thread.
 *
 * Returns: %TRUE once the whole text is in, or %FALSE with @error set
 */
gboolean txlm_session_feed_sync(TxlmSession *session, const char *text, GCancellable *cancellable, GError **error)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), FALSE);
    g_return_val_if_fail(text != NULL, FALSE);
    return txlm_glib_session_run(session, "feed", feed_run, text_job_new(text), (GDestroyNotify)text_job_free,
                                 cancellable, NULL, error);
}

/* ---- scoring ---------------------------------------------------------------- */

/* Natural log-probabilities of each token of t given everything before it
 * (lp[0]: from the memory, NAN when it is empty); every token is fed. */
static txlm_status token_logprobs(TxlmJob *job, txlm_session *s, txlm_model *m, const txlm_token_spans *t, double *lp)
{
    size_t n = t->n;
    txlm_status st = TXLM_OK;
    lp[0] = NAN;
    if (txlm_session_memory_len(s)) {
        float *row = g_new(float, txlm_vocab_size(m));
        st = txlm_session_next_logprobs(s, row);
        if (!st) lp[0] = row[t->ids[0]];
        g_free(row);
    }
    if (!st && n > 1) {
        /* positions 1..n-1: tokens 0..n-2 fed, each scoring the next */
        float *next = g_new(float, n - 1);
        st = txlm_session_score_long(s, t->ids, t->ids + 1, n - 1, next, txlm_glib_session_progress, job, NULL);
        for (size_t k = 1; !st && k < n; k++) lp[k] = next[k - 1];
        g_free(next);
    }
    /* the last token in too: the memory then holds the whole text */
    if (!st) st = txlm_session_feed_rows(s, &t->ids[n - 1], 1, 1, NULL);
    return st;
}

/* The words of text with their tokens' surprisals summed, in bits. */
static GPtrArray *words_of(const char *text, const txlm_token_spans *t, const double *lp)
{
    size_t nw = t->n_words;
    double *sum = g_new0(double, nw + 1);
    guint *count = g_new0(guint, nw + 1);
    for (size_t k = 0; k < t->n; k++)
        if (t->word[k] != TXLM_NO_WORD) sum[t->word[k]] += lp[k], count[t->word[k]]++;
    GPtrArray *words = g_ptr_array_new_full((guint)nw, (GDestroyNotify)txlm_word_score_unref);
    gsize at = 0; /* characters counted up to byte `at` */
    glong chars = 0;
    for (size_t w = 0; w < nw; w++) {
        txlm_span sp = t->words[w];
        glong cb = chars + g_utf8_strlen(text + at, (gssize)(sp.begin - at));
        glong ce = cb + g_utf8_strlen(text + sp.begin, (gssize)(sp.end - sp.begin));
        at = sp.end, chars = ce;
        g_ptr_array_add(words, txlm_glib_word_score_new(text, sp.begin, sp.end, cb, ce, -sum[w] / log(2.0), count[w]));
    }
    g_free(sum);
    g_free(count);
    return words;
}

static void score_run(TxlmJob *job)
{
    text_job *tj = txlm_job_data(job);
    TxlmSession *session = TXLM_SESSION(txlm_job_object(job));
    txlm_session *s = txlm_glib_session_handle(session);
    txlm_model *m = txlm_glib_session_model_handle(session);
    size_t len = strlen(tj->text);
    if (!g_utf8_validate_len(tj->text, len, NULL)) {
        txlm_job_return_error(job, g_error_new_literal(TXLM_ERROR, TXLM_ERROR_INVALID_ARGUMENT,
                                                       "the text to score is not valid UTF-8"));
        return;
    }
    if (txlm_job_cancelled(job)) {
        txlm_glib_job_cancelled(job, "scoring the text");
        return;
    }
    txlm_token_spans t;
    txlm_status st = txlm_tokenize_spans(m, tj->text, len, &t);
    if (st) {
        txlm_glib_job_fail(job, st);
        return;
    }
    double *lp = g_new(double, t.n + 1);
    if (t.n) st = token_logprobs(job, s, m, &t, lp);
    if (st) txlm_glib_job_fail(job, st);
    else txlm_job_return_pointer(job, words_of(tj->text, &t, lp), (GDestroyNotify)g_ptr_array_unref);
    g_free(lp);
    txlm_token_spans_free(&t);
}

/**
 * txlm_session_score_async:
 * @session: a #TxlmSession
 * @text: the text to score (UTF-8)
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @callback: (scope async): called on the thread-default main context of
 *   the caller when the text is scored
 * @user_data: (closure): data for @callback
 *
 * Scores @text as the continuation of the session's memory, on a worker
 * thread: the surprisal of each of its words (#TxlmWordScore), what a
 * surprisal colouring shows. The text is fed: the memory then holds it,
 * as after txlm_session_feed_async(). A session with an empty memory
 * gives the numbers `txlm score --words` prints for the text (its first
 * word has no context: NaN). Cancelling stops after the segment being
 * scored (%G_IO_ERROR_CANCELLED; the memory holds the tokens scored).
 * #TxlmSession:progress follows the segments.
 */
void txlm_session_score_async(TxlmSession *session, const char *text, GCancellable *cancellable,
                              GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail(TXLM_IS_SESSION(session));
    g_return_if_fail(text != NULL);
    txlm_glib_session_start(session, "score", score_run, text_job_new(text), (GDestroyNotify)text_job_free,
                            cancellable, txlm_session_score_async, callback, user_data);
}

/**
 * txlm_session_score_finish:
 * @session: a #TxlmSession
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError, or %NULL
 *
 * The result of txlm_session_score_async().
 *
 * Returns: (transfer container) (element-type TxlmWordScore): the text's
 *   words in order, or %NULL with @error set (%TXLM_ERROR_INVALID_ARGUMENT
 *   for a text that is not UTF-8)
 */
GPtrArray *txlm_session_score_finish(TxlmSession *session, GAsyncResult *result, GError **error)
{
    return txlm_glib_session_finish(session, result, txlm_session_score_async, error);
}

/**
 * txlm_session_score_sync:
 * @session: a #TxlmSession
 * @text: the text to score (UTF-8)
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @error: return location for a #GError, or %NULL
 *
 * txlm_session_score_async() on the calling thread.
 *
 * Returns: (transfer container) (element-type TxlmWordScore): the text's
 *   words in order, or %NULL with @error set
 */
GPtrArray *txlm_session_score_sync(TxlmSession *session, const char *text, GCancellable *cancellable,
                                   GError **error)
{
    g_return_val_if_fail(TXLM_IS_SESSION(session), NULL);
    g_return_val_if_fail(text != NULL, NULL);
    gpointer words = NULL;
    if (!txlm_glib_session_run(session, "score", score_run, text_job_new(text), (GDestroyNotify)text_job_free,
                               cancellable, &words, error))
        return NULL;
    return words;
}
