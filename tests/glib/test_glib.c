/* txlm-glib from C with GLib's test framework: errors, devices, loading
 * (on a main loop, its progress notified in order before the result;
 * cancelled through the engine's own callback; missing and damaged
 * files), the UTF-8 of generated text; the sessions' calls are in
 * test_glib_session.c.
 * usage: test_glib PART TXLM TXLM_PACK GOLDEN_DIR DEMO_MODEL, PART the tests
 * run: "generate" (/generate/...), "rest" (the others) or "all". */
#include <glib/gstdio.h>
#include <string.h>

#include "glib_test_util.h"
#include "txlm-utf8-out.h"

void add_session_tests(gboolean generate, gboolean rest);
void end_session_tests(void);

/* ---- errors ------------------------------------------------------------ */

static void test_error_domain(void)
{
    g_assert_cmpstr(g_quark_to_string(TXLM_ERROR), ==, "txlm-error-quark");
    GEnumClass *c = g_type_class_ref(TXLM_TYPE_ERROR);
    /* txlm_status's 13 failure codes, value for value (txlm_status.h) */
    g_assert_cmpuint(c->n_values, ==, 13);
    g_assert_cmpint(c->minimum, ==, 1);
    g_assert_cmpint(c->maximum, ==, 13);
    g_assert_cmpstr(g_enum_get_value(c, 3)->value_nick, ==, "format");
    g_assert_cmpstr(g_enum_get_value(c, 4)->value_nick, ==, "checksum");
    g_assert_cmpstr(g_enum_get_value(c, 13)->value_nick, ==, "nonfinite");
    g_type_class_unref(c);
}

/* ---- devices ----------------------------------------------------------- */

static void on_listed(GObject *source, GAsyncResult *res, gpointer user)
{
    (void)source;
    GError *error = NULL;
    GListModel **out = user;
    *out = txlm_device_list_finish(res, &error);
    g_assert_no_error(error);
}

static void test_devices(void)
{
    GError *error = NULL;
    GListModel *list = txlm_device_list(&error);
    g_assert_no_error(error);
    guint n = g_list_model_get_n_items(list), preferred = 0;
    g_assert_cmpuint(n, >=, 1);
    g_assert_true(g_list_model_get_item_type(list) == TXLM_TYPE_DEVICE);
    for (guint i = 0; i < n; i++) {
        TxlmDevice *d = g_list_model_get_item(list, i);
        g_assert_cmpuint(txlm_device_get_index(d), ==, i);
        g_assert_true(txlm_device_get_name(d)[0]);
        g_assert_true(g_str_has_prefix(txlm_device_get_api_version(d), "1."));
        preferred += txlm_device_get_preferred(d);
        g_object_unref(d);
    }
    g_assert_cmpuint(preferred, ==, 1);
    GListModel *again = NULL;
    txlm_device_list_async(NULL, on_listed, &again);
    while (!again) g_main_context_iteration(NULL, TRUE);
    g_assert_cmpuint(g_list_model_get_n_items(again), ==, n);
    TxlmDevice *a = g_list_model_get_item(list, 0), *b = g_list_model_get_item(again, 0);
    g_assert_cmpstr(txlm_device_get_name(a), ==, txlm_device_get_name(b));
    g_object_unref(a);
    g_object_unref(b);
    g_object_unref(again);
    g_object_unref(list);
}

/* ---- loading ----------------------------------------------------------- */

typedef struct {
    GArray *progress;  /* the values notified, in order */
    gboolean done;     /* the callback ran */
    gboolean late;     /* a notification came after the callback */
    GThread *thread;   /* where notifications and the callback must run */
    GError *error;
    TxlmModel *model;
    GCancellable *cancel_on_first; /* cancelled at the first notification */
} load_rec;

static void on_progress(GObject *object, GParamSpec *pspec, gpointer user)
{
    (void)pspec;
    load_rec *r = user;
    double f = txlm_model_get_progress(TXLM_MODEL(object));
    g_assert_true(g_thread_self() == r->thread);
    r->late |= r->done;
    g_array_append_val(r->progress, f);
    if (r->cancel_on_first) g_cancellable_cancel(r->cancel_on_first);
}

static void on_loaded(GObject *source, GAsyncResult *res, gpointer user)
{
    load_rec *r = user;
    g_assert_true(g_thread_self() == r->thread);
    if (g_async_initable_init_finish(G_ASYNC_INITABLE(source), res, &r->error)) r->model = g_object_ref(TXLM_MODEL(source));
    r->done = TRUE;
}

static void test_load_async_progress(void)
{
    load_rec r = {.progress = g_array_new(FALSE, FALSE, sizeof(double)), .thread = g_thread_self()};
    TxlmModel *m = g_object_new(TXLM_TYPE_MODEL, "path", tp.demo, NULL);
    g_assert_false(txlm_model_get_loaded(m));
    g_signal_connect(m, "notify::progress", G_CALLBACK(on_progress), &r);
    g_async_initable_init_async(G_ASYNC_INITABLE(m), G_PRIORITY_DEFAULT, NULL, on_loaded, &r);
    wait_for(&r.done);
    g_assert_no_error(r.error);
    g_assert_true(r.model == m && txlm_model_get_loaded(m));
    /* a notification a tensor (the demo model has dozens), in order, 1 last, none after the callback */
    g_assert_cmpuint(r.progress->len, >=, 10);
    for (guint i = 1; i < r.progress->len; i++)
        g_assert_cmpfloat(g_array_index(r.progress, double, i), >=, g_array_index(r.progress, double, i - 1));
    g_assert_cmpfloat(g_array_index(r.progress, double, r.progress->len - 1), ==, 1.0);
    g_assert_false(r.late);
    g_assert_nonnull(txlm_model_get_device(m));
    g_assert_cmpuint(txlm_model_get_vocab_size(m), ==, 97);
    g_assert_cmpuint(txlm_model_get_max_memory(m), ==, 128);
    g_assert_cmpuint(txlm_model_get_validation_messages(m), ==, 0);
    g_object_unref(r.model);
    g_object_unref(m);
    g_array_unref(r.progress);
}

/* A model on a device chosen from the list: it runs there. */
static void test_load_on_device(void)
{
    GListModel *list = txlm_device_list(NULL);
    TxlmDevice *d = g_list_model_get_item(list, g_list_model_get_n_items(list) - 1);
    GError *error = NULL;
    TxlmModel *m = g_initable_new(TXLM_TYPE_MODEL, NULL, &error, "path", tp.demo, "device", d, NULL);
    if (!txlm_device_get_supported(d)) {
        g_assert_null(m);
        g_clear_error(&error);
    } else {
        g_assert_no_error(error);
        g_assert_cmpstr(txlm_device_get_name(txlm_model_get_device(m)), ==, txlm_device_get_name(d));
        g_assert_cmpuint(txlm_device_get_index(txlm_model_get_device(m)), ==, txlm_device_get_index(d));
        g_object_unref(m);
    }
    g_object_unref(d);
    g_object_unref(list);
}

typedef struct {
    gboolean done;
    TxlmModel *model;
    GError *error;
} load_result;

static void on_load_finished(GObject *source, GAsyncResult *res, gpointer user)
{
    (void)source;
    load_result *r = user;
    r->model = txlm_model_load_finish(res, &r->error);
    r->done = TRUE;
}

/* txlm_model_load_async (the static call GJS's Txlm.Model.load_async is): the model, or the error. */
static TxlmModel *load_async(const char *path, GCancellable *cancellable, GError **error)
{
    load_result r = {0};
    txlm_model_load_async(path, cancellable, on_load_finished, &r);
    wait_for(&r.done);
    g_propagate_error(error, r.error);
    return r.model;
}

/* A copy of the demo model with 4 bytes of tensor data overwritten, or cut after 1000 bytes. */
static char *damaged_copy(const char *name, gboolean truncate)
{
    char *path = tmp_path(name), *data = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(tp.demo, &data, &len, NULL));
    if (truncate) len = 1000;
    else memset(data + len / 2, 0xff, 4);
    g_assert_true(g_file_set_contents(path, data, (gssize)len, NULL));
    g_free(data);
    return path;
}

static void test_load_errors(void)
{
    GError *error = NULL;
    char *missing = tmp_path("missing.txlm");
    g_assert_null(load_async(missing, NULL, &error));
    g_assert_error(error, TXLM_ERROR, TXLM_ERROR_IO);
    g_assert_nonnull(strstr(error->message, missing));
    g_clear_error(&error);
    g_assert_null(txlm_model_new(missing, NULL, &error));
    g_assert_error(error, TXLM_ERROR, TXLM_ERROR_IO);
    g_clear_error(&error);
    char *damaged = damaged_copy("damaged.txlm", FALSE), *cut = damaged_copy("cut.txlm", TRUE);
    g_assert_null(load_async(damaged, NULL, &error));
    g_assert_error(error, TXLM_ERROR, TXLM_ERROR_CHECKSUM);
    g_assert_nonnull(strstr(error->message, "hash"));
    g_clear_error(&error);
    g_assert_null(txlm_model_new(cut, NULL, &error));
    g_assert_error(error, TXLM_ERROR, TXLM_ERROR_FORMAT);
    g_clear_error(&error);
    g_free(missing);
    g_free(damaged);
    g_free(cut);
}

/* Cancelled at the first progress notification of a synchronous load (on
 * this thread, inside the engine's progress callback): the engine stops at
 * the next tensor. Cancelled before an asynchronous one starts: nothing loads. */
static void test_load_cancel(void)
{
    load_rec r = {.progress = g_array_new(FALSE, FALSE, sizeof(double)), .thread = g_thread_self(),
                  .cancel_on_first = g_cancellable_new()};
    TxlmModel *m = g_object_new(TXLM_TYPE_MODEL, "path", tp.demo, NULL);
    g_signal_connect(m, "notify::progress", G_CALLBACK(on_progress), &r);
    GError *error = NULL;
    g_assert_false(g_initable_init(G_INITABLE(m), r.cancel_on_first, &error));
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    g_clear_error(&error);
    g_assert_cmpuint(r.progress->len, ==, 1); /* stopped at the first tensor after the cancel */
    g_assert_cmpfloat(g_array_index(r.progress, double, 0), <, 1.0);
    g_assert_false(txlm_model_get_loaded(m));
    g_assert_null(txlm_model_create_session(m, &error));
    g_assert_error(error, TXLM_ERROR, TXLM_ERROR_INVALID_ARGUMENT);
    g_clear_error(&error);
    g_object_unref(m);
    GCancellable *c = g_cancellable_new();
    g_cancellable_cancel(c);
    g_assert_null(load_async(tp.demo, c, &error));
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    g_clear_error(&error);
    g_object_unref(c);
    g_object_unref(r.cancel_on_first);
    g_array_unref(r.progress);
}

/* ---- UTF-8 out of bytes ------------------------------------------------- */

/* Byte strings that a byte model could make (ASCII, characters of 2 to 4
 * bytes whole and cut, invalid leads, surrogates, overlongs, NUL), cut into
 * pieces at random: the pieces out, put together, are always
 * g_utf8_make_valid() of the whole, and each piece is valid UTF-8. */
static void test_utf8_out(void)
{
    static const char *const parts[] = {"a",        " ",        "\xc3\xa9",         "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                        "\xc3",     "\xe2\x82", "\xf0\x9f\x98",     "\x80",         "\xbf",
                                        "\xff",     "\xc0\x80", "\xed\xa0\x80",     "\xf4\x90\x80\x80",
                                        "\xe0\x80", "\0",       "\xf8\x88\x80\x80"};
    GRand *rand = g_rand_new_with_seed(7);
    for (int round = 0; round < 2000; round++) {
        GString *in = g_string_new(NULL), *out = g_string_new(NULL);
        int n = g_rand_int_range(rand, 0, 12);
        for (int i = 0; i < n; i++) {
            const char *p = parts[g_rand_int_range(rand, 0, G_N_ELEMENTS(parts))];
            g_string_append_len(in, p, *p ? (gssize)strlen(p) : 1);
        }
        txlm_utf8_out u = {0};
        for (gsize at = 0; at < in->len;) {
            gsize piece = (gsize)g_rand_int_range(rand, 0, 5), take = MIN(in->len - at, piece);
            gsize before = out->len;
            txlm_utf8_out_push(&u, in->str + at, take, out);
            g_assert_true(g_utf8_validate_len(out->str + before, out->len - before, NULL));
            at += take;
        }
        txlm_utf8_out_flush(&u, out);
        char *want = g_utf8_make_valid(in->str, (gssize)in->len);
        g_assert_cmpmem(out->str, out->len, want, strlen(want));
        g_free(want);
        g_string_free(in, TRUE);
        g_string_free(out, TRUE);
    }
    g_rand_free(rand);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (argc != 6 || (strcmp(argv[1], "generate") && strcmp(argv[1], "rest") && strcmp(argv[1], "all"))) {
        g_printerr("usage: %s generate|rest|all TXLM TXLM_PACK GOLDEN_DIR DEMO_MODEL\n", argv[0]);
        return 2;
    }
    gboolean generate = strcmp(argv[1], "rest") != 0, rest = strcmp(argv[1], "generate") != 0;
    tp = (glib_test_paths){argv[2], argv[3], argv[4], argv[5], g_dir_make_tmp("txlm-glib-XXXXXX", NULL)};
    g_assert_nonnull(tp.tmp);
    if (rest) {
        g_test_add_func("/error/domain", test_error_domain);
        g_test_add_func("/devices/list", test_devices);
        g_test_add_func("/model/load-async-progress", test_load_async_progress);
        g_test_add_func("/model/load-on-device", test_load_on_device);
        g_test_add_func("/model/errors", test_load_errors);
        g_test_add_func("/model/cancel", test_load_cancel);
        g_test_add_func("/utf8/pieces", test_utf8_out);
    }
    add_session_tests(generate, rest);
    int rc = g_test_run();
    end_session_tests();
    char *rm[] = {"rm", "-rf", tp.tmp, NULL};
    g_spawn_sync(NULL, rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
    g_free(tp.tmp);
    return rc;
}
