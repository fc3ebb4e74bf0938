/* txlm-glib's sessions from C: generation equal to `txlm generate` (the
 * demo model with several settings, a byte model whose text is not always
 * UTF-8, a wt103 word model that holds words back), ::token signals in
 * order on the caller's thread and all before the result, cancelling
 * (memory = prompt + tokens announced), a busy session refusing a second
 * call without disturbing the first, two sessions at once, word surprisals
 * equal to `txlm score --words`, states saved and restored. */
#include <math.h>
#include <string.h>

#include "glib_test_util.h"

void add_session_tests(gboolean generate, gboolean rest);
void end_session_tests(void);

static TxlmModel *demo;

static TxlmModel *load(const char *path)
{
    GError *error = NULL;
    TxlmModel *m = txlm_model_new(path, NULL, &error);
    g_assert_no_error(error);
    return m;
}

static TxlmSession *new_session(TxlmModel *m)
{
    GError *error = NULL;
    TxlmSession *s = txlm_model_create_session(m, &error);
    g_assert_no_error(error);
    return s;
}

static gsize n_tokens_of(TxlmModel *m, const char *text)
{
    gsize n = 0;
    g_free(txlm_model_tokenize(m, text, &n, NULL));
    return n;
}

/* ---- one generation, recorded -------------------------------------------- */

typedef struct {
    GString *signalled;  /* the ::token texts put together */
    guint n_signals;
    gboolean done, late; /* the callback ran; a signal came after it */
    gboolean invalid;    /* a signal's text was not UTF-8 */
    GThread *thread;
    guint cancel_at;     /* cancel when this many signals came (0: never) */
    GCancellable *cancellable;
    char *text;
    GError *error;
    gulong handler;
} gen_rec;

static void on_token(TxlmSession *s, const char *text, gpointer user)
{
    (void)s;
    gen_rec *r = user;
    g_assert_true(g_thread_self() == r->thread);
    r->late |= r->done;
    r->invalid |= !g_utf8_validate(text, -1, NULL);
    g_string_append(r->signalled, text);
    if (++r->n_signals == r->cancel_at) g_cancellable_cancel(r->cancellable);
}

static void on_generated(GObject *source, GAsyncResult *res, gpointer user)
{
    gen_rec *r = user;
    g_assert_true(g_thread_self() == r->thread);
    r->text = txlm_session_generate_finish(TXLM_SESSION(source), res, &r->error);
    r->done = TRUE;
}

static void rec_start(gen_rec *r, TxlmSession *s, const char *prompt, int n, guint64 seed, guint cancel_at)
{
    *r = (gen_rec){.signalled = g_string_new(NULL), .thread = g_thread_self(), .cancel_at = cancel_at,
                   .cancellable = g_cancellable_new()};
    r->handler = g_signal_connect(s, "token", G_CALLBACK(on_token), r);
    txlm_session_generate_async(s, prompt, n, seed, r->cancellable, on_generated, r);
}

static void rec_wait(gen_rec *r, TxlmSession *s)
{
    wait_for(&r->done);
    g_signal_handler_disconnect(s, r->handler);
    g_assert_false(r->late);
    g_assert_false(r->invalid);
}

static void rec_clear(gen_rec *r)
{
    g_string_free(r->signalled, TRUE);
    g_object_unref(r->cancellable);
    g_free(r->text);
    g_clear_error(&r->error);
}

/* A generation on a new session of m equals the command's; one signal a
 * token, their texts put together the result; the memory holds the
 * prompt and every token. make_valid: the command's bytes as UTF-8. */
static void check_generation(TxlmModel *m, const char *path, const char *prompt, int n, guint64 seed,
                             const gen_settings *g, gboolean make_valid)
{
    TxlmSession *s = new_session(m);
    settings_apply(s, g);
    gen_rec r;
    rec_start(&r, s, prompt, n, seed, 0);
    rec_wait(&r, s);
    g_assert_no_error(r.error);
    char *cli = cli_generate(path, prompt, n, seed, g);
    if (make_valid) {
        char *valid = g_utf8_make_valid(cli, -1);
        g_free(cli);
        cli = valid;
    }
    g_assert_cmpstr(r.text, ==, cli);
    g_assert_cmpstr(r.signalled->str, ==, r.text);
    if (n >= 0 && !g->stop) g_assert_cmpuint(r.n_signals, ==, n);
    if (n > 0 && g->stop) g_assert_cmpuint(r.n_signals, <, n); /* it did stop at the string */
    gsize fed = *prompt ? n_tokens_of(m, prompt) : 1; /* no prompt: the start of a text, one <eos> */
    g_assert_cmpuint(txlm_session_get_memory_length(s), ==, MIN(fed + r.n_signals, txlm_model_get_max_memory(m)));
    g_assert_cmpfloat(txlm_session_get_progress(s), ==, 1.0);
    g_assert_false(txlm_session_get_busy(s));
    g_free(cli);
    rec_clear(&r);
    g_object_unref(s);
}

static void test_generate_like_cli(void)
{
    gen_settings plain = DEFAULT_SETTINGS;
    check_generation(demo, tp.demo, "The secret of life is", 20, 1, &plain, FALSE);
    check_generation(demo, tp.demo, "", 15, 4, &plain, FALSE);
    /* every filter, and a penalty window longer than the prompt: it grows with the tokens drawn */
    gen_settings all = {0.7, 0.9, 1.3, 20, 40, NULL};
    check_generation(demo, tp.demo, "Q: Why?\nA: Because", 60, 7, &all, FALSE);
    gen_settings greedy = {0.0, 0.0, 1.1, 0, 8, NULL};
    check_generation(demo, tp.demo, "It was a dark and stormy night", 30, 2, &greedy, FALSE);
    /* no limit: until the stop string */
    gen_settings stop = {1.0, 0.0, 1.0, 0, 64, "."};
    check_generation(demo, tp.demo, "Men are", -1, 3, &stop, FALSE);
}

/* A byte model draws bytes that are not always UTF-8; a wt103 model holds
 * each word back until the next token shows it cannot join it. */
static void test_generate_other_tokenizers(void)
{
    char *vocab = tmp_path("bytes.txt");
    GString *v = g_string_new(NULL);
    for (int b = 0; b < 1000; b++) g_string_append_printf(v, b < 256 ? "%d\n" : "pad%d\n", b);
    g_assert_true(g_file_set_contents(vocab, v->str, (gssize)v->len, NULL));
    g_string_free(v, TRUE);
    const char *byte_args[] = {"--vocab", vocab, "--tokenizer", "char", NULL}, *wt103_args[] = {"--tokenizer", "wt103", NULL};
    char *bytes = pack_golden("adaptive_word", "bytes.txlm", byte_args),
         *words = pack_golden("adaptive_word", "wt103.txlm", wt103_args);
    gen_settings plain = DEFAULT_SETTINGS;
    TxlmModel *m = load(bytes);
    check_generation(m, bytes, "h\xc3\xa9llo", 40, 3, &plain, TRUE);
    g_assert_cmpuint(txlm_model_get_validation_messages(m), ==, 0);
    g_object_unref(m);
    m = load(words);
    check_generation(m, words, "w5 w9 w12", 12, 3, &plain, FALSE);
    gen_settings stop = {1.0, 0.0, 1.0, 0, 64, "w1"};
    check_generation(m, words, "w5 w9 w12", 40, 5, &stop, FALSE);
    g_object_unref(m);
    g_free(vocab);
    g_free(bytes);
    g_free(words);
}

/* The calling thread gets the signals of a synchronous generation. */
static void test_generate_sync(void)
{
    TxlmSession *s = new_session(demo);
    gen_rec r = {.signalled = g_string_new(NULL), .thread = g_thread_self(), .cancellable = g_cancellable_new()};
    gulong h = g_signal_connect(s, "token", G_CALLBACK(on_token), &r);
    GError *error = NULL;
    char *text = txlm_session_generate_sync(s, "The secret of life is", 20, 1, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(r.n_signals, ==, 20);
    g_assert_cmpstr(r.signalled->str, ==, text);
    gen_settings plain = DEFAULT_SETTINGS;
    char *cli = cli_generate(tp.demo, "The secret of life is", 20, 1, &plain);
    g_assert_cmpstr(text, ==, cli);
    g_signal_handler_disconnect(s, h);
    g_free(cli);
    g_free(text);
    rec_clear(&r);
    g_object_unref(s);
}

/* Cancelled from the 5th ::token handler: G_IO_ERROR_CANCELLED, a few more
 * tokens at most (the worker is ahead of the main context), the memory the
 * prompt and exactly the tokens announced, and their text what the command
 * makes of as many tokens. */
static void test_generate_cancel(void)
{
    TxlmSession *s = new_session(demo);
    const char *prompt = "The secret of life is";
    gen_rec r;
    rec_start(&r, s, prompt, 100, 11, 5);
    rec_wait(&r, s);
    g_assert_error(r.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    g_assert_null(r.text);
    g_assert_cmpuint(r.n_signals, >=, 5);
    g_assert_cmpuint(r.n_signals, <, 100);
    g_assert_cmpuint(txlm_session_get_memory_length(s), ==, n_tokens_of(demo, prompt) + r.n_signals);
    gen_settings plain = DEFAULT_SETTINGS;
    char *cli = cli_generate(tp.demo, prompt, (int)r.n_signals, 11, &plain);
    g_assert_cmpstr(r.signalled->str, ==, cli);
    g_free(cli);
    rec_clear(&r);
    /* cancelled before it starts: nothing fed */
    GCancellable *c = g_cancellable_new();
    g_cancellable_cancel(c);
    GError *error = NULL;
    guint before = txlm_session_get_memory_length(s);
    g_assert_null(txlm_session_generate_sync(s, "more", 5, 1, c, &error));
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    g_assert_cmpuint(txlm_session_get_memory_length(s), ==, before);
    g_clear_error(&error);
    g_object_unref(c);
    g_object_unref(s);
}

/* The order holds by construction, not by the order the main context
 * runs its sources in: the first ::token handler waits until the worker
 * has made every token, then runs the main context itself (as a handler
 * that opens a dialog would), where the worker's completion is pending;
 * the other tokens still come before the callback. */
typedef struct {
    gen_rec *r;
    guint want_memory;
} nested;

static void on_first_token_nest(TxlmSession *s, const char *text, gpointer user)
{
    (void)text;
    nested *n = user;
    if (n->r->n_signals != 1) return; /* (on_token, connected first, has counted this one) */
    for (int i = 0; i < 10000 && txlm_session_get_memory_length(s) < n->want_memory; i++) g_usleep(1000);
    g_usleep(50000); /* the worker's completion queued behind its last token */
    while (g_main_context_iteration(NULL, FALSE)) {
    }
}

static void test_generate_order(void)
{
    TxlmSession *s = new_session(demo);
    const char *prompt = "The secret of life is";
    gen_rec r;
    nested n = {&r, (guint)n_tokens_of(demo, prompt) + 10};
    rec_start(&r, s, prompt, 10, 1, 0);
    gulong h = g_signal_connect(s, "token", G_CALLBACK(on_first_token_nest), &n);
    rec_wait(&r, s); /* (no signal after the callback) */
    g_signal_handler_disconnect(s, h);
    g_assert_no_error(r.error);
    g_assert_cmpuint(r.n_signals, ==, 10);
    g_assert_cmpstr(r.signalled->str, ==, r.text);
    rec_clear(&r);
    g_object_unref(s);
}

/* Refused before anything is fed: an empty stop string, n_tokens below -1. */
static void test_generate_refused(void)
{
    TxlmSession *s = new_session(demo);
    const char *stops[] = {"ok", "", NULL};
    txlm_session_set_stop_strings(s, stops);
    GError *error = NULL;
    g_assert_null(txlm_session_generate_sync(s, "The", 5, 1, NULL, &error));
    g_assert_error(error, TXLM_ERROR, TXLM_ERROR_INVALID_ARGUMENT);
    g_clear_error(&error);
    txlm_session_set_stop_strings(s, NULL);
    g_assert_null(txlm_session_generate_sync(s, "The", -2, 1, NULL, &error));
    g_assert_error(error, TXLM_ERROR, TXLM_ERROR_INVALID_ARGUMENT);
    g_clear_error(&error);
    g_assert_cmpuint(txlm_session_get_memory_length(s), ==, 0);
    g_object_unref(s);
}

/* ---- one call at a time; two sessions at once ------------------------------- */

static void on_busy_refused(GObject *source, GAsyncResult *res, gpointer user)
{
    gen_rec *r = user;
    r->text = txlm_session_generate_finish(TXLM_SESSION(source), res, &r->error);
    r->done = TRUE;
}

static void test_busy(void)
{
    TxlmSession *s = new_session(demo);
    gen_rec first, second = {.thread = g_thread_self()};
    rec_start(&first, s, "The secret of life is", 30, 9, 0);
    g_assert_true(txlm_session_get_busy(s));
    /* a second generation, a feed, a clear: each refused, the first going on */
    txlm_session_generate_async(s, "Another", 10, 1, NULL, on_busy_refused, &second);
    GError *error = NULL;
    g_assert_false(txlm_session_feed_sync(s, "text", NULL, &error));
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_BUSY);
    g_assert_nonnull(strstr(error->message, "busy with generate"));
    g_clear_error(&error);
    g_assert_false(txlm_session_clear_memory(s, &error));
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_BUSY);
    g_clear_error(&error);
    wait_for(&second.done);
    g_assert_error(second.error, G_IO_ERROR, G_IO_ERROR_BUSY);
    rec_wait(&first, s);
    g_assert_no_error(first.error);
    g_assert_cmpuint(first.n_signals, ==, 30);
    gen_settings plain = DEFAULT_SETTINGS;
    char *cli = cli_generate(tp.demo, "The secret of life is", 30, 9, &plain);
    g_assert_cmpstr(first.text, ==, cli);
    g_assert_false(txlm_session_get_busy(s));
    g_assert_true(txlm_session_clear_memory(s, &error));
    g_assert_cmpuint(txlm_session_get_memory_length(s), ==, 0);
    g_free(cli);
    rec_clear(&first);
    g_clear_error(&second.error);
    g_object_unref(s);
}

static void test_two_sessions(void)
{
    TxlmSession *a = new_session(demo), *b = new_session(demo);
    gen_rec ra, rb;
    rec_start(&ra, a, "The secret of life is", 25, 3, 0);
    rec_start(&rb, b, "Never trust a computer", 25, 4, 0);
    g_assert_true(txlm_session_get_busy(a) && txlm_session_get_busy(b));
    rec_wait(&ra, a);
    rec_wait(&rb, b);
    g_assert_no_error(ra.error);
    g_assert_no_error(rb.error);
    gen_settings plain = DEFAULT_SETTINGS;
    char *ca = cli_generate(tp.demo, "The secret of life is", 25, 3, &plain),
         *cb = cli_generate(tp.demo, "Never trust a computer", 25, 4, &plain);
    g_assert_cmpstr(ra.text, ==, ca);
    g_assert_cmpstr(rb.text, ==, cb);
    g_free(ca);
    g_free(cb);
    rec_clear(&ra);
    rec_clear(&rb);
    g_object_unref(a);
    g_object_unref(b);
}

/* ---- feeding and scoring ----------------------------------------------------- */

typedef struct {
    gboolean done;
    GPtrArray *words;
    gboolean ok;
    GBytes *state;
    GError *error;
    GCancellable *cancel_on_progress;
} call_rec;

static void on_scored(GObject *source, GAsyncResult *res, gpointer user)
{
    call_rec *r = user;
    r->words = txlm_session_score_finish(TXLM_SESSION(source), res, &r->error);
    r->done = TRUE;
}

/* The surprisal as `txlm score` prints it. */
static char *surprisal_text(double s) { return isnan(s) ? g_strdup("NA") : g_strdup_printf("%.6f", s); }

static void test_score_like_cli(void)
{
    char *excerpt = NULL, *models = g_path_get_dirname(tp.demo);
    char *heldout = g_build_filename(models, "demo_heldout.txt", NULL);
    g_assert_true(g_file_get_contents(heldout, &excerpt, NULL, NULL));
    /* two fortunes, a tab, characters the model has not seen (several bytes each) */
    char *cut = strstr(excerpt, "An evil mind");
    g_assert_nonnull(cut);
    *cut = 0;
    char *text = g_strconcat(excerpt, "Caf\xc3\xa9 na\xc3\xafve\tr\xc3\xa9sum\xc3\xa9 \xe2\x82\xac" "5.\n", NULL);
    char *file = tmp_path("score.txt");
    g_assert_true(g_file_set_contents(file, text, -1, NULL));
    const char *args[] = {"score", "-m", tp.demo, file, "--words", NULL};
    char *tsv = cli_run(args);
    char **lines = g_strsplit(tsv, "\n", -1);
    TxlmSession *s = new_session(demo);
    call_rec r = {0};
    txlm_session_score_async(s, text, NULL, on_scored, &r);
    wait_for(&r.done);
    g_assert_no_error(r.error);
    g_assert_cmpuint(r.words->len + 2, ==, g_strv_length(lines)); /* a header, a last empty piece */
    for (guint w = 0; w < r.words->len; w++) {
        TxlmWordScore *ws = g_ptr_array_index(r.words, w);
        char **f = g_strsplit(lines[w + 1], "\t", -1);
        char *sur = surprisal_text(txlm_word_score_get_surprisal(ws)), *ntok = g_strdup_printf("%u", txlm_word_score_get_n_tokens(ws));
        g_assert_cmpstr(txlm_word_score_get_text(ws), ==, f[2]);
        g_assert_cmpstr(sur, ==, f[3]);
        g_assert_cmpstr(ntok, ==, f[4]);
        /* the word where it is, in bytes and in characters */
        gsize b = txlm_word_score_get_begin(ws), e = txlm_word_score_get_end(ws);
        g_assert_cmpmem(text + b, e - b, f[2], strlen(f[2]));
        char *sub = g_utf8_substring(text, txlm_word_score_get_char_begin(ws), txlm_word_score_get_char_end(ws));
        g_assert_cmpstr(sub, ==, f[2]);
        g_free(sub);
        g_free(sur);
        g_free(ntok);
        g_strfreev(f);
    }
    g_assert_true(isnan(txlm_word_score_get_surprisal(g_ptr_array_index(r.words, 0))));
    gsize n = n_tokens_of(demo, text);
    g_assert_cmpuint(txlm_session_get_memory_length(s), ==, MIN(n, 128));
    g_ptr_array_unref(r.words);
    /* scored after a feed: the first word has a context now, and the rest are the same as scoring all of it */
    TxlmSession *t = new_session(demo);
    GError *error = NULL;
    g_assert_true(txlm_session_feed_sync(t, "Do not take life ", NULL, &error));
    GPtrArray *words = txlm_session_score_sync(t, "too seriously", NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(words->len, ==, 2);
    /* the text is in the memory, its last token too */
    g_assert_cmpuint(txlm_session_get_memory_length(t), ==, n_tokens_of(demo, "Do not take life too seriously"));
    g_assert_false(isnan(txlm_word_score_get_surprisal(g_ptr_array_index(words, 0))));
    g_assert_cmpfloat(txlm_word_score_get_surprisal(g_ptr_array_index(words, 0)), >, 0);
    g_ptr_array_unref(words);
    /* not UTF-8: refused */
    g_assert_null(txlm_session_score_sync(t, "caf\xe9", NULL, &error));
    g_assert_error(error, TXLM_ERROR, TXLM_ERROR_INVALID_ARGUMENT);
    g_clear_error(&error);
    g_object_unref(t);
    g_object_unref(s);
    g_strfreev(lines);
    g_free(tsv);
    g_free(file);
    g_free(text);
    g_free(excerpt);
    g_free(heldout);
    g_free(models);
}

static void cancel_on_progress(GObject *object, GParamSpec *pspec, gpointer user)
{
    (void)object, (void)pspec;
    call_rec *r = user;
    if (txlm_session_get_progress(TXLM_SESSION(object)) > 0) g_cancellable_cancel(r->cancel_on_progress);
}

static void on_fed(GObject *source, GAsyncResult *res, gpointer user)
{
    call_rec *r = user;
    r->ok = txlm_session_feed_finish(TXLM_SESSION(source), res, &r->error);
    r->done = TRUE;
}

/* A long feed cancelled at its first progress: G_IO_ERROR_CANCELLED before the end. */
static void test_feed_cancel(void)
{
    GString *longer = g_string_new(NULL);
    for (int i = 0; i < 24; i++) g_string_append(longer, "Any clod can have the facts, but having opinions is an art.\n");
    TxlmSession *s = new_session(demo);
    call_rec r = {.cancel_on_progress = g_cancellable_new()};
    gulong h = g_signal_connect(s, "notify::progress", G_CALLBACK(cancel_on_progress), &r);
    txlm_session_feed_async(s, longer->str, r.cancel_on_progress, on_fed, &r);
    wait_for(&r.done);
    g_assert_false(r.ok);
    g_assert_error(r.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    g_assert_cmpfloat(txlm_session_get_progress(s), <, 1.0);
    g_signal_handler_disconnect(s, h);
    g_clear_error(&r.error);
    /* the same text fed to its end */
    r = (call_rec){0};
    txlm_session_feed_async(s, longer->str, NULL, on_fed, &r);
    wait_for(&r.done);
    g_assert_no_error(r.error);
    g_assert_cmpfloat(txlm_session_get_progress(s), ==, 1.0);
    g_assert_cmpuint(txlm_session_get_memory_length(s), ==, 128);
    g_object_unref(s);
    g_string_free(longer, TRUE);
}

/* ---- saving and restoring --------------------------------------------------- */

static void on_saved(GObject *source, GAsyncResult *res, gpointer user)
{
    call_rec *r = user;
    r->state = txlm_session_save_finish(TXLM_SESSION(source), res, &r->error);
    r->done = TRUE;
}

static void on_restored(GObject *source, GAsyncResult *res, gpointer user)
{
    call_rec *r = user;
    r->ok = txlm_session_restore_finish(TXLM_SESSION(source), res, &r->error);
    r->done = TRUE;
}

static void on_saved_file(GObject *source, GAsyncResult *res, gpointer user)
{
    call_rec *r = user;
    r->ok = txlm_session_save_to_file_finish(TXLM_SESSION(source), res, &r->error);
    r->done = TRUE;
}

static void on_restored_file(GObject *source, GAsyncResult *res, gpointer user)
{
    call_rec *r = user;
    r->ok = txlm_session_restore_from_file_finish(TXLM_SESSION(source), res, &r->error);
    r->done = TRUE;
}

static char *go_on(TxlmSession *s)
{
    gen_rec r;
    rec_start(&r, s, NULL, 20, 5, 0);
    rec_wait(&r, s);
    g_assert_no_error(r.error);
    char *text = g_steal_pointer(&r.text);
    rec_clear(&r);
    return text;
}

static void test_state(void)
{
    TxlmSession *s = new_session(demo);
    GError *error = NULL;
    g_assert_true(txlm_session_feed_sync(s, "The cat sat on the", NULL, &error));
    call_rec saved = {0};
    txlm_session_save_async(s, NULL, on_saved, &saved);
    wait_for(&saved.done);
    g_assert_no_error(saved.error);
    char *file = tmp_path("session.state");
    call_rec tofile = {0};
    txlm_session_save_to_file_async(s, file, NULL, on_saved_file, &tofile);
    wait_for(&tofile.done);
    g_assert_no_error(tofile.error);
    char *want = go_on(s);
    guint after = txlm_session_get_memory_length(s);
    /* from the bytes, into this session and into another */
    call_rec back = {0};
    txlm_session_restore_async(s, saved.state, NULL, on_restored, &back);
    wait_for(&back.done);
    g_assert_no_error(back.error);
    g_assert_cmpuint(txlm_session_get_memory_length(s), ==, after - 20);
    char *again = go_on(s);
    g_assert_cmpstr(again, ==, want);
    g_free(again);
    TxlmSession *t = new_session(demo);
    g_assert_true(txlm_session_restore_sync(t, saved.state, NULL, &error));
    again = go_on(t);
    g_assert_cmpstr(again, ==, want);
    g_free(again);
    /* from the file */
    call_rec fromfile = {0};
    txlm_session_restore_from_file_async(t, file, NULL, on_restored_file, &fromfile);
    wait_for(&fromfile.done);
    g_assert_no_error(fromfile.error);
    again = go_on(t);
    g_assert_cmpstr(again, ==, want);
    g_free(again);
    /* a damaged state, a missing file: refused, the session as it was */
    gsize size = 0;
    char *bad = g_memdup2(g_bytes_get_data(saved.state, &size), g_bytes_get_size(saved.state));
    bad[size / 2] ^= 0x55;
    GBytes *damaged = g_bytes_new_take(bad, size);
    guint before = txlm_session_get_memory_length(t);
    g_assert_false(txlm_session_restore_sync(t, damaged, NULL, &error));
    g_assert_error(error, TXLM_ERROR, TXLM_ERROR_CHECKSUM);
    g_clear_error(&error);
    char *missing = tmp_path("missing.state");
    g_assert_false(txlm_session_restore_from_file_sync(t, missing, NULL, &error));
    g_assert_error(error, TXLM_ERROR, TXLM_ERROR_IO);
    g_clear_error(&error);
    g_assert_cmpuint(txlm_session_get_memory_length(t), ==, before);
    GBytes *sync_state = txlm_session_save_sync(t, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(g_bytes_get_size(sync_state), >, 0);
    g_bytes_unref(sync_state);
    g_bytes_unref(damaged);
    g_bytes_unref(saved.state);
    g_free(missing);
    g_free(want);
    g_free(file);
    g_object_unref(t);
    g_object_unref(s);
}

static void test_validation_clean(void) { g_assert_cmpuint(txlm_model_get_validation_messages(demo), ==, 0); }

void add_session_tests(gboolean generate, gboolean rest)
{
    demo = load(tp.demo);
    if (generate) {
        g_test_add_func("/generate/like-cli", test_generate_like_cli);
        g_test_add_func("/generate/other-tokenizers", test_generate_other_tokenizers);
        g_test_add_func("/generate/sync", test_generate_sync);
        g_test_add_func("/generate/order", test_generate_order);
        g_test_add_func("/generate/cancel", test_generate_cancel);
        g_test_add_func("/generate/refused", test_generate_refused);
    }
    if (rest) {
        g_test_add_func("/session/busy", test_busy);
        g_test_add_func("/session/two-at-once", test_two_sessions);
        g_test_add_func("/session/score-like-cli", test_score_like_cli);
        g_test_add_func("/session/feed-cancel", test_feed_cancel);
        g_test_add_func("/session/state", test_state);
    }
    g_test_add_func("/session/validation-clean", test_validation_clean);
}

/* The shared model freed (its Vulkan device with it), as a program ends. */
void end_session_tests(void) { g_clear_object(&demo); }
