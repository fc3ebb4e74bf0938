/* The test hook: state as JSON, screenshots on a signal, the main loop's
 * gaps while a suggestion is generated. */
#include <errno.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <time.h>

#include "write-probe.h"

/* The main loop's ticks over a phase (times in µs). */
enum { N_THRESHOLDS = 5 };
typedef struct {
    gint64 begin, last, duration, max_gap;
    gint64 last_cpu, max_busy; /* the main thread's CPU time: at the last tick, most between two */
    guint ticks;
    guint over[N_THRESHOLDS]; /* gaps longer than each threshold */
} GapMeter;

typedef enum { PHASE_QUIET, PHASE_GENERATING, PHASE_OTHER } Phase;

typedef struct {
    WriteWindow *win; /* the probe goes with the window */
    WriteGhost *ghost;
    WriteSurprisal *surprisal;
    char *dir;
    GAsyncQueue *states; /* JSON texts for the writer thread */
    GThread *writer;
    guint64 seq;
    guint generations; /* started */
    Phase phase;
    GapMeter generation, all_generations, quiet;
    guint tick_source;
    GString *gaps_json; /* one object per generation measured */
    guint screenshots;
    GdkFrameClock *clock; /* (a ref) while after_paint is connected */
    gulong after_paint;
    guint shot_source;
    guint signal_source;
} Probe;

static void meter_json(GString *out, const GapMeter *m);

static void json_string(GString *out, const char *s)
{
    if (!s) {
        g_string_append(out, "null");
        return;
    }
    g_string_append_c(out, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') g_string_append_printf(out, "\\%c", *p);
        else if (*p < 0x20) g_string_append_printf(out, "\\u%04x", *p);
        else g_string_append_c(out, (char)*p);
    }
    g_string_append_c(out, '"');
}

static void json_number(GString *out, double v)
{
    if (isfinite(v)) g_string_append_printf(out, "%.6g", v);
    else g_string_append(out, "null");
}

/* Where widget is on the window's surface (what xdotool's coordinates
 * relative to the window are): [x, y, width, height]. */
static void json_bounds(GString *out, WriteWindow *win, GtkWidget *widget)
{
    graphene_rect_t b;
    double sx = 0, sy = 0;
    if (!gtk_widget_get_mapped(widget) || !gtk_widget_compute_bounds(widget, GTK_WIDGET(win), &b)) {
        g_string_append(out, "null");
        return;
    }
    gtk_native_get_surface_transform(GTK_NATIVE(win), &sx, &sy);
    g_string_append_printf(out, "[%.1f, %.1f, %.1f, %.1f]", b.origin.x + sx, b.origin.y + sy, b.size.width,
                           b.size.height);
}

static void json_words(GString *out, WriteSurprisal *s)
{
    GPtrArray *words = write_surprisal_get_words(s);
    g_string_append_c(out, '[');
    for (guint i = 0; words && i < words->len; i++) {
        TxlmWordScore *w = g_ptr_array_index(words, i);
        double bits = txlm_word_score_get_surprisal(w);
        g_string_append_printf(out, "%s[%ld, %ld, ", i ? ", " : "", txlm_word_score_get_char_begin(w),
                               txlm_word_score_get_char_end(w));
        json_number(out, bits);
        g_string_append_printf(out, ", %d]", write_surprisal_step_of(bits));
    }
    g_string_append_c(out, ']');
}

static void json_scale(GString *out)
{
    guint n;
    const WriteSurprisalStep *scale = write_surprisal_scale(&n);
    g_string_append_c(out, '[');
    for (guint i = 0; i < n; i++) {
        g_string_append_printf(out, "%s{\"from_bits\": ", i ? ", " : "");
        json_number(out, scale[i].from_bits);
        g_string_append(out, ", \"to_bits\": ");
        json_number(out, scale[i].to_bits);
        g_string_append_printf(out, ", \"background\": \"%s\"}", scale[i].background);
    }
    g_string_append_c(out, ']');
}

static void write_state(Probe *p)
{
    WriteWindow *win = p->win;
    WriteGhost *ghost = write_window_get_ghost(win);
    WriteSurprisal *sur = write_window_get_surprisal(win);
    TxlmModel *model = write_window_get_model(win);
    GString *j = g_string_new(NULL);
    g_string_append_printf(j, "{\"seq\": %" G_GUINT64_FORMAT ",\n \"loaded\": %s, \"loading\": %s,\n \"model\": ",
                           ++p->seq, model ? "true" : "false", write_window_get_loading(win) ? "true" : "false");
    json_string(j, model ? txlm_model_get_path(model) : NULL);
    g_string_append(j, ", \"device\": ");
    json_string(j, model ? txlm_device_get_name(txlm_model_get_device(model)) : NULL);
    g_string_append_printf(j, ", \"session_create_ms\": %.3f, \"validation_messages\": %" G_GUINT64_FORMAT
                              ",\n \"message\": ",
                           write_window_get_session_create_us(win) / 1000.0,
                           model ? txlm_model_get_validation_messages(model) : 0);
    json_string(j, write_window_get_message(win));
    GskRenderer *renderer = gtk_native_get_renderer(GTK_NATIVE(win));
    g_string_append(j, ", \"renderer\": ");
    json_string(j, renderer ? G_OBJECT_TYPE_NAME(renderer) : NULL);
    char *doc = write_ghost_document_text(ghost), *text = write_ghost_dup_text(ghost);
    g_string_append(j, ",\n \"document\": ");
    json_string(j, doc);
    g_string_append(j, ",\n \"ghost\": ");
    json_string(j, text);
    g_string_append(j, ", \"ghost_prompt\": ");
    json_string(j, write_ghost_get_prompt(ghost));
    g_string_append_printf(j, ", \"ghost_running\": %s, \"ghost_done\": %s, \"generations\": %u,\n",
                           write_ghost_get_running(ghost) ? "true" : "false",
                           write_ghost_get_done(ghost) ? "true" : "false", p->generations);
    g_free(doc);
    g_free(text);
    g_string_append_printf(j, " \"surprisal\": {\"enabled\": %s, \"running\": %s, \"scored_text\": ",
                           write_surprisal_get_enabled(sur) ? "true" : "false",
                           write_surprisal_get_running(sur) ? "true" : "false");
    json_string(j, write_surprisal_get_scored_text(sur));
    g_string_append(j, ",\n   \"words\": ");
    json_words(j, sur);
    g_string_append(j, ",\n   \"scale\": ");
    json_scale(j);
    g_string_append(j, "},\n \"toggle\": ");
    json_bounds(j, win, write_window_get_surprisal_toggle(win));
    g_string_append(j, ", \"text_view\": ");
    json_bounds(j, win, GTK_WIDGET(write_window_get_view(win)));
    g_string_append(j, ",\n \"main_loop\": {\"generating\": ");
    meter_json(j, &p->all_generations);
    g_string_append(j, ",\n   \"quiet\": ");
    meter_json(j, &p->quiet);
    g_string_append_printf(j, ",\n   \"generations\": [%s]},\n", p->gaps_json->str);
    g_string_append_printf(j, " \"screenshots\": %u}\n", p->screenshots);
    /* to the writer thread: the main loop it measures never waits on the disk */
    g_async_queue_push(p->states, g_string_free(j, FALSE));
}

static char stop_writer; /* its address: the writer's last item */

/* The writer thread: the latest state of those queued, written beside
 * and renamed (a reader never sees half of it). */
static gpointer writer(gpointer user)
{
    Probe *p = user;
    char *path = g_build_filename(p->dir, "state.json", NULL), *part = g_strconcat(path, ".part", NULL);
    for (gboolean done = FALSE; !done;) {
        char *state = g_async_queue_pop(p->states), *next;
        while ((next = g_async_queue_try_pop(p->states))) {
            if (state != &stop_writer) g_free(state);
            state = next;
        }
        if (state == &stop_writer) break;
        GError *error = NULL;
        if (!g_file_set_contents_full(part, state, -1, G_FILE_SET_CONTENTS_NONE, 0644, &error) ||
            g_rename(part, path) != 0) {
            g_printerr("txlm-write probe: state.json: %s\n", error ? error->message : g_strerror(errno));
            g_clear_error(&error);
        }
        g_free(state);
    }
    g_free(part);
    g_free(path);
    return NULL;
}

/* ---- the main loop's gaps ------------------------------------------------------ */

/* A 1 ms timeout source at the default priority (that of the calls'
 * results and tokens) ticks all along; each gap between two ticks counts
 * to the phase the app was in: generating a suggestion, or quiet (no
 * call running at all: the machine's own noise, to compare with). */
static const double thresholds_ms[N_THRESHOLDS] = {4, 8, 16.667, 33.333, 100};

/* The CPU time of the calling thread (the main thread's, here), in µs: a
 * long gap in which it barely advanced was the machine's other threads
 * running, not work of the app's main loop. */
static gint64 thread_cpu_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (gint64)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static void meter_start(GapMeter *m, gint64 now)
{
    m->last = now;
    m->last_cpu = thread_cpu_us();
    if (!m->begin) m->begin = now;
}

static void meter_tick(GapMeter *m, gint64 now)
{
    gint64 gap = now - m->last, cpu = thread_cpu_us();
    m->max_gap = MAX(m->max_gap, gap);
    m->max_busy = MAX(m->max_busy, cpu - m->last_cpu);
    m->last_cpu = cpu;
    for (int i = 0; i < N_THRESHOLDS; i++)
        if (gap > thresholds_ms[i] * 1000) m->over[i]++;
    m->ticks++;
    m->duration += gap;
    m->last = now;
}

static void meter_json(GString *out, const GapMeter *m)
{
    g_string_append_printf(out,
                           "{\"duration_ms\": %.3f, \"ticks\": %u, \"max_gap_ms\": %.3f, \"max_busy_ms\": %.3f, "
                           "\"gaps_over_ms\": {",
                           m->duration / 1000.0, m->ticks, m->max_gap / 1000.0, m->max_busy / 1000.0);
    for (int i = 0; i < N_THRESHOLDS; i++)
        g_string_append_printf(out, "%s\"%g\": %u", i ? ", " : "", thresholds_ms[i], m->over[i]);
    g_string_append(out, "}}");
}

static Phase phase_now(Probe *p)
{
    if (write_ghost_get_running(p->ghost)) return PHASE_GENERATING;
    if (write_surprisal_get_running(p->surprisal) || write_window_get_loading(p->win)) return PHASE_OTHER;
    return PHASE_QUIET;
}

static GapMeter *meter_of(Probe *p, Phase phase)
{
    return phase == PHASE_GENERATING ? &p->generation : phase == PHASE_QUIET ? &p->quiet : NULL;
}

static gboolean on_tick(gpointer user)
{
    Probe *p = user;
    GapMeter *m = meter_of(p, p->phase);
    if (m) meter_tick(m, g_get_monotonic_time());
    return G_SOURCE_CONTINUE;
}

/* The phase may have changed: the gap so far counts to the one it was. */
static void follow_phase(Probe *p)
{
    Phase phase = phase_now(p);
    if (phase == p->phase) return;
    gint64 now = g_get_monotonic_time();
    GapMeter *was = meter_of(p, p->phase);
    if (was) meter_tick(was, now);
    if (p->phase == PHASE_GENERATING) {
        /* one generation done: its own figures, and the sum over all */
        char *ghost = write_ghost_dup_text(p->ghost);
        g_string_append_printf(p->gaps_json, "%s{\"chars\": %ld, \"gaps\": ", p->gaps_json->len ? ", " : "",
                               g_utf8_strlen(ghost, -1));
        meter_json(p->gaps_json, &p->generation);
        g_string_append_c(p->gaps_json, '}');
        g_free(ghost);
        p->all_generations.duration += p->generation.duration;
        p->all_generations.ticks += p->generation.ticks;
        p->all_generations.max_gap = MAX(p->all_generations.max_gap, p->generation.max_gap);
        p->all_generations.max_busy = MAX(p->all_generations.max_busy, p->generation.max_busy);
        for (int i = 0; i < N_THRESHOLDS; i++) p->all_generations.over[i] += p->generation.over[i];
    }
    if (phase == PHASE_GENERATING) {
        p->generations++;
        p->generation = (GapMeter){0};
    }
    p->phase = phase;
    GapMeter *m = meter_of(p, phase);
    if (m) meter_start(m, now);
}

static void on_changed(gpointer object, gpointer user)
{
    (void)object;
    Probe *p = user;
    follow_phase(p);
    write_state(p);
}

/* ---- screenshots ------------------------------------------------------------ */

/* widget as GTK draws it, through the window's own renderer, to a PNG
 * (written beside and renamed: a reader never sees half of it). */
static gboolean save_png(GtkWidget *widget, const char *dir, const char *name)
{
    GdkPaintable *paintable = gtk_widget_paintable_new(widget);
    int w = gdk_paintable_get_intrinsic_width(paintable), h = gdk_paintable_get_intrinsic_height(paintable);
    GtkSnapshot *snapshot = gtk_snapshot_new();
    gdk_paintable_snapshot(paintable, snapshot, w, h);
    GskRenderNode *node = gtk_snapshot_free_to_node(snapshot);
    gboolean ok = FALSE;
    if (node && w > 0 && h > 0) {
        GskRenderer *renderer = gtk_native_get_renderer(gtk_widget_get_native(widget));
        GdkTexture *texture = gsk_renderer_render_texture(renderer, node, &GRAPHENE_RECT_INIT(0, 0, w, h));
        char *path = g_build_filename(dir, name, NULL), *part = g_strconcat(path, ".part", NULL);
        ok = gdk_texture_save_to_png(texture, part) && g_rename(part, path) == 0;
        g_free(part);
        g_free(path);
        g_object_unref(texture);
    }
    if (node) gsk_render_node_unref(node);
    g_object_unref(paintable);
    return ok;
}

static gboolean take_screenshots(gpointer user)
{
    Probe *p = user;
    p->shot_source = 0;
    GtkWidget *win = GTK_WIDGET(p->win);
    if (save_png(win, p->dir, "window.png") && save_png(GTK_WIDGET(write_window_get_view(p->win)), p->dir, "text.png"))
        p->screenshots++;
    else
        g_printerr("txlm-write probe: the screenshot could not be taken\n");
    write_state(p);
    return G_SOURCE_REMOVE;
}

static void on_after_paint(GdkFrameClock *clock, gpointer user)
{
    Probe *p = user;
    g_clear_signal_handler(&p->after_paint, clock);
    g_clear_object(&p->clock);
    if (!p->shot_source) p->shot_source = g_idle_add(take_screenshots, p);
}

/* SIGUSR1: screenshots once the next frame is painted (what is on the
 * screen then, layout and colours included). */
static gboolean on_signal(gpointer user)
{
    Probe *p = user;
    GdkFrameClock *clock = gtk_widget_get_frame_clock(GTK_WIDGET(p->win));
    if (clock && !p->after_paint) {
        p->clock = g_object_ref(clock);
        p->after_paint = g_signal_connect(clock, "after-paint", G_CALLBACK(on_after_paint), p);
        gtk_widget_queue_draw(GTK_WIDGET(p->win));
    }
    return G_SOURCE_CONTINUE;
}

/* ---- attaching ------------------------------------------------------------- */

static void on_destroy(GtkWidget *widget, gpointer user);

static void probe_free(gpointer data)
{
    Probe *p = data;
    on_destroy(NULL, p);
    g_async_queue_push(p->states, &stop_writer);
    g_thread_join(p->writer);
    g_async_queue_unref(p->states);
    g_string_free(p->gaps_json, TRUE);
    g_free(p->dir);
    g_free(p);
}

static void on_map(GtkWidget *widget, gpointer user)
{
    (void)widget;
    write_state(user);
}

/* The window is going (its ghost and colours may live on until their
 * calls return): nothing more is reported. */
static void on_destroy(GtkWidget *widget, gpointer user)
{
    (void)widget;
    Probe *p = user;
    if (p->ghost) g_signal_handlers_disconnect_by_data(p->ghost, p);
    if (p->surprisal) g_signal_handlers_disconnect_by_data(p->surprisal, p);
    g_clear_object(&p->ghost);
    g_clear_object(&p->surprisal);
    g_clear_handle_id(&p->tick_source, g_source_remove);
    g_clear_handle_id(&p->signal_source, g_source_remove);
    g_clear_handle_id(&p->shot_source, g_source_remove);
    if (p->clock) g_clear_signal_handler(&p->after_paint, p->clock);
    g_clear_object(&p->clock);
}

void write_probe_attach(WriteWindow *win, const char *dir)
{
    Probe *p = g_new0(Probe, 1);
    p->win = win;
    p->dir = g_strdup(dir);
    p->gaps_json = g_string_new(NULL);
    p->states = g_async_queue_new();
    p->writer = g_thread_new("probe-writer", writer, p);
    g_object_set_data_full(G_OBJECT(win), "write-probe", p, probe_free);
    p->ghost = g_object_ref(write_window_get_ghost(win));
    p->surprisal = g_object_ref(write_window_get_surprisal(win));
    g_signal_connect(p->ghost, "state-changed", G_CALLBACK(on_changed), p);
    g_signal_connect(p->ghost, "document-changed", G_CALLBACK(on_changed), p);
    g_signal_connect(p->surprisal, "state-changed", G_CALLBACK(on_changed), p);
    g_signal_connect(win, "state-changed", G_CALLBACK(on_changed), p);
    g_signal_connect_after(win, "map", G_CALLBACK(on_map), p);
    g_signal_connect(win, "destroy", G_CALLBACK(on_destroy), p);
    p->signal_source = g_unix_signal_add(SIGUSR1, on_signal, p);
    p->phase = PHASE_OTHER;
    follow_phase(p);
    p->tick_source = g_timeout_add_full(G_PRIORITY_DEFAULT, 1, on_tick, p, NULL);
    write_state(p);
}
