/* The model's suggestion after the cursor, as grey "ghost" text: when the
 * writer pauses (a short timeout after the last edit), the text before
 * the cursor is continued by the model on a worker thread, each token
 * shown as it comes; Tab accepts it, any other key, a click, an edit or a
 * cursor move cancels the generation (GCancellable) and takes it away.
 *
 * The ghost lives in the text buffer (so it wraps and scrolls as text
 * does) under a tag of its own, between two marks; it is never part of
 * the document: not of the prompt, not of what is saved or scored
 * (write_ghost_document_text), not of the undo history. */
#ifndef WRITE_GHOST_H
#define WRITE_GHOST_H

#include <gtk/gtk.h>
#include <txlm-glib.h>

#include "write-history.h"

G_BEGIN_DECLS

#define WRITE_TYPE_GHOST (write_ghost_get_type())
G_DECLARE_FINAL_TYPE(WriteGhost, write_ghost, WRITE, GHOST, GObject)

/* Signals:
 *   document-changed: the document (the buffer without the ghost) changed:
 *     an edit, an accepted suggestion, an undo
 *   state-changed: the ghost's text, or whether a generation runs, changed
 *   error (const char *message): a generation failed */

/* A ghost on view's buffer. Its handlers of the buffer's insert-text and
 * delete-range run first: create the WriteHistory after it. */
WriteGhost *write_ghost_new(GtkTextView *view);
void write_ghost_set_history(WriteGhost *ghost, WriteHistory *history);
/* The session that generates (NULL: none, no suggestions). */
void write_ghost_set_session(WriteGhost *ghost, TxlmSession *session);
/* Each suggestion: n_tokens at most, drawn with seed (the same prompt
 * gives the same suggestion), after pause_ms without an edit. */
void write_ghost_set_options(WriteGhost *ghost, guint64 seed, int n_tokens, guint pause_ms);

/* Tab: the suggestion becomes text (one undo step), the cursor after it.
 * FALSE when there is none. */
gboolean write_ghost_accept(WriteGhost *ghost);
/* Cancels the generation and takes the ghost away. */
void write_ghost_discard(WriteGhost *ghost);
/* Cancels the generation; what is shown stays and can be accepted. */
void write_ghost_stop(WriteGhost *ghost);

/* The suggestion shown (possibly still growing), "" when none. */
char *write_ghost_dup_text(WriteGhost *ghost);
/* The prompt of the suggestion shown or being made (NULL: none). */
const char *write_ghost_get_prompt(WriteGhost *ghost);
gboolean write_ghost_get_running(WriteGhost *ghost);
/* Whether the suggestion shown is finished (its generation returned). */
gboolean write_ghost_get_done(WriteGhost *ghost);

/* The document: the buffer's text without the ghost. */
char *write_ghost_document_text(WriteGhost *ghost);
/* The buffer's offset of the document's character offset. */
int write_ghost_buffer_offset(WriteGhost *ghost, int document_offset);

G_END_DECLS

#endif
