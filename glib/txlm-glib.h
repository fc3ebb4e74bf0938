/* txlm-glib: txlm as GObjects, for desktop programs and, through GObject
 * Introspection (the Txlm-1.0 namespace), for JavaScript (GJS), Python
 * (PyGObject), Vala and Rust.
 *
 * Every call that can take longer than a frame has a GIO-style pair,
 * _async and _finish: the work runs on a worker thread, its result and
 * every signal and property notification it causes arrive on the
 * thread-default main context of the thread that started it, and a
 * GCancellable stops it at the engine's next safe point. Each also has a
 * synchronous version for scripts (a constructor, or a _sync method).
 * docs/embedding.md explains the threads, lifetimes and cancelling. */
#ifndef TXLM_GLIB_H
#define TXLM_GLIB_H

#define TXLM_GLIB_INSIDE
#include "txlm-glib-macros.h"
#include "txlm-error.h"
#include "txlm-device.h"
#include "txlm-model.h"
#include "txlm-session.h"
#include "txlm-word-score.h"
#undef TXLM_GLIB_INSIDE

#endif
