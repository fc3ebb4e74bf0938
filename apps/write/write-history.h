/* The writer's undo and redo. GTK's own history (GtkTextBuffer's
 * enable-undo) records every change of the buffer, so the grey ghost
 * text going in and out would become steps of it (undo would bring back
 * a discarded suggestion, untagged), and the only way to keep a change
 * out of it, an irreversible action, clears everything before it. This
 * one records the buffer's changes except while suspended (the ghost's
 * own), and takes an accepted suggestion as one step. */
#ifndef WRITE_HISTORY_H
#define WRITE_HISTORY_H

#include <gtk/gtk.h>

typedef struct _WriteHistory WriteHistory;

/* Called when whether there is something to undo or redo changes. */
typedef void (*WriteHistoryNotify)(gpointer user_data);

/* Records buffer's changes from now on (its handlers of insert-text and
 * delete-range run before the buffer's own: connect what must change the
 * place of an edit before this). Turns GTK's history off. */
WriteHistory *write_history_new(GtkTextBuffer *buffer, WriteHistoryNotify notify, gpointer user_data);
void write_history_free(WriteHistory *h);

/* Changes between suspend and resume (nested) are not recorded. */
void write_history_suspend(WriteHistory *h);
void write_history_resume(WriteHistory *h);

/* text, already in the buffer at offset (characters), as one step of its
 * own (an accepted suggestion: the text did not go in as an edit). */
void write_history_record_insert(WriteHistory *h, int offset, const char *text);

gboolean write_history_can_undo(WriteHistory *h);
gboolean write_history_can_redo(WriteHistory *h);
/* The last step undone (redone), the cursor put where it happened;
 * FALSE when there is none. */
gboolean write_history_undo(WriteHistory *h);
gboolean write_history_redo(WriteHistory *h);

#endif
