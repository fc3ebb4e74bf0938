/* txlm-write: a writing app on txlm-glib. The model continues the text as
 * grey ghost text after the cursor when the writer pauses (Tab accepts
 * it), and can colour each word by its surprisal. */
#include <stdlib.h>
#include <txlm.h>

#include "write-default-model.h"
#include "write-probe.h"
#include "write-window.h"

static WriteOptions options = {.n_tokens = 32, .pause_ms = 600, .temperature = 0.7, .top_k = 40};
static gint64 seed = -1;
static int n_tokens = 32, pause_ms = 600, top_k = 40;
static char *model_path;
static GListModel *devices; /* the device picker's, listed at start */

static const GOptionEntry entries[] = {
    {"model", 'm', 0, G_OPTION_ARG_FILENAME, &model_path, "The model to open (default: the demo model)", "FILE"},
    {"seed", 's', 0, G_OPTION_ARG_INT64, &seed, "Every suggestion's seed (default: one chosen at start)", "N"},
    {"tokens", 'n', 0, G_OPTION_ARG_INT, &n_tokens, "A suggestion's length at most, in tokens (default 32)", "N"},
    {"pause-ms", 0, 0, G_OPTION_ARG_INT, &pause_ms, "The pause after an edit that brings a suggestion (default 600)",
     "MS"},
    {"temperature", 0, 0, G_OPTION_ARG_DOUBLE, &options.temperature, "The suggestions' temperature (default 0.7)", "T"},
    {"top-k", 0, 0, G_OPTION_ARG_INT, &top_k, "Draw among the K most likely tokens (default 40; 0: all)", "K"},
    {"multiline", 0, 0, G_OPTION_ARG_NONE, &options.multiline,
     "Let a suggestion go on past the end of its line (default: it ends there)", NULL},
    {"surprisal", 0, 0, G_OPTION_ARG_NONE, &options.surprisal, "Colour the words by surprisal from the start", NULL},
    {"version", 0, 0, G_OPTION_ARG_NONE, NULL, "Print the versions and where the demo model is, and exit", NULL},
    {NULL},
};

/* GTK draws with OpenGL where it can. On a machine without a GPU that is
 * Mesa's llvmpipe, whose rasterizer threads share the cores with the
 * engine's (lavapipe): while the model generates, the UI thread waits on
 * llvmpipe's starved threads for each frame, hundreds of milliseconds at
 * times (docs/performance.md, "A desktop app's main loop while
 * generating"). GTK's Cairo renderer draws on the UI thread itself, in a
 * millisecond or two for this window. So where txlm finds no GPU (every
 * device the CPU, or none) and the user has chosen no renderer
 * (GSK_RENDERER), the window is drawn with Cairo, and GDK does not start
 * OpenGL at all (GDK_DEBUG=gl-disable, unless GDK_DEBUG is set: no
 * llvmpipe loaded). Both are read when GTK starts, so this runs before. */
static void choose_renderer(GListModel *list)
{
    if (g_getenv("GSK_RENDERER")) return;
    guint n = list ? g_list_model_get_n_items(list) : 0;
    for (guint i = 0; i < n; i++) {
        TxlmDevice *d = g_list_model_get_item(list, i);
        gboolean gpu = txlm_device_get_device_type(d) != TXLM_DEVICE_TYPE_CPU;
        g_object_unref(d);
        if (gpu) return;
    }
    g_setenv("GSK_RENDERER", "cairo", TRUE);
    if (!g_getenv("GDK_DEBUG")) g_setenv("GDK_DEBUG", "gl-disable", TRUE);
}

static int on_local_options(GApplication *app, GVariantDict *dict, gpointer user)
{
    (void)app, (void)user;
    if (g_variant_dict_contains(dict, "version")) {
        char *demo = write_default_model();
        g_print("txlm-write %s (txlm %s, GTK %u.%u.%u); demo model: %s\n", TXLM_WRITE_VERSION, txlm_version(),
                gtk_get_major_version(), gtk_get_minor_version(), gtk_get_micro_version(), demo ? demo : "none");
        g_free(demo);
        return 0;
    }
    if (n_tokens < 1 || pause_ms < 0 || top_k < 0) {
        g_printerr("txlm-write: --tokens must be at least 1, --pause-ms and --top-k not negative\n");
        return 2;
    }
    options.seed = seed >= 0 ? (guint64)seed : g_random_int();
    options.n_tokens = n_tokens;
    options.pause_ms = (guint)pause_ms;
    options.top_k = (guint)top_k;
    options.model_path = model_path ? g_canonicalize_filename(model_path, NULL) : write_default_model();
    /* The devices, once, before GTK starts and before any window exists:
     * how the window is drawn depends on them (choose_renderer). Listing
     * them enumerates Vulkan's devices, a fraction of a second; every call
     * on a model is asynchronous. */
    GError *error = NULL;
    devices = txlm_device_list(&error);
    if (!devices) g_printerr("txlm-write: the devices: %s\n", error->message);
    g_clear_error(&error);
    choose_renderer(devices);
    return -1; /* go on */
}

static void quit(GSimpleAction *action, GVariant *param, gpointer user)
{
    (void)action, (void)param;
    /* each window's close-request stops its calls; the application ends
     * once they have returned (write-calls.h) */
    GList *windows = g_list_copy(gtk_application_get_windows(GTK_APPLICATION(user)));
    for (GList *w = windows; w; w = w->next) gtk_window_close(w->data);
    g_list_free(windows);
}

static void on_startup(GApplication *app, gpointer user)
{
    (void)user;
    static const GActionEntry app_actions[] = {{.name = "quit", .activate = quit}};
    g_action_map_add_action_entries(G_ACTION_MAP(app), app_actions, G_N_ELEMENTS(app_actions), app);
    static const struct {
        const char *action;
        const char *accels[3];
    } accels[] = {
        {"app.quit", {"<Control>q", NULL}},
        {"win.open-model", {"<Control>o", NULL}},
        {"win.save", {"<Control>s", NULL}},
        {"win.stop", {"<Control>period", NULL}},
        {"win.undo", {"<Control>z", NULL}},
        {"win.redo", {"<Control><Shift>z", "<Control>y", NULL}},
    };
    for (guint i = 0; i < G_N_ELEMENTS(accels); i++)
        gtk_application_set_accels_for_action(GTK_APPLICATION(app), accels[i].action, accels[i].accels);
}

static void on_activate(GApplication *app, gpointer user)
{
    (void)user;
    GtkWindow *existing = gtk_application_get_active_window(GTK_APPLICATION(app));
    if (existing) {
        gtk_window_present(existing);
        return;
    }
    WriteWindow *win = write_window_new(GTK_APPLICATION(app), &options);
    if (devices) write_window_set_devices(win, devices);
    if (!options.model_path) g_printerr("txlm-write: no demo model found; open a model with Ctrl+O\n");
    const char *probe = g_getenv("TXLM_WRITE_PROBE");
    if (probe && *probe) write_probe_attach(win, probe);
    gtk_window_present(GTK_WINDOW(win));
}

int main(int argc, char **argv)
{
    /* several windows on several models are several processes */
    GtkApplication *app = gtk_application_new("org.txlm.Write", G_APPLICATION_NON_UNIQUE);
    g_application_add_main_option_entries(G_APPLICATION(app), entries);
    g_application_set_option_context_summary(G_APPLICATION(app),
                                             "A text editor in which a txlm model suggests how to go on.");
    g_signal_connect(app, "handle-local-options", G_CALLBACK(on_local_options), NULL);
    g_signal_connect(app, "startup", G_CALLBACK(on_startup), NULL);
    g_signal_connect(app, "activate", G_CALLBACK(on_activate), NULL);
    int status = g_application_run(G_APPLICATION(app), argc, argv);
    g_object_unref(app);
    g_clear_object(&devices);
    g_free(options.model_path);
    g_free(model_path);
    return status;
}
