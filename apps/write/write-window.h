/* txlm-write's window: the text, the model it writes with (a file chosen
 * with the platform's file chooser, loaded with a progress bar onto the
 * device picked), the stop button, the surprisal toggle and its legend.
 * Every call on the model is asynchronous: the window never waits on it. */
#ifndef WRITE_WINDOW_H
#define WRITE_WINDOW_H

#include <gtk/gtk.h>
#include <txlm-glib.h>

#include "write-ghost.h"
#include "write-surprisal.h"

G_BEGIN_DECLS

typedef struct {
    char *model_path;   /* the model to load first (NULL: none) */
    guint64 seed;       /* of every suggestion */
    int n_tokens;       /* a suggestion's length at most, in tokens */
    guint pause_ms;     /* how long a pause brings a suggestion */
    double temperature; /* the suggestions' sampling */
    guint top_k;
    gboolean surprisal; /* colours on from the start */
    gboolean multiline; /* a suggestion may go on past the end of its line */
} WriteOptions;

#define WRITE_TYPE_WINDOW (write_window_get_type())
G_DECLARE_FINAL_TYPE(WriteWindow, write_window, WRITE, WINDOW, GtkApplicationWindow)

/* Signal: state-changed (a model loading, loaded or failed; a message). */

WriteWindow *write_window_new(GtkApplication *app, const WriteOptions *options);
/* The devices of the picker (TxlmDevice; txlm_device_list_finish's). */
void write_window_set_devices(WriteWindow *win, GListModel *devices);
/* Loads path onto device (NULL: txlm's choice), in place of the model now. */
void write_window_load_model(WriteWindow *win, const char *path, TxlmDevice *device);

/* What the test hook (write-probe.c) reads. */
GtkTextView *write_window_get_view(WriteWindow *win);
WriteGhost *write_window_get_ghost(WriteWindow *win);
WriteSurprisal *write_window_get_surprisal(WriteWindow *win);
GtkWidget *write_window_get_surprisal_toggle(WriteWindow *win);
TxlmModel *write_window_get_model(WriteWindow *win); /* (NULL: none loaded) */
gboolean write_window_get_loading(WriteWindow *win);
const char *write_window_get_message(WriteWindow *win);
/* The time creating the model's two sessions took on the UI thread (µs). */
gint64 write_window_get_session_create_us(WriteWindow *win);

G_END_DECLS

#endif
