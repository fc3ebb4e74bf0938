/* The ghost suggestion: a pause timer, one generation at a time on the
 * ghost's session, the ghost's text between two marks of the buffer.
 *
 * The ghost's own changes of the buffer happen inside `own_change` (the
 * buffer's handlers and the undo history leave them alone). Any other
 * change is the writer's: the ghost is taken out first (by the key and
 * click controllers before the text view sees the event, or, for a
 * paste, a drop or an input method, by the buffer's insert-text and
 * delete-range handlers, which move the change's place past the removed
 * ghost) and the pause timer starts again. */
#include "write-ghost.h"

#include "write-run.h"

struct _WriteGhost {
    GObject parent;
    GtkTextView *view;
    GtkTextBuffer *buffer;
    GtkTextTag *tag;
    /* the ghost's text; both keep left, so that text the writer puts
     * where an empty ghost is does not fall inside it */
    GtkTextMark *start, *end;
    WriteHistory *history;
    TxlmSession *session;
    gulong token_handler;
    guint64 seed;
    int n_tokens;
    guint pause_ms;
    guint pause_source;
    guint own_change;  /* inside a change of the ghost's own */
    WriteRun *run;     /* the generation whose tokens are shown (NULL: none) */
    gboolean want_run; /* start one when the session's last (cancelled) call returns */
    gboolean done;     /* the ghost shown is complete */
    char *prompt;      /* of the ghost shown */
};

G_DEFINE_FINAL_TYPE(WriteGhost, write_ghost, G_TYPE_OBJECT)

enum { SIG_DOCUMENT_CHANGED, SIG_STATE_CHANGED, SIG_ERROR, N_SIGNALS };
static guint signals[N_SIGNALS];

static void start_generation(WriteGhost *g);

static void state_changed(WriteGhost *g) { g_signal_emit(g, signals[SIG_STATE_CHANGED], 0); }

static void ghost_range(WriteGhost *g, GtkTextIter *a, GtkTextIter *b)
{
    gtk_text_buffer_get_iter_at_mark(g->buffer, a, g->start);
    gtk_text_buffer_get_iter_at_mark(g->buffer, b, g->end);
}

static gboolean has_text(WriteGhost *g)
{
    GtkTextIter a, b;
    ghost_range(g, &a, &b);
    return !gtk_text_iter_equal(&a, &b);
}

/* The ghost's marks at the cursor: an empty ghost there. */
static void place_marks(WriteGhost *g)
{
    GtkTextIter at;
    gtk_text_buffer_get_iter_at_mark(g->buffer, &at, gtk_text_buffer_get_insert(g->buffer));
    gtk_text_buffer_move_mark(g->buffer, g->start, &at);
    gtk_text_buffer_move_mark(g->buffer, g->end, &at);
}

static void begin_own(WriteGhost *g)
{
    g->own_change++;
    if (g->history) write_history_suspend(g->history);
}

static void end_own(WriteGhost *g)
{
    if (g->history) write_history_resume(g->history);
    g->own_change--;
}

/* The ghost's text out of the buffer; the cursor stays where it is. */
static void remove_text(WriteGhost *g)
{
    if (!has_text(g)) return;
    GtkTextIter a, b;
    ghost_range(g, &a, &b);
    begin_own(g);
    gtk_text_buffer_delete(g->buffer, &a, &b);
    end_own(g);
}

static void cancel_run(WriteGhost *g) { write_run_cancel(&g->run); }

static void stop_timer(WriteGhost *g) { g_clear_handle_id(&g->pause_source, g_source_remove); }

void write_ghost_discard(WriteGhost *g)
{
    g_return_if_fail(WRITE_IS_GHOST(g));
    gboolean changed = g->run || has_text(g) || g->prompt;
    cancel_run(g);
    g->want_run = FALSE;
    remove_text(g);
    g_clear_pointer(&g->prompt, g_free);
    g->done = FALSE;
    if (changed) state_changed(g);
}

void write_ghost_stop(WriteGhost *g)
{
    g_return_if_fail(WRITE_IS_GHOST(g));
    stop_timer(g);
    g->want_run = FALSE;
    if (!g->run) return;
    cancel_run(g);
    g->done = TRUE;
    state_changed(g);
}

static gboolean on_pause(gpointer user)
{
    WriteGhost *g = user;
    g->pause_source = 0;
    start_generation(g);
    return G_SOURCE_REMOVE;
}

static void restart_timer(WriteGhost *g)
{
    stop_timer(g);
    if (g->session) g->pause_source = g_timeout_add(g->pause_ms, on_pause, g);
}

/* ---- generating ---------------------------------------------------------- */

static void on_token(TxlmSession *session, const char *text, gpointer user)
{
    (void)session;
    WriteGhost *g = user;
    if (!g->run || g_cancellable_is_cancelled(g->run->cancel) || !*text) return;
    GtkTextIter at, from;
    gtk_text_buffer_get_iter_at_mark(g->buffer, &at, g->end);
    int offset = gtk_text_iter_get_offset(&at);
    begin_own(g);
    gtk_text_buffer_insert(g->buffer, &at, text, -1); /* (at: now after the text) */
    gtk_text_buffer_move_mark(g->buffer, g->end, &at);
    /* text inserted inside a tagged run takes its tags (a surprisal colour) */
    gtk_text_buffer_get_iter_at_offset(g->buffer, &from, offset);
    gtk_text_buffer_remove_all_tags(g->buffer, &from, &at);
    gtk_text_buffer_apply_tag(g->buffer, g->tag, &from, &at);
    /* the cursor (right gravity) went past the insertion: back before the ghost */
    gtk_text_buffer_get_iter_at_mark(g->buffer, &at, g->start);
    gtk_text_buffer_place_cursor(g->buffer, &at);
    end_own(g);
    state_changed(g);
}

static void on_generated(GObject *source, GAsyncResult *result, gpointer user)
{
    WriteRun *r = user;
    WriteGhost *g = WRITE_GHOST(r->owner);
    GError *error = NULL;
    char *text = txlm_session_generate_finish(TXLM_SESSION(source), result, &error);
    g_free(text); /* (the ghost holds what the tokens brought) */
    if (g->run == r) {
        g->run = NULL;
        g->done = TRUE;
        if (error && !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
            g_signal_emit(g, signals[SIG_ERROR], 0, error->message);
        state_changed(g);
    }
    g_clear_error(&error);
    gboolean again = g->want_run && TXLM_SESSION(source) == g->session;
    g->want_run = FALSE;
    if (again) start_generation(g);
    write_run_free(r);
}

static gboolean has_selection(WriteGhost *g)
{
    return gtk_text_buffer_get_selection_bounds(g->buffer, NULL, NULL);
}

static void start_generation(WriteGhost *g)
{
    if (!g->session || has_selection(g) || has_text(g) || g->run) return;
    if (txlm_session_get_busy(g->session)) {
        g->want_run = TRUE; /* a cancelled generation has not returned yet */
        return;
    }
    GtkTextIter begin, cursor;
    gtk_text_buffer_get_start_iter(g->buffer, &begin);
    gtk_text_buffer_get_iter_at_mark(g->buffer, &cursor, gtk_text_buffer_get_insert(g->buffer));
    char *prompt = gtk_text_buffer_get_slice(g->buffer, &begin, &cursor, TRUE);
    GError *error = NULL;
    if (!*prompt || !txlm_session_clear_memory(g->session, &error)) {
        if (error) g_signal_emit(g, signals[SIG_ERROR], 0, error->message);
        g_clear_error(&error);
        g_free(prompt);
        return;
    }
    WriteRun *r = write_run_new(g, prompt, 0);
    g->run = r;
    g->done = FALSE;
    g_free(g->prompt);
    g->prompt = g_strdup(prompt);
    place_marks(g);
    txlm_session_generate_async(g->session, prompt, g->n_tokens, g->seed, r->cancel, on_generated, r);
    state_changed(g);
}

/* ---- accepting ----------------------------------------------------------- */

gboolean write_ghost_accept(WriteGhost *g)
{
    g_return_val_if_fail(WRITE_IS_GHOST(g), FALSE);
    if (!has_text(g)) return FALSE;
    cancel_run(g);
    g->want_run = FALSE;
    GtkTextIter a, b;
    ghost_range(g, &a, &b);
    char *text = gtk_text_iter_get_slice(&a, &b);
    int offset = gtk_text_iter_get_offset(&a);
    /* the text is already there: it stops being the ghost's */
    begin_own(g);
    gtk_text_buffer_remove_tag(g->buffer, g->tag, &a, &b);
    gtk_text_buffer_place_cursor(g->buffer, &b);
    place_marks(g);
    end_own(g);
    if (g->history) write_history_record_insert(g->history, offset, text);
    g_free(text);
    g_clear_pointer(&g->prompt, g_free);
    g->done = FALSE;
    gtk_text_view_scroll_mark_onscreen(g->view, gtk_text_buffer_get_insert(g->buffer));
    state_changed(g);
    g_signal_emit(g, signals[SIG_DOCUMENT_CHANGED], 0);
    restart_timer(g);
    return TRUE;
}

/* ---- the writer's changes ------------------------------------------------ */

/* An edit at [*a, *b) of the buffer is about to happen: the ghost goes
 * first, and the edit's place moves to where it is without it (an edit
 * reaching into the ghost is clipped at its start). */
static void take_out_before_edit(WriteGhost *g, GtkTextIter *a, GtkTextIter *b)
{
    if (!g->run && !has_text(g)) return;
    GtkTextIter s, e;
    ghost_range(g, &s, &e);
    int gs = gtk_text_iter_get_offset(&s), ge = gtk_text_iter_get_offset(&e);
    int oa = gtk_text_iter_get_offset(a), ob = b ? gtk_text_iter_get_offset(b) : oa;
    oa = oa >= ge ? oa - (ge - gs) : MIN(oa, gs);
    ob = ob >= ge ? ob - (ge - gs) : MIN(ob, gs);
    write_ghost_discard(g);
    gtk_text_buffer_get_iter_at_offset(g->buffer, a, oa);
    if (b) gtk_text_buffer_get_iter_at_offset(g->buffer, b, ob);
}

static void on_insert_text(GtkTextBuffer *buffer, GtkTextIter *at, const char *text, int len, gpointer user)
{
    (void)buffer, (void)text, (void)len;
    WriteGhost *g = user;
    if (!g->own_change) take_out_before_edit(g, at, NULL);
}

static void on_delete_range(GtkTextBuffer *buffer, GtkTextIter *a, GtkTextIter *b, gpointer user)
{
    (void)buffer;
    WriteGhost *g = user;
    if (!g->own_change) take_out_before_edit(g, a, b);
}

static void on_changed(GtkTextBuffer *buffer, gpointer user)
{
    (void)buffer;
    WriteGhost *g = user;
    if (g->own_change) return;
    g_signal_emit(g, signals[SIG_DOCUMENT_CHANGED], 0);
    restart_timer(g);
}

static void on_mark_set(GtkTextBuffer *buffer, GtkTextIter *at, GtkTextMark *mark, gpointer user)
{
    (void)at;
    WriteGhost *g = user;
    if (g->own_change || mark != gtk_text_buffer_get_insert(buffer)) return;
    /* the cursor moved: no suggestion until the next edit */
    stop_timer(g);
    write_ghost_discard(g);
}

static gboolean on_key_pressed(GtkEventControllerKey *keys, guint keyval, guint keycode, GdkModifierType state,
                               gpointer user)
{
    (void)keycode;
    WriteGhost *g = user;
    GdkEvent *event = gtk_event_controller_get_current_event(GTK_EVENT_CONTROLLER(keys));
    if (event && gdk_key_event_is_modifier(event)) return GDK_EVENT_PROPAGATE; /* Shift before a capital */
    gboolean plain = !(state & (GDK_SHIFT_MASK | GDK_CONTROL_MASK | GDK_ALT_MASK | GDK_SUPER_MASK));
    if ((keyval == GDK_KEY_Tab || keyval == GDK_KEY_KP_Tab) && plain && write_ghost_accept(g))
        return GDK_EVENT_STOP;
    write_ghost_discard(g);
    return GDK_EVENT_PROPAGATE;
}

static void on_click(GtkGestureClick *click, int n_press, double x, double y, gpointer user)
{
    (void)click, (void)n_press, (void)x, (void)y;
    WriteGhost *g = user;
    stop_timer(g);
    write_ghost_discard(g);
}

/* ---- the object ---------------------------------------------------------- */

static void write_ghost_dispose(GObject *object)
{
    WriteGhost *g = WRITE_GHOST(object);
    stop_timer(g);
    cancel_run(g);
    write_ghost_set_session(g, NULL);
    if (g->buffer) g_signal_handlers_disconnect_by_data(g->buffer, g);
    g_clear_object(&g->buffer);
    g_clear_object(&g->view);
    G_OBJECT_CLASS(write_ghost_parent_class)->dispose(object);
}

static void write_ghost_finalize(GObject *object)
{
    g_free(WRITE_GHOST(object)->prompt);
    G_OBJECT_CLASS(write_ghost_parent_class)->finalize(object);
}

static void write_ghost_class_init(WriteGhostClass *klass)
{
    GObjectClass *oc = G_OBJECT_CLASS(klass);
    oc->dispose = write_ghost_dispose;
    oc->finalize = write_ghost_finalize;
    signals[SIG_DOCUMENT_CHANGED] =
        g_signal_new("document-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
    signals[SIG_STATE_CHANGED] =
        g_signal_new("state-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
    signals[SIG_ERROR] = g_signal_new("error", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                      G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void write_ghost_init(WriteGhost *g)
{
    g->seed = 1;
    g->n_tokens = 32;
    g->pause_ms = 600;
}

WriteGhost *write_ghost_new(GtkTextView *view)
{
    WriteGhost *g = g_object_new(WRITE_TYPE_GHOST, NULL);
    g->view = g_object_ref(view);
    g->buffer = g_object_ref(gtk_text_view_get_buffer(view));
    g->tag = gtk_text_buffer_create_tag(g->buffer, "ghost", "foreground", "#8c8c8c", NULL);
    GtkTextIter at;
    gtk_text_buffer_get_start_iter(g->buffer, &at);
    g->start = gtk_text_buffer_create_mark(g->buffer, "ghost-start", &at, TRUE);
    g->end = gtk_text_buffer_create_mark(g->buffer, "ghost-end", &at, TRUE);
    g_signal_connect(g->buffer, "insert-text", G_CALLBACK(on_insert_text), g);
    g_signal_connect(g->buffer, "delete-range", G_CALLBACK(on_delete_range), g);
    g_signal_connect(g->buffer, "changed", G_CALLBACK(on_changed), g);
    g_signal_connect(g->buffer, "mark-set", G_CALLBACK(on_mark_set), g);
    /* before the text view's own handling of the key or the click */
    GtkEventController *keys = gtk_event_controller_key_new();
    gtk_event_controller_set_propagation_phase(keys, GTK_PHASE_CAPTURE);
    g_signal_connect(keys, "key-pressed", G_CALLBACK(on_key_pressed), g);
    gtk_widget_add_controller(GTK_WIDGET(view), keys);
    GtkGesture *click = gtk_gesture_click_new();
    gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(click), 0);
    gtk_event_controller_set_propagation_phase(GTK_EVENT_CONTROLLER(click), GTK_PHASE_CAPTURE);
    g_signal_connect(click, "pressed", G_CALLBACK(on_click), g);
    gtk_widget_add_controller(GTK_WIDGET(view), GTK_EVENT_CONTROLLER(click));
    return g;
}

void write_ghost_set_history(WriteGhost *g, WriteHistory *history) { g->history = history; }

void write_ghost_set_session(WriteGhost *g, TxlmSession *session)
{
    g_return_if_fail(WRITE_IS_GHOST(g));
    if (g->session == session) return;
    write_ghost_discard(g);
    stop_timer(g);
    if (g->session) g_clear_signal_handler(&g->token_handler, g->session);
    g_clear_object(&g->session);
    if (session) {
        g->session = g_object_ref(session);
        g->token_handler = g_signal_connect(session, "token", G_CALLBACK(on_token), g);
    }
}

void write_ghost_set_options(WriteGhost *g, guint64 seed, int n_tokens, guint pause_ms)
{
    g->seed = seed;
    g->n_tokens = n_tokens;
    g->pause_ms = pause_ms;
}

char *write_ghost_dup_text(WriteGhost *g)
{
    GtkTextIter a, b;
    ghost_range(g, &a, &b);
    return gtk_text_iter_get_slice(&a, &b);
}

const char *write_ghost_get_prompt(WriteGhost *g) { return g->prompt; }
gboolean write_ghost_get_running(WriteGhost *g) { return g->run != NULL; }
gboolean write_ghost_get_done(WriteGhost *g) { return g->done; }

char *write_ghost_document_text(WriteGhost *g)
{
    GtkTextIter begin, end, s, e;
    gtk_text_buffer_get_bounds(g->buffer, &begin, &end);
    ghost_range(g, &s, &e);
    char *before = gtk_text_iter_get_slice(&begin, &s), *after = gtk_text_iter_get_slice(&e, &end);
    char *all = g_strconcat(before, after, NULL);
    g_free(before);
    g_free(after);
    return all;
}

int write_ghost_buffer_offset(WriteGhost *g, int document_offset)
{
    GtkTextIter s, e;
    ghost_range(g, &s, &e);
    int gs = gtk_text_iter_get_offset(&s), ge = gtk_text_iter_get_offset(&e);
    return document_offset < gs ? document_offset : document_offset + (ge - gs);
}
