/* Each asynchronous call on the model holds the application until its
 * callback has run, so the process never ends (its last window closed)
 * with a worker thread still inside the engine. */
#ifndef WRITE_CALLS_H
#define WRITE_CALLS_H

#include <gio/gio.h>

/* Around a call: begin as it starts, end in (or after) its callback.
 * Nothing outside a GApplication (g_application_get_default()). */
void write_call_begin(void);
void write_call_end(void);

#endif
