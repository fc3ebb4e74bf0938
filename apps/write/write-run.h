/* One asynchronous call of the suggestions or of the colours on their
 * session: its GCancellable, the text it was given, a reference to its
 * owner, and the application held (write-calls.h), all until its callback
 * frees it. Its owner forgets it once cancelled (write_run_cancel): the
 * callback of a call no longer its owner's current one only frees it. */
#ifndef WRITE_RUN_H
#define WRITE_RUN_H

#include <gio/gio.h>

typedef struct {
    GObject *owner;
    GCancellable *cancel;
    char *text;      /* the prompt, the text scored */
    guint64 version; /* of the document it was given (the owner's count) */
} WriteRun;

/* A run for owner (a ref is taken) of text (taken). */
WriteRun *write_run_new(gpointer owner, char *text, guint64 version);
void write_run_free(WriteRun *run);
/* Cancels *run, if any, and sets it to NULL. */
void write_run_cancel(WriteRun **run);

#endif
