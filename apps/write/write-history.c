/* Undo and redo as steps of edits. A step is what one user action did
 * (a key press, a paste, a selection typed over); letters typed one
 * after another into one word join one step, as in GTK's own history. */
#include <string.h>

#include "write-history.h"

typedef enum { EDIT_INSERT, EDIT_DELETE } EditKind;

typedef struct {
    EditKind kind;
    int offset;  /* where, in characters */
    int n_chars; /* of text */
    char *text;
} Edit;

typedef struct {
    GPtrArray *edits; /* Edit, in the order they were made */
    gboolean sealed;  /* nothing joins it (an accepted suggestion, a step undone and redone) */
} Step;

struct _WriteHistory {
    GtkTextBuffer *buffer;
    GPtrArray *undo, *redo; /* Step; the last is the next to undo (redo) */
    guint suspended;
    guint user_action;   /* inside a user action of the buffer */
    gboolean step_open;  /* the user action's edits go into the last step */
    WriteHistoryNotify notify;
    gpointer notify_data;
    gulong handlers[4];
};

static void edit_free(Edit *e)
{
    g_free(e->text);
    g_free(e);
}

static Step *step_new(void)
{
    Step *s = g_new0(Step, 1);
    s->edits = g_ptr_array_new_with_free_func((GDestroyNotify)edit_free);
    return s;
}

static void step_free(Step *s)
{
    g_ptr_array_unref(s->edits);
    g_free(s);
}

static gboolean can_undo_redo_changed(WriteHistory *h, gboolean could_undo, gboolean could_redo)
{
    return could_undo != (h->undo->len > 0) || could_redo != (h->redo->len > 0);
}

static void tell(WriteHistory *h, gboolean could_undo, gboolean could_redo)
{
    if (h->notify && can_undo_redo_changed(h, could_undo, could_redo)) h->notify(h->notify_data);
}

static Step *top(GPtrArray *steps) { return steps->len ? g_ptr_array_index(steps, steps->len - 1) : NULL; }

/* Whether a typed character c at offset joins the last step: it follows
 * that step's lone insert, and does not start a new word. */
static gboolean joins_typing(Step *last, const Edit *e)
{
    if (!last || last->sealed || last->edits->len != 1 || e->kind != EDIT_INSERT || e->n_chars != 1) return FALSE;
    Edit *prev = g_ptr_array_index(last->edits, 0);
    if (prev->kind != EDIT_INSERT || prev->offset + prev->n_chars != e->offset) return FALSE;
    gunichar before = g_utf8_get_char(g_utf8_prev_char(prev->text + strlen(prev->text)));
    gunichar c = g_utf8_get_char(e->text);
    return !(g_unichar_isspace(before) && !g_unichar_isspace(c));
}

static void record(WriteHistory *h, Edit *e)
{
    gboolean could_undo = h->undo->len > 0, could_redo = h->redo->len > 0;
    g_ptr_array_set_size(h->redo, 0);
    Step *last = top(h->undo);
    if (h->step_open && last) {
        g_ptr_array_add(last->edits, e);
    } else if (joins_typing(last, e)) {
        Edit *prev = g_ptr_array_index(last->edits, 0);
        char *joined = g_strconcat(prev->text, e->text, NULL);
        g_free(prev->text);
        prev->text = joined;
        prev->n_chars += e->n_chars;
        edit_free(e);
    } else {
        Step *s = step_new();
        g_ptr_array_add(s->edits, e);
        g_ptr_array_add(h->undo, s);
    }
    /* the rest of this user action's edits join the step just made or joined */
    if (h->user_action) h->step_open = TRUE;
    tell(h, could_undo, could_redo);
}

static void on_insert_text(GtkTextBuffer *buffer, GtkTextIter *at, const char *text, int len, gpointer user)
{
    (void)buffer;
    WriteHistory *h = user;
    if (h->suspended || len == 0) return;
    Edit *e = g_new0(Edit, 1);
    e->kind = EDIT_INSERT;
    e->offset = gtk_text_iter_get_offset(at);
    e->text = g_strndup(text, (gsize)len);
    e->n_chars = (int)g_utf8_strlen(e->text, -1);
    record(h, e);
}

static void on_delete_range(GtkTextBuffer *buffer, GtkTextIter *start, GtkTextIter *end, gpointer user)
{
    (void)buffer;
    WriteHistory *h = user;
    if (h->suspended || gtk_text_iter_equal(start, end)) return;
    GtkTextIter a = *start, b = *end;
    gtk_text_iter_order(&a, &b);
    Edit *e = g_new0(Edit, 1);
    e->kind = EDIT_DELETE;
    e->offset = gtk_text_iter_get_offset(&a);
    e->n_chars = gtk_text_iter_get_offset(&b) - e->offset;
    e->text = gtk_text_iter_get_slice(&a, &b);
    record(h, e);
}

static void on_begin_user_action(GtkTextBuffer *buffer, gpointer user)
{
    (void)buffer;
    WriteHistory *h = user;
    if (h->user_action++ == 0) h->step_open = FALSE;
}

static void on_end_user_action(GtkTextBuffer *buffer, gpointer user)
{
    (void)buffer;
    WriteHistory *h = user;
    if (h->user_action > 0 && --h->user_action == 0) h->step_open = FALSE;
}

WriteHistory *write_history_new(GtkTextBuffer *buffer, WriteHistoryNotify notify, gpointer user_data)
{
    WriteHistory *h = g_new0(WriteHistory, 1);
    h->buffer = g_object_ref(buffer);
    h->undo = g_ptr_array_new_with_free_func((GDestroyNotify)step_free);
    h->redo = g_ptr_array_new_with_free_func((GDestroyNotify)step_free);
    h->notify = notify;
    h->notify_data = user_data;
    gtk_text_buffer_set_enable_undo(buffer, FALSE);
    h->handlers[0] = g_signal_connect(buffer, "insert-text", G_CALLBACK(on_insert_text), h);
    h->handlers[1] = g_signal_connect(buffer, "delete-range", G_CALLBACK(on_delete_range), h);
    h->handlers[2] = g_signal_connect(buffer, "begin-user-action", G_CALLBACK(on_begin_user_action), h);
    h->handlers[3] = g_signal_connect(buffer, "end-user-action", G_CALLBACK(on_end_user_action), h);
    return h;
}

void write_history_free(WriteHistory *h)
{
    if (!h) return;
    for (guint i = 0; i < G_N_ELEMENTS(h->handlers); i++) g_signal_handler_disconnect(h->buffer, h->handlers[i]);
    g_ptr_array_unref(h->undo);
    g_ptr_array_unref(h->redo);
    g_object_unref(h->buffer);
    g_free(h);
}

void write_history_suspend(WriteHistory *h) { h->suspended++; }

void write_history_resume(WriteHistory *h)
{
    g_return_if_fail(h->suspended > 0);
    h->suspended--;
}

void write_history_record_insert(WriteHistory *h, int offset, const char *text)
{
    gboolean could_undo = h->undo->len > 0, could_redo = h->redo->len > 0;
    g_ptr_array_set_size(h->redo, 0);
    Edit *e = g_new0(Edit, 1);
    e->kind = EDIT_INSERT;
    e->offset = offset;
    e->text = g_strdup(text);
    e->n_chars = (int)g_utf8_strlen(text, -1);
    Step *s = step_new();
    s->sealed = TRUE;
    g_ptr_array_add(s->edits, e);
    g_ptr_array_add(h->undo, s);
    tell(h, could_undo, could_redo);
}

gboolean write_history_can_undo(WriteHistory *h) { return h->undo->len > 0; }
gboolean write_history_can_redo(WriteHistory *h) { return h->redo->len > 0; }

/* Makes (forward) or takes back (!forward) edit e; the offset the cursor goes to. */
static int apply(WriteHistory *h, const Edit *e, gboolean forward)
{
    GtkTextIter a, b;
    gtk_text_buffer_get_iter_at_offset(h->buffer, &a, e->offset);
    if ((e->kind == EDIT_INSERT) == forward) {
        gtk_text_buffer_insert(h->buffer, &a, e->text, -1);
        return e->offset + e->n_chars;
    }
    gtk_text_buffer_get_iter_at_offset(h->buffer, &b, e->offset + e->n_chars);
    gtk_text_buffer_delete(h->buffer, &a, &b);
    return e->offset;
}

/* Moves the last step of from onto to, made (forward) or taken back. */
static gboolean move_step(WriteHistory *h, GPtrArray *from, GPtrArray *to, gboolean forward)
{
    if (!from->len) return FALSE;
    gboolean could_undo = h->undo->len > 0, could_redo = h->redo->len > 0;
    Step *s = g_ptr_array_steal_index(from, from->len - 1);
    int cursor = 0;
    h->suspended++;
    gtk_text_buffer_begin_user_action(h->buffer);
    for (guint i = 0; i < s->edits->len; i++) {
        guint k = forward ? i : s->edits->len - 1 - i;
        cursor = apply(h, g_ptr_array_index(s->edits, k), forward);
    }
    gtk_text_buffer_end_user_action(h->buffer);
    h->suspended--;
    s->sealed = TRUE;
    g_ptr_array_add(to, s);
    GtkTextIter at;
    gtk_text_buffer_get_iter_at_offset(h->buffer, &at, cursor);
    gtk_text_buffer_place_cursor(h->buffer, &at);
    tell(h, could_undo, could_redo);
    return TRUE;
}

gboolean write_history_undo(WriteHistory *h) { return move_step(h, h->undo, h->redo, FALSE); }
gboolean write_history_redo(WriteHistory *h) { return move_step(h, h->redo, h->undo, TRUE); }
