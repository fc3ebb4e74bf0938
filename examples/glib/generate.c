/* Loads a model without blocking the main loop (its progress on stderr),
 * generates with a seed, printing each token as it comes, then goes on
 * and cancels after 10 tokens, as a stop button would.
 *
 *   cc generate.c $(pkg-config --cflags --libs txlm-glib-1.0) -o generate
 *   ./generate models/demo.txlm
 */
#include <stdio.h>
#include <txlm-glib.h>

typedef struct {
    GMainLoop *loop;
    TxlmSession *session;
    GCancellable *stop; /* the second generation's stop button */
    int tokens;         /* tokens of the running generation */
    int status;
} App;

static void fail(App *app, GError *error)
{
    fprintf(stderr, "error: %s\n", error->message);
    g_error_free(error);
    app->status = 1;
    g_main_loop_quit(app->loop);
}

static void on_progress(GObject *model, GParamSpec *pspec, gpointer user_data)
{
    fprintf(stderr, "\rloading %3.0f%%", 100 * txlm_model_get_progress(TXLM_MODEL(model)));
}

static void on_token(TxlmSession *session, const char *text, gpointer user_data)
{
    App *app = user_data;
    fputs(text, stdout);
    fflush(stdout);
    if (++app->tokens == 10 && app->stop)
        g_cancellable_cancel(app->stop); /* the engine stops after the token it is making */
}

static void on_second_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
    App *app = user_data;
    GError *error = NULL;
    char *text = txlm_session_generate_finish(TXLM_SESSION(source), result, &error);
    if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        printf("\n[stopped after %d tokens; the memory holds %u tokens]\n", app->tokens,
               txlm_session_get_memory_length(app->session));
        g_error_free(error);
        g_main_loop_quit(app->loop);
    } else if (error) {
        fail(app, error);
    } else {
        g_free(text);
        g_main_loop_quit(app->loop);
    }
}

static void on_first_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
    App *app = user_data;
    GError *error = NULL;
    char *text = txlm_session_generate_finish(TXLM_SESSION(source), result, &error);
    if (!text) {
        fail(app, error);
        return;
    }
    g_free(text); /* the tokens were printed as they came */
    printf("\n---\n");
    /* go on from the memory (no prompt), until stopped */
    app->tokens = 0;
    app->stop = g_cancellable_new();
    txlm_session_generate_async(app->session, NULL, 200, 2, app->stop, on_second_done, app);
}

static void on_loaded(GObject *source, GAsyncResult *result, gpointer user_data)
{
    App *app = user_data;
    GError *error = NULL;
    if (!g_async_initable_init_finish(G_ASYNC_INITABLE(source), result, &error)) {
        fail(app, error);
        return;
    }
    fprintf(stderr, "\n");
    app->session = txlm_model_create_session(TXLM_MODEL(source), &error);
    if (!app->session) {
        fail(app, error);
        return;
    }
    g_signal_connect(app->session, "token", G_CALLBACK(on_token), app);
    txlm_session_generate_async(app->session, "The secret of life is", 40, 1, NULL, on_first_done, app);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s MODEL.txlm\n", argv[0]);
        return 2;
    }
    App app = {.loop = g_main_loop_new(NULL, FALSE)};
    TxlmModel *model = g_object_new(TXLM_TYPE_MODEL, "path", argv[1], NULL);
    g_signal_connect(model, "notify::progress", G_CALLBACK(on_progress), NULL);
    g_async_initable_init_async(G_ASYNC_INITABLE(model), G_PRIORITY_DEFAULT, NULL, on_loaded, &app);
    g_main_loop_run(app.loop);
    g_clear_object(&app.session);
    g_clear_object(&app.stop);
    g_object_unref(model);
    g_main_loop_unref(app.loop);
    return app.status;
}
