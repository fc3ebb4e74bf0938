/* The window: its widgets, its actions, and the model's life in it.
 *
 * The model is loaded through GAsyncInitable (its progress notified on
 * this thread), the device list is the one main.c read at start, and
 * the suggestions and colours run on two sessions of the model, one each,
 * so that scoring never waits for a suggestion. Closing the window
 * cancels everything; each call holds the application until it returns
 * (g_application_hold), so no worker thread is still inside the engine
 * when the process ends. */
#include <string.h>

#include "write-window.h"

#include "write-calls.h"
#include "write-history.h"

struct _WriteWindow {
    GtkApplicationWindow parent;
    WriteOptions opts;

    GtkWidget *view, *progress, *status, *legend, *devices_drop, *stop_button, *surprisal_toggle;
    GtkTextBuffer *buffer;
    WriteGhost *ghost;
    WriteHistory *history;
    WriteSurprisal *surprisal;

    TxlmModel *model;         /* loaded, in use */
    TxlmModel *loading;       /* being loaded (replaces model when done) */
    GCancellable *load_cancel;
    TxlmSession *gen_session, *score_session;
    gint64 session_create_us;
    GListModel *devices;
    gboolean picking_device;  /* the drop-down's selection set by the window, not the writer */

    GFile *file;              /* where the document is saved */
    gboolean dirty;
    gboolean disposed;        /* closed: callbacks still to come touch no widget */
    char *message;
};

G_DEFINE_FINAL_TYPE(WriteWindow, write_window, GTK_TYPE_APPLICATION_WINDOW)

enum { SIG_STATE_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void state_changed(WriteWindow *win) { g_signal_emit(win, signals[SIG_STATE_CHANGED], 0); }

static void set_message(WriteWindow *win, const char *message)
{
    g_free(win->message);
    win->message = g_strdup(message);
    gtk_label_set_text(GTK_LABEL(win->status), message);
    state_changed(win);
}

static void update_title(WriteWindow *win)
{
    char *name = win->file ? g_file_get_basename(win->file) : g_strdup("Untitled");
    char *title = g_strdup_printf("%s%s \xe2\x80\x94 txlm-write", win->dirty ? "*" : "", name);
    gtk_window_set_title(GTK_WINDOW(win), title);
    g_free(title);
    g_free(name);
}

/* What the stop button can stop: a suggestion being made, a scoring, a load. */
static void update_stop(WriteWindow *win)
{
    gboolean running = write_ghost_get_running(win->ghost) || write_surprisal_get_running(win->surprisal) ||
                       win->loading;
    gtk_widget_set_sensitive(win->stop_button, running);
}

static void stop_all(WriteWindow *win)
{
    write_ghost_stop(win->ghost);
    write_surprisal_stop(win->surprisal);
    if (win->load_cancel) g_cancellable_cancel(win->load_cancel);
}

/* ---- the model ------------------------------------------------------------ */

static void select_device(WriteWindow *win, TxlmDevice *device)
{
    if (!win->devices || !device) return;
    guint index = txlm_device_get_index(device);
    if (index >= g_list_model_get_n_items(win->devices)) return;
    win->picking_device = TRUE;
    gtk_drop_down_set_selected(GTK_DROP_DOWN(win->devices_drop), index);
    win->picking_device = FALSE;
}

static void clear_sessions(WriteWindow *win)
{
    write_ghost_set_session(win->ghost, NULL);
    write_surprisal_set_session(win->surprisal, NULL);
    g_clear_object(&win->gen_session);
    g_clear_object(&win->score_session);
}

/* The loaded model in use: its two sessions (creating one is quick: no
 * device work beyond its buffers' allocation), the suggestions' settings. */
static void use_model(WriteWindow *win, TxlmModel *model)
{
    clear_sessions(win);
    g_set_object(&win->model, model);
    GError *error = NULL;
    gint64 t0 = g_get_monotonic_time();
    win->gen_session = txlm_model_create_session(model, &error);
    if (win->gen_session) win->score_session = txlm_model_create_session(model, &error);
    win->session_create_us = g_get_monotonic_time() - t0;
    if (!win->score_session) {
        char *text = g_strdup_printf("The model's sessions: %s", error->message);
        set_message(win, text);
        g_free(text);
        g_clear_error(&error);
        g_clear_object(&win->gen_session);
        return;
    }
    txlm_session_set_temperature(win->gen_session, win->opts.temperature);
    txlm_session_set_top_k(win->gen_session, win->opts.top_k);
    const char *const stops[] = {"\n", NULL}; /* a suggestion ends with its line */
    if (!win->opts.multiline) txlm_session_set_stop_strings(win->gen_session, stops);
    write_ghost_set_session(win->ghost, win->gen_session);
    write_surprisal_set_session(win->surprisal, win->score_session);
    select_device(win, txlm_model_get_device(model));
    char *name = g_path_get_basename(txlm_model_get_path(model));
    char *text = g_strdup_printf("%s on %s", name, txlm_device_get_name(txlm_model_get_device(model)));
    set_message(win, text);
    g_free(text);
    g_free(name);
}

static void on_load_progress(GObject *model, GParamSpec *pspec, gpointer user)
{
    (void)pspec;
    WriteWindow *win = user;
    if ((TxlmModel *)model != win->loading) return;
    gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(win->progress), txlm_model_get_progress(TXLM_MODEL(model)));
}

static void on_loaded(GObject *source, GAsyncResult *result, gpointer user)
{
    WriteWindow *win = user;
    TxlmModel *model = TXLM_MODEL(source);
    GError *error = NULL;
    gboolean ok = g_async_initable_init_finish(G_ASYNC_INITABLE(source), result, &error);
    g_signal_handlers_disconnect_by_func(model, on_load_progress, win);
    if (model == win->loading && !win->disposed) {
        g_clear_object(&win->loading);
        gtk_widget_set_visible(win->progress, FALSE);
        if (ok) {
            use_model(win, model);
        } else {
            char *name = g_path_get_basename(txlm_model_get_path(model));
            char *text = g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)
                             ? g_strdup_printf("Loading %s stopped", name)
                             : g_strdup_printf("%s: %s", name, error->message);
            set_message(win, text);
            g_free(text);
            g_free(name);
            select_device(win, win->model ? txlm_model_get_device(win->model) : NULL);
        }
        update_stop(win);
        state_changed(win);
    }
    g_clear_error(&error);
    g_object_unref(model);
    write_call_end();
    g_object_unref(win);
}

void write_window_load_model(WriteWindow *win, const char *path, TxlmDevice *device)
{
    g_return_if_fail(WRITE_IS_WINDOW(win) && path != NULL);
    if (win->load_cancel) g_cancellable_cancel(win->load_cancel);
    g_clear_object(&win->load_cancel);
    g_clear_object(&win->loading); /* (its callback finds it replaced) */
    win->load_cancel = g_cancellable_new();
    TxlmModel *model = g_object_new(TXLM_TYPE_MODEL, "path", path, "device", device, NULL);
    win->loading = g_object_ref(model);
    g_signal_connect(model, "notify::progress", G_CALLBACK(on_load_progress), win);
    char *name = g_path_get_basename(path);
    char *text = g_strdup_printf("Loading %s", name);
    gtk_progress_bar_set_text(GTK_PROGRESS_BAR(win->progress), text);
    gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(win->progress), 0);
    gtk_widget_set_visible(win->progress, TRUE);
    set_message(win, text);
    g_free(text);
    g_free(name);
    /* model: the callback's (its ref); win: alive until the callback */
    write_call_begin();
    g_async_initable_init_async(G_ASYNC_INITABLE(model), G_PRIORITY_DEFAULT, win->load_cancel, on_loaded,
                                g_object_ref(win));
    update_stop(win);
}

static void on_device_picked(GObject *drop, GParamSpec *pspec, gpointer user)
{
    (void)pspec;
    WriteWindow *win = user;
    if (win->picking_device) return;
    TxlmDevice *device = gtk_drop_down_get_selected_item(GTK_DROP_DOWN(drop));
    const char *path = win->loading ? txlm_model_get_path(win->loading)
                       : win->model ? txlm_model_get_path(win->model)
                                    : win->opts.model_path;
    if (device && path) write_window_load_model(win, path, device);
}

void write_window_set_devices(WriteWindow *win, GListModel *devices)
{
    g_return_if_fail(WRITE_IS_WINDOW(win));
    g_set_object(&win->devices, devices);
    win->picking_device = TRUE;
    gtk_drop_down_set_model(GTK_DROP_DOWN(win->devices_drop), devices);
    win->picking_device = FALSE;
    select_device(win, win->model ? txlm_model_get_device(win->model) : NULL);
}

/* ---- actions ------------------------------------------------------------- */

static void on_model_chosen(GtkNativeDialog *dialog, int response, gpointer user)
{
    WriteWindow *win = user;
    if (response == GTK_RESPONSE_ACCEPT) {
        GFile *file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
        char *path = file ? g_file_get_path(file) : NULL;
        if (path) write_window_load_model(win, path, gtk_drop_down_get_selected_item(GTK_DROP_DOWN(win->devices_drop)));
        g_free(path);
        g_clear_object(&file);
    }
    g_object_unref(dialog);
}

static void open_model(GSimpleAction *action, GVariant *param, gpointer user)
{
    (void)action, (void)param;
    WriteWindow *win = user;
    GtkFileChooserNative *dialog = gtk_file_chooser_native_new("Open a model", GTK_WINDOW(win),
                                                               GTK_FILE_CHOOSER_ACTION_OPEN, "_Open", "_Cancel");
    GtkFileFilter *filter = gtk_file_filter_new();
    gtk_file_filter_set_name(filter, "txlm models (*.txlm)");
    gtk_file_filter_add_pattern(filter, "*.txlm");
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(dialog), filter);
    g_object_unref(filter);
    const char *now = win->model ? txlm_model_get_path(win->model) : win->opts.model_path;
    if (now) {
        GFile *file = g_file_new_for_path(now);
        GFile *folder = g_file_get_parent(file);
        if (folder) gtk_file_chooser_set_current_folder(GTK_FILE_CHOOSER(dialog), folder, NULL);
        g_clear_object(&folder);
        g_object_unref(file);
    }
    g_signal_connect(dialog, "response", G_CALLBACK(on_model_chosen), win);
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(dialog));
}

static void on_saved(GObject *source, GAsyncResult *result, gpointer user)
{
    WriteWindow *win = user;
    GError *error = NULL;
    if (g_file_replace_contents_finish(G_FILE(source), result, NULL, &error)) {
        win->dirty = FALSE;
        update_title(win);
        char *name = g_file_get_basename(G_FILE(source));
        char *text = g_strdup_printf("Saved %s", name);
        set_message(win, text);
        g_free(text);
        g_free(name);
    } else {
        set_message(win, error->message);
        g_error_free(error);
    }
    g_object_unref(win);
}

/* The document without the ghost, written asynchronously. */
static void save_to(WriteWindow *win, GFile *file)
{
    g_set_object(&win->file, file);
    char *text = write_ghost_document_text(win->ghost);
    GBytes *bytes = g_bytes_new_take(text, strlen(text));
    g_file_replace_contents_bytes_async(file, bytes, NULL, FALSE, G_FILE_CREATE_NONE, NULL, on_saved, g_object_ref(win));
    g_bytes_unref(bytes);
}

static void on_save_chosen(GtkNativeDialog *dialog, int response, gpointer user)
{
    WriteWindow *win = user;
    if (response == GTK_RESPONSE_ACCEPT) {
        GFile *file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
        if (file) save_to(win, file);
        g_clear_object(&file);
    }
    g_object_unref(dialog);
}

static void save(GSimpleAction *action, GVariant *param, gpointer user)
{
    (void)action, (void)param;
    WriteWindow *win = user;
    if (win->file) {
        save_to(win, win->file);
        return;
    }
    GtkFileChooserNative *dialog = gtk_file_chooser_native_new("Save the text", GTK_WINDOW(win),
                                                               GTK_FILE_CHOOSER_ACTION_SAVE, "_Save", "_Cancel");
    gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(dialog), "Untitled.txt");
    g_signal_connect(dialog, "response", G_CALLBACK(on_save_chosen), win);
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(dialog));
}

static void stop(GSimpleAction *action, GVariant *param, gpointer user)
{
    (void)action, (void)param;
    stop_all(user);
}

static void update_undo(gpointer user)
{
    WriteWindow *win = user;
    GActionMap *map = G_ACTION_MAP(win);
    g_simple_action_set_enabled(G_SIMPLE_ACTION(g_action_map_lookup_action(map, "undo")),
                                write_history_can_undo(win->history));
    g_simple_action_set_enabled(G_SIMPLE_ACTION(g_action_map_lookup_action(map, "redo")),
                                write_history_can_redo(win->history));
}

static void undo(GSimpleAction *action, GVariant *param, gpointer user)
{
    (void)action, (void)param;
    WriteWindow *win = user;
    write_ghost_discard(win->ghost);
    write_history_undo(win->history);
}

static void redo(GSimpleAction *action, GVariant *param, gpointer user)
{
    (void)action, (void)param;
    WriteWindow *win = user;
    write_ghost_discard(win->ghost);
    write_history_redo(win->history);
}

static void toggle_surprisal(GSimpleAction *action, GVariant *state, gpointer user)
{
    WriteWindow *win = user;
    gboolean on = g_variant_get_boolean(state);
    g_simple_action_set_state(action, state);
    gtk_widget_set_visible(win->legend, on);
    write_surprisal_set_enabled(win->surprisal, on);
}

static const GActionEntry actions[] = {
    {.name = "open-model", .activate = open_model},
    {.name = "save", .activate = save},
    {.name = "stop", .activate = stop},
    {.name = "undo", .activate = undo},
    {.name = "redo", .activate = redo},
    {.name = "surprisal", .state = "false", .change_state = toggle_surprisal},
};

/* ---- the window's parts ---------------------------------------------------- */

static void on_document_changed(WriteGhost *ghost, gpointer user)
{
    (void)ghost;
    WriteWindow *win = user;
    if (win->dirty) return;
    win->dirty = TRUE;
    update_title(win);
}

static void on_work_changed(gpointer object, gpointer user)
{
    (void)object;
    update_stop(user);
}

static void on_model_error(gpointer object, const char *message, gpointer user)
{
    (void)object;
    set_message(user, message);
}

/* A device in the picker: its name, cut short (lavapipe's is long), whole in the tooltip. */
static void device_item_setup(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user)
{
    (void)factory, (void)user;
    GtkWidget *label = gtk_label_new(NULL);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
    gtk_label_set_max_width_chars(GTK_LABEL(label), 18);
    gtk_list_item_set_child(item, label);
}

static void device_item_bind(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user)
{
    (void)factory, (void)user;
    TxlmDevice *device = gtk_list_item_get_item(item);
    GtkWidget *label = gtk_list_item_get_child(item);
    gtk_label_set_text(GTK_LABEL(label), txlm_device_get_name(device));
    char *tip = g_strdup_printf("%s%s", txlm_device_get_name(device),
                                txlm_device_get_supported(device) ? "" : " (not supported by txlm)");
    gtk_widget_set_tooltip_text(label, tip);
    g_free(tip);
}

static GtkWidget *header_bar(WriteWindow *win)
{
    GtkWidget *bar = gtk_header_bar_new();
    GtkWidget *open = gtk_button_new_with_mnemonic("_Open model\xe2\x80\xa6");
    gtk_actionable_set_action_name(GTK_ACTIONABLE(open), "win.open-model");
    gtk_widget_set_tooltip_text(open, "Open a .txlm model (Ctrl+O)");
    gtk_header_bar_pack_start(GTK_HEADER_BAR(bar), open);

    win->devices_drop = gtk_drop_down_new(NULL, NULL);
    GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
    g_signal_connect(factory, "setup", G_CALLBACK(device_item_setup), NULL);
    g_signal_connect(factory, "bind", G_CALLBACK(device_item_bind), NULL);
    gtk_drop_down_set_factory(GTK_DROP_DOWN(win->devices_drop), factory);
    g_object_unref(factory);
    gtk_widget_set_tooltip_text(win->devices_drop, "The device the model runs on");
    g_signal_connect(win->devices_drop, "notify::selected", G_CALLBACK(on_device_picked), win);
    gtk_header_bar_pack_start(GTK_HEADER_BAR(bar), win->devices_drop);

    win->stop_button = gtk_button_new_with_label("Stop");
    gtk_actionable_set_action_name(GTK_ACTIONABLE(win->stop_button), "win.stop");
    gtk_widget_set_tooltip_text(win->stop_button, "Stop the model: the suggestion, the colouring or the loading");
    gtk_widget_set_sensitive(win->stop_button, FALSE);
    gtk_header_bar_pack_end(GTK_HEADER_BAR(bar), win->stop_button);

    win->surprisal_toggle = gtk_toggle_button_new_with_mnemonic("S_urprisal");
    gtk_actionable_set_action_name(GTK_ACTIONABLE(win->surprisal_toggle), "win.surprisal");
    gtk_widget_set_tooltip_text(win->surprisal_toggle, "Colour each word by its surprisal under the model");
    /* the writer goes on typing in the text after a click on either */
    gtk_widget_set_focus_on_click(win->surprisal_toggle, FALSE);
    gtk_widget_set_focus_on_click(win->stop_button, FALSE);
    gtk_header_bar_pack_end(GTK_HEADER_BAR(bar), win->surprisal_toggle);
    return bar;
}

static GtkWidget *body(WriteWindow *win)
{
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
    win->progress = gtk_progress_bar_new();
    gtk_progress_bar_set_show_text(GTK_PROGRESS_BAR(win->progress), TRUE);
    gtk_widget_set_visible(win->progress, FALSE);
    gtk_box_append(GTK_BOX(box), win->progress);

    win->view = gtk_text_view_new();
    gtk_text_view_set_wrap_mode(GTK_TEXT_VIEW(win->view), GTK_WRAP_WORD_CHAR);
    gtk_text_view_set_left_margin(GTK_TEXT_VIEW(win->view), 16);
    gtk_text_view_set_right_margin(GTK_TEXT_VIEW(win->view), 16);
    gtk_text_view_set_top_margin(GTK_TEXT_VIEW(win->view), 12);
    gtk_text_view_set_bottom_margin(GTK_TEXT_VIEW(win->view), 12);
    gtk_text_view_set_pixels_below_lines(GTK_TEXT_VIEW(win->view), 4);
    win->buffer = gtk_text_view_get_buffer(GTK_TEXT_VIEW(win->view));
    GtkWidget *scroll = gtk_scrolled_window_new();
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroll), win->view);
    gtk_widget_set_vexpand(scroll, TRUE);
    gtk_box_append(GTK_BOX(box), scroll);

    GtkWidget *bottom = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
    gtk_widget_set_margin_start(bottom, 8);
    gtk_widget_set_margin_end(bottom, 8);
    gtk_widget_set_margin_top(bottom, 4);
    gtk_widget_set_margin_bottom(bottom, 4);
    win->status = gtk_label_new("No model");
    gtk_label_set_xalign(GTK_LABEL(win->status), 0);
    gtk_label_set_ellipsize(GTK_LABEL(win->status), PANGO_ELLIPSIZE_END);
    gtk_widget_set_hexpand(win->status, TRUE);
    gtk_box_append(GTK_BOX(bottom), win->status);
    win->legend = write_surprisal_legend_new();
    gtk_widget_set_visible(win->legend, FALSE);
    gtk_box_append(GTK_BOX(bottom), win->legend);
    gtk_box_append(GTK_BOX(box), bottom);
    return box;
}

static gboolean on_close_request(GtkWindow *window, gpointer user)
{
    (void)user;
    stop_all(WRITE_WINDOW(window));
    return FALSE;
}

static void write_window_dispose(GObject *object)
{
    WriteWindow *win = WRITE_WINDOW(object);
    win->disposed = TRUE;
    if (win->load_cancel) g_cancellable_cancel(win->load_cancel);
    g_clear_object(&win->load_cancel);
    if (win->ghost) {
        clear_sessions(win);
        g_signal_handlers_disconnect_by_data(win->ghost, win);
        g_signal_handlers_disconnect_by_data(win->surprisal, win);
    }
    g_clear_pointer(&win->history, write_history_free);
    g_clear_object(&win->surprisal);
    g_clear_object(&win->ghost);
    g_clear_object(&win->model);
    g_clear_object(&win->loading);
    g_clear_object(&win->devices);
    g_clear_object(&win->file);
    G_OBJECT_CLASS(write_window_parent_class)->dispose(object);
}

static void write_window_finalize(GObject *object)
{
    WriteWindow *win = WRITE_WINDOW(object);
    g_free(win->opts.model_path);
    g_free(win->message);
    G_OBJECT_CLASS(write_window_parent_class)->finalize(object);
}

static void write_window_class_init(WriteWindowClass *klass)
{
    GObjectClass *oc = G_OBJECT_CLASS(klass);
    oc->dispose = write_window_dispose;
    oc->finalize = write_window_finalize;
    signals[SIG_STATE_CHANGED] =
        g_signal_new("state-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void write_window_init(WriteWindow *win) { (void)win; }

WriteWindow *write_window_new(GtkApplication *app, const WriteOptions *options)
{
    WriteWindow *win = g_object_new(WRITE_TYPE_WINDOW, "application", app, NULL);
    win->opts = *options;
    win->opts.model_path = g_strdup(options->model_path);
    g_action_map_add_action_entries(G_ACTION_MAP(win), actions, G_N_ELEMENTS(actions), win);
    gtk_window_set_default_size(GTK_WINDOW(win), 800, 480);
    gtk_window_set_titlebar(GTK_WINDOW(win), header_bar(win));
    gtk_window_set_child(GTK_WINDOW(win), body(win));

    /* the ghost's buffer handlers before the history's (write-ghost.h) */
    win->ghost = write_ghost_new(GTK_TEXT_VIEW(win->view));
    win->history = write_history_new(win->buffer, update_undo, win);
    write_ghost_set_history(win->ghost, win->history);
    write_ghost_set_options(win->ghost, options->seed, options->n_tokens, options->pause_ms);
    win->surprisal = write_surprisal_new(win->buffer, win->ghost);
    update_undo(win);
    g_signal_connect(win->ghost, "document-changed", G_CALLBACK(on_document_changed), win);
    g_signal_connect(win->ghost, "state-changed", G_CALLBACK(on_work_changed), win);
    g_signal_connect(win->ghost, "error", G_CALLBACK(on_model_error), win);
    g_signal_connect(win->surprisal, "state-changed", G_CALLBACK(on_work_changed), win);
    g_signal_connect(win->surprisal, "error", G_CALLBACK(on_model_error), win);
    g_signal_connect(win, "close-request", G_CALLBACK(on_close_request), NULL);
    update_title(win);
    gtk_widget_grab_focus(win->view);

    if (options->model_path) write_window_load_model(win, options->model_path, NULL);
    if (options->surprisal) g_action_group_change_action_state(G_ACTION_GROUP(win), "surprisal", g_variant_new_boolean(TRUE));
    return win;
}

GtkTextView *write_window_get_view(WriteWindow *win) { return GTK_TEXT_VIEW(win->view); }
WriteGhost *write_window_get_ghost(WriteWindow *win) { return win->ghost; }
WriteSurprisal *write_window_get_surprisal(WriteWindow *win) { return win->surprisal; }
GtkWidget *write_window_get_surprisal_toggle(WriteWindow *win) { return win->surprisal_toggle; }
TxlmModel *write_window_get_model(WriteWindow *win) { return win->model; }
gboolean write_window_get_loading(WriteWindow *win) { return win->loading != NULL; }
const char *write_window_get_message(WriteWindow *win) { return win->message; }
gint64 write_window_get_session_create_us(WriteWindow *win) { return win->session_create_us; }
