/* The model txlm-write opens when none is named: the demo model. */
#ifndef WRITE_DEFAULT_MODEL_H
#define WRITE_DEFAULT_MODEL_H

#include <glib.h>

/* The demo model's path (g_free), or NULL when there is none: the
 * source tree's models/demo.txlm for a txlm-write run from its build
 * folder, else the installed one, found from the program's own place
 * (BINDIR/../share/txlm/, so a moved prefix works) or the prefix it was
 * built for. */
char *write_default_model(void);

#endif
