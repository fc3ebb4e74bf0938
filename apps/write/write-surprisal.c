/* Surprisal colours: the document scored on its own session, the words'
 * bits mapped onto a five-step scale of text tags. The steps split the
 * demo model's words of its held-out text into roughly equal fifths
 * (a word of a character model carries the bits of all its
 * characters). */
#include <math.h>

#include "write-surprisal.h"

#include "write-run.h"

static const WriteSurprisalStep scale[] = {
    {0, 4, "#ffffb2", "#000000"},        {4, 8, "#fecc5c", "#000000"},   {8, 14, "#fd8d3c", "#000000"},
    {14, 20, "#f03b20", "#ffffff"}, {20, INFINITY, "#bd0026", "#ffffff"},
};
enum { N_STEPS = G_N_ELEMENTS(scale) };

const WriteSurprisalStep *write_surprisal_scale(guint *n)
{
    *n = N_STEPS;
    return scale;
}

int write_surprisal_step_of(double bits)
{
    if (isnan(bits)) return -1;
    for (int i = 0; i < N_STEPS; i++)
        if (bits < scale[i].to_bits) return i;
    return N_STEPS - 1;
}

struct _WriteSurprisal {
    GObject parent;
    GtkTextBuffer *buffer;
    WriteGhost *ghost;
    GtkTextTag *tags[N_STEPS];
    TxlmSession *session;
    gboolean enabled;
    guint64 version; /* the document's, counted by its changes */
    guint pause_source;
    WriteRun *run;
    gboolean want_run;
    GPtrArray *words; /* coloured now */
    char *scored_text;
};

G_DEFINE_FINAL_TYPE(WriteSurprisal, write_surprisal, G_TYPE_OBJECT)

enum { SIG_STATE_CHANGED, SIG_ERROR, N_SIGNALS };
static guint signals[N_SIGNALS];

enum { PAUSE_MS = 700 };

static void start_scoring(WriteSurprisal *s);

static void state_changed(WriteSurprisal *s) { g_signal_emit(s, signals[SIG_STATE_CHANGED], 0); }

static void remove_colours(WriteSurprisal *s)
{
    GtkTextIter a, b;
    gtk_text_buffer_get_bounds(s->buffer, &a, &b);
    for (int i = 0; i < N_STEPS; i++) gtk_text_buffer_remove_tag(s->buffer, s->tags[i], &a, &b);
    g_clear_pointer(&s->words, g_ptr_array_unref);
    g_clear_pointer(&s->scored_text, g_free);
}

static void cancel_run(WriteSurprisal *s) { write_run_cancel(&s->run); }

static void stop_timer(WriteSurprisal *s) { g_clear_handle_id(&s->pause_source, g_source_remove); }

static void apply(WriteSurprisal *s, GPtrArray *words, const char *text)
{
    remove_colours(s);
    for (guint i = 0; i < words->len; i++) {
        TxlmWordScore *w = g_ptr_array_index(words, i);
        int step = write_surprisal_step_of(txlm_word_score_get_surprisal(w));
        if (step < 0) continue;
        GtkTextIter a, b;
        gtk_text_buffer_get_iter_at_offset(s->buffer, &a,
                                           write_ghost_buffer_offset(s->ghost, (int)txlm_word_score_get_char_begin(w)));
        gtk_text_buffer_get_iter_at_offset(s->buffer, &b,
                                           write_ghost_buffer_offset(s->ghost, (int)txlm_word_score_get_char_end(w)));
        gtk_text_buffer_apply_tag(s->buffer, s->tags[step], &a, &b);
    }
    /* a word the cursor is inside has the ghost inside it: not coloured */
    char *ghost = write_ghost_dup_text(s->ghost);
    if (*ghost) {
        GtkTextIter a, b;
        gtk_text_buffer_get_iter_at_mark(s->buffer, &a, gtk_text_buffer_get_mark(s->buffer, "ghost-start"));
        gtk_text_buffer_get_iter_at_mark(s->buffer, &b, gtk_text_buffer_get_mark(s->buffer, "ghost-end"));
        for (int i = 0; i < N_STEPS; i++) gtk_text_buffer_remove_tag(s->buffer, s->tags[i], &a, &b);
    }
    g_free(ghost);
    s->words = g_ptr_array_ref(words);
    s->scored_text = g_strdup(text);
}

static void on_scored(GObject *source, GAsyncResult *result, gpointer user)
{
    WriteRun *r = user;
    WriteSurprisal *s = WRITE_SURPRISAL(r->owner);
    GError *error = NULL;
    GPtrArray *words = txlm_session_score_finish(TXLM_SESSION(source), result, &error);
    if (s->run == r) {
        s->run = NULL;
        if (words && s->enabled && r->version == s->version) apply(s, words, r->text);
        if (error && !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
            g_signal_emit(s, signals[SIG_ERROR], 0, error->message);
        state_changed(s);
    }
    if (words) g_ptr_array_unref(words);
    g_clear_error(&error);
    gboolean again = s->want_run && TXLM_SESSION(source) == s->session;
    s->want_run = FALSE;
    if (again) start_scoring(s);
    write_run_free(r);
}

static void start_scoring(WriteSurprisal *s)
{
    if (!s->enabled || !s->session || s->run) return;
    if (txlm_session_get_busy(s->session)) {
        s->want_run = TRUE; /* a cancelled scoring has not returned yet */
        return;
    }
    char *text = write_ghost_document_text(s->ghost);
    GError *error = NULL;
    if (!*text || !txlm_session_clear_memory(s->session, &error)) {
        if (error) g_signal_emit(s, signals[SIG_ERROR], 0, error->message);
        g_clear_error(&error);
        g_free(text);
        return;
    }
    WriteRun *r = write_run_new(s, text, s->version);
    s->run = r;
    txlm_session_score_async(s->session, text, r->cancel, on_scored, r);
    state_changed(s);
}

static gboolean on_pause(gpointer user)
{
    WriteSurprisal *s = user;
    s->pause_source = 0;
    start_scoring(s);
    return G_SOURCE_REMOVE;
}

static void on_document_changed(WriteGhost *ghost, gpointer user)
{
    (void)ghost;
    WriteSurprisal *s = user;
    s->version++;
    if (!s->enabled) return;
    gboolean shown = s->words || s->run;
    cancel_run(s);
    remove_colours(s);
    stop_timer(s);
    s->pause_source = g_timeout_add(PAUSE_MS, on_pause, s);
    if (shown) state_changed(s);
}

void write_surprisal_set_enabled(WriteSurprisal *s, gboolean enabled)
{
    g_return_if_fail(WRITE_IS_SURPRISAL(s));
    if (s->enabled == !!enabled) return;
    s->enabled = !!enabled;
    stop_timer(s);
    cancel_run(s);
    s->want_run = FALSE;
    remove_colours(s);
    if (enabled) start_scoring(s);
    state_changed(s);
}

gboolean write_surprisal_get_enabled(WriteSurprisal *s) { return s->enabled; }

void write_surprisal_stop(WriteSurprisal *s)
{
    g_return_if_fail(WRITE_IS_SURPRISAL(s));
    stop_timer(s);
    s->want_run = FALSE;
    if (!s->run) return;
    cancel_run(s);
    state_changed(s);
}

gboolean write_surprisal_get_running(WriteSurprisal *s) { return s->run != NULL; }
GPtrArray *write_surprisal_get_words(WriteSurprisal *s) { return s->words; }
const char *write_surprisal_get_scored_text(WriteSurprisal *s) { return s->scored_text; }

void write_surprisal_set_session(WriteSurprisal *s, TxlmSession *session)
{
    g_return_if_fail(WRITE_IS_SURPRISAL(s));
    if (s->session == session) return;
    cancel_run(s);
    s->want_run = FALSE;
    remove_colours(s);
    g_set_object(&s->session, session);
    if (s->enabled) start_scoring(s);
    state_changed(s);
}

static void write_surprisal_dispose(GObject *object)
{
    WriteSurprisal *s = WRITE_SURPRISAL(object);
    stop_timer(s);
    cancel_run(s);
    if (s->ghost) g_signal_handlers_disconnect_by_data(s->ghost, s);
    g_clear_object(&s->ghost);
    g_clear_object(&s->buffer);
    g_clear_object(&s->session);
    g_clear_pointer(&s->words, g_ptr_array_unref);
    g_clear_pointer(&s->scored_text, g_free);
    G_OBJECT_CLASS(write_surprisal_parent_class)->dispose(object);
}

static void write_surprisal_class_init(WriteSurprisalClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = write_surprisal_dispose;
    signals[SIG_STATE_CHANGED] =
        g_signal_new("state-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
    signals[SIG_ERROR] = g_signal_new("error", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                      G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void write_surprisal_init(WriteSurprisal *s) { (void)s; }

WriteSurprisal *write_surprisal_new(GtkTextBuffer *buffer, WriteGhost *ghost)
{
    WriteSurprisal *s = g_object_new(WRITE_TYPE_SURPRISAL, NULL);
    s->buffer = g_object_ref(buffer);
    s->ghost = g_object_ref(ghost);
    for (int i = 0; i < N_STEPS; i++) {
        char name[32];
        g_snprintf(name, sizeof name, "surprisal-%d", i);
        s->tags[i] = gtk_text_buffer_create_tag(buffer, name, "background", scale[i].background, "foreground",
                                                scale[i].foreground, NULL);
    }
    g_signal_connect(ghost, "document-changed", G_CALLBACK(on_document_changed), s);
    return s;
}

/* ---- the legend ---------------------------------------------------------- */

static void legend_css(void)
{
    static gboolean done;
    if (done) return;
    done = TRUE;
    GString *css = g_string_new(".surprisal-step { padding: 1px 6px; }\n");
    for (int i = 0; i < N_STEPS; i++)
        g_string_append_printf(css, ".surprisal-step-%d { background-color: %s; color: %s; }\n", i, scale[i].background,
                               scale[i].foreground);
    GtkCssProvider *provider = gtk_css_provider_new();
    gtk_css_provider_load_from_data(provider, css->str, (gssize)css->len);
    gtk_style_context_add_provider_for_display(gdk_display_get_default(), GTK_STYLE_PROVIDER(provider),
                                               GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    g_object_unref(provider);
    g_string_free(css, TRUE);
}

GtkWidget *write_surprisal_legend_new(void)
{
    legend_css();
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0);
    gtk_widget_add_css_class(box, "surprisal-legend");
    GtkWidget *title = gtk_label_new("Surprisal, bits a word:");
    gtk_widget_set_margin_end(title, 6);
    gtk_box_append(GTK_BOX(box), title);
    for (int i = 0; i < N_STEPS; i++) {
        char *text = isinf(scale[i].to_bits) ? g_strdup_printf("%g +", scale[i].from_bits)
                                             : g_strdup_printf("%g\xe2\x80\x93%g", scale[i].from_bits, scale[i].to_bits);
        GtkWidget *step = gtk_label_new(text);
        g_free(text);
        char klass[32];
        g_snprintf(klass, sizeof klass, "surprisal-step-%d", i);
        gtk_widget_add_css_class(step, "surprisal-step");
        gtk_widget_add_css_class(step, klass);
        gtk_box_append(GTK_BOX(box), step);
    }
    return box;
}
