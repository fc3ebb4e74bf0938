/* The txlm-glib tests' shared pieces (glib_test_util.h). */
#include "glib_test_util.h"

glib_test_paths tp;

void settings_apply(TxlmSession *s, const gen_settings *g)
{
    const char *stops[] = {g->stop, NULL};
    g_object_set(s, "temperature", g->temperature, "top-k", g->top_k, "top-p", g->top_p, "repeat-penalty",
                 g->repeat_penalty, "repeat-last-n", g->repeat_last_n, NULL);
    txlm_session_set_stop_strings(s, g->stop ? stops : NULL);
}

char *cli_run(const char *const *args)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (char *)tp.cli);
    for (const char *const *a = args; *a; a++) g_ptr_array_add(argv, (char *)*a);
    g_ptr_array_add(argv, NULL);
    char *out = NULL, *err = NULL;
    int status = 0;
    GError *error = NULL;
    gboolean ok = g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error);
    g_assert_no_error(error);
    g_assert_true(ok);
    if (!g_spawn_check_wait_status(status, NULL)) g_error("txlm failed: %s", err);
    g_free(err);
    g_ptr_array_free(argv, TRUE);
    return out;
}

char *cli_generate(const char *model, const char *prompt, int n, guint64 seed, const gen_settings *g)
{
    char ns[32], seeds[32], temp[G_ASCII_DTOSTR_BUF_SIZE], topk[32], topp[G_ASCII_DTOSTR_BUF_SIZE],
        pen[G_ASCII_DTOSTR_BUF_SIZE], last[32];
    g_snprintf(ns, sizeof ns, "%d", n);
    g_snprintf(seeds, sizeof seeds, "%" G_GUINT64_FORMAT, seed);
    g_ascii_dtostr(temp, sizeof temp, g->temperature);
    g_snprintf(topk, sizeof topk, "%u", g->top_k);
    g_ascii_dtostr(topp, sizeof topp, g->top_p);
    g_ascii_dtostr(pen, sizeof pen, g->repeat_penalty);
    g_snprintf(last, sizeof last, "%u", g->repeat_last_n);
    const char *args[32] = {"generate", "-m", model, "-p", prompt, "-n", ns, "--seed", seeds, "--no-display-prompt",
                            "--temperature", temp, "--top-k", topk, "--repeat-penalty", pen, "--repeat-last-n", last};
    int k = 18;
    if (g->top_p > 0) args[k++] = "--top-p", args[k++] = topp; /* (the command line takes (0, 1]; 0 is off) */
    if (g->stop) args[k++] = "--stop", args[k++] = g->stop;
    args[k] = NULL;
    char *out = cli_run(args);
    size_t len = strlen(out);
    g_assert_true(len > 0 && out[len - 1] == '\n'); /* the command ends its text with a line break */
    out[len - 1] = 0;
    return out;
}

void wait_for(const gboolean *flag)
{
    while (!*flag) g_main_context_iteration(NULL, TRUE);
}

char *tmp_path(const char *name) { return g_build_filename(tp.tmp, name, NULL); }

char *pack_golden(const char *name, const char *out, const char *const *extra)
{
    char *dir = g_build_filename(tp.golden, name, NULL), *path = tmp_path(out);
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (char *)tp.pack);
    g_ptr_array_add(argv, dir);
    g_ptr_array_add(argv, "-o");
    g_ptr_array_add(argv, path);
    for (const char *const *a = extra; a && *a; a++) g_ptr_array_add(argv, (char *)*a);
    g_ptr_array_add(argv, NULL);
    int status = 0;
    char *err = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                               &status, NULL));
    if (!g_spawn_check_wait_status(status, NULL)) g_error("txlm-pack failed: %s", err);
    g_free(err);
    g_ptr_array_free(argv, TRUE);
    g_free(dir);
    return path;
}
