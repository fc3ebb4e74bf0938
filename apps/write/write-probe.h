/* txlm-write's test hook, on only where the environment variable
 * TXLM_WRITE_PROBE names a folder (tests/display drives the app through
 * its real window with key and mouse events; this only reports):
 *   state.json  rewritten (atomically) at every change: the document, the
 *               ghost and the prompt it continues, whether it is done, the
 *               colours (each word's place, bits and step), where the
 *               surprisal toggle is on the window's surface, and the
 *               longest gap of the main loop while each suggestion was
 *               being generated (a 1 ms timeout source's ticks);
 *   window.png, text.png
 *               the window and its text view, rendered by GTK's own
 *               renderer at the next frame after a SIGUSR1. */
#ifndef WRITE_PROBE_H
#define WRITE_PROBE_H

#include "write-window.h"

void write_probe_attach(WriteWindow *win, const char *dir);

#endif
