/* Each word of the document coloured by its surprisal under the model
 * (the bits of information its characters carried, given everything
 * before it: TxlmSession's score_async), on a scale of five steps shown
 * by a legend. The colours follow the document: an edit takes them away
 * and the text is scored again after a pause. */
#ifndef WRITE_SURPRISAL_H
#define WRITE_SURPRISAL_H

#include <gtk/gtk.h>
#include <txlm-glib.h>

#include "write-ghost.h"

G_BEGIN_DECLS

/* One step of the scale: words of from_bits <= surprisal < to_bits. */
typedef struct {
    double from_bits, to_bits;
    const char *background, *foreground; /* "#rrggbb" */
} WriteSurprisalStep;

/* The scale, in order (n: how many steps). */
const WriteSurprisalStep *write_surprisal_scale(guint *n);
/* The step of a surprisal in bits; -1 for NaN (the text's first word,
 * which has no context). */
int write_surprisal_step_of(double bits);

#define WRITE_TYPE_SURPRISAL (write_surprisal_get_type())
G_DECLARE_FINAL_TYPE(WriteSurprisal, write_surprisal, WRITE, SURPRISAL, GObject)

/* Signals: state-changed (scoring started or finished, colours applied
 * or taken away); error (const char *message). */

/* Colours on buffer's text, the document of ghost's. */
WriteSurprisal *write_surprisal_new(GtkTextBuffer *buffer, WriteGhost *ghost);
void write_surprisal_set_session(WriteSurprisal *s, TxlmSession *session);
void write_surprisal_set_enabled(WriteSurprisal *s, gboolean enabled);
gboolean write_surprisal_get_enabled(WriteSurprisal *s);
/* Cancels the scoring (the colours stay away until the next edit). */
void write_surprisal_stop(WriteSurprisal *s);
gboolean write_surprisal_get_running(WriteSurprisal *s);
/* The words coloured now (TxlmWordScore; NULL: none) and the document
 * they were scored as. */
GPtrArray *write_surprisal_get_words(WriteSurprisal *s);
const char *write_surprisal_get_scored_text(WriteSurprisal *s);

/* The legend: the scale's colours with their ranges in bits. */
GtkWidget *write_surprisal_legend_new(void);

G_END_DECLS

#endif
