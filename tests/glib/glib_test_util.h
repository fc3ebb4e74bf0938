/* What the txlm-glib tests share: the paths they are given, the txlm
 * command run for the text it gives, main-loop waits, models packed from
 * golden cases. */
#ifndef TXLM_GLIB_TEST_UTIL_H
#define TXLM_GLIB_TEST_UTIL_H

#include <txlm-glib.h>

typedef struct {
    const char *cli;    /* build/tools/txlm */
    const char *pack;   /* build/tools/txlm-pack */
    const char *golden; /* tests/golden */
    const char *demo;   /* models/demo.txlm */
    char *tmp;          /* a folder of the test's own, removed at the end */
} glib_test_paths;

extern glib_test_paths tp;

/* The sampling settings of a generation, for a session and for the command line. */
typedef struct {
    double temperature, top_p, repeat_penalty;
    guint top_k, repeat_last_n;
    const char *stop; /* one stop string or NULL */
} gen_settings;

#define DEFAULT_SETTINGS {1.0, 0.0, 1.0, 0, 64, NULL}

void settings_apply(TxlmSession *s, const gen_settings *g);
/* What `txlm generate -m MODEL -p PROMPT -n N --seed SEED --no-display-prompt`
 * (with g's options) prints, without its final line break. */
char *cli_generate(const char *model, const char *prompt, int n, guint64 seed, const gen_settings *g);
/* What `txlm ARGS...` prints on standard output (NULL-terminated args); exit status 0 asserted. */
char *cli_run(const char *const *args);

/* Runs the thread-default main context until *flag is set. */
void wait_for(const gboolean *flag);
/* A file in the test's folder (owned by the caller). */
char *tmp_path(const char *name);
/* A golden case packed into the test's folder (extra: txlm-pack arguments, NULL-terminated). */
char *pack_golden(const char *name, const char *out, const char *const *extra);

#endif
