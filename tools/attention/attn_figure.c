/* The pictures: heatmap grids and the attention-by-distance chart. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "attn.h"
#include "cli.h"
#include "plot/font.h"
#include "plot/grid.h"
#include "plot/heatmap.h"
#include "plot/linechart.h"

/* Large enough to read a handful of tokens, small enough for long segments. */
enum { AUTO_MATRIX_PX = 640, MAX_CELL = 16, LABELLED_UP_TO = 128 };

static const char *const term_names[5] = {"(a) q.k", "(b) q.WR", "(c) u.k", "(d) v.WR", "probabilities"};

void attn_heatmap_layout(uint32_t n_slices, int terms, int grid_cols, uint32_t qlen, uint32_t klen, int cell,
                         attn_layout *l)
{
    uint32_t longest = qlen > klen ? qlen : klen;
    if (cell <= 0) {
        cell = longest ? (int)(AUTO_MATRIX_PX / longest) : 1;
        cell = cell < 1 ? 1 : cell > MAX_CELL ? MAX_CELL : cell;
        /* a short segment gets cells tall enough for its token strings */
        if (longest <= LABELLED_UP_TO && cell < PLOT_CHAR_H) cell = PLOT_CHAR_H;
    }
    l->cell = cell;
    l->labels = plot_heatmap_labels_fit(cell);
    l->panels = (int)n_slices * (terms ? 5 : 1);
    l->cols = grid_cols > 0 ? grid_cols : terms ? 5 : (int)ceil(sqrt((double)l->panels));
    if (l->cols > l->panels) l->cols = l->panels;
    plot_heatmap_size((int)qlen, (int)klen, cell, l->labels, &l->pw, &l->ph);
    plot_grid_size(l->panels, l->cols, l->pw, l->ph, &l->w, &l->h);
}

void attn_distance_layout(uint32_t n_layers, uint32_t n_series, attn_layout *l)
{
    l->cell = 0, l->labels = 0;
    l->panels = (int)n_layers;
    l->cols = (int)ceil(sqrt((double)n_layers));
    plot_chart_size((int)n_series, &l->pw, &l->ph);
    plot_grid_size(l->panels, l->cols, l->pw, l->ph, &l->w, &l->h);
}

static int new_canvas(const attn_layout *l, plot_canvas *c)
{
    if (l->w > 32768 || l->h > 32768 || (double)l->w * l->h > 64e6)
        return cli_error("the picture would be %dx%d pixels: ask for fewer layers or heads, or a smaller --cell", l->w,
                         l->h);
    if (plot_canvas_init(c, l->w, l->h, PLOT_WHITE)) return cli_error("out of memory for a %dx%d picture", l->w, l->h);
    return 0;
}

static void header(plot_canvas *c, const attn_run *r)
{
    const txlm_attention_shape *sh = &r->shape;
    char text[256];
    uint32_t k0 = r->first_query - sh->mlen;
    snprintf(text, sizeof text, "queries %u-%u, keys %u-%u (%u in memory)", r->first_query,
             r->first_query + sh->qlen - 1, k0, k0 + sh->klen - 1, sh->mlen);
    plot_text(c, 6, (PLOT_HEADER_H - PLOT_TITLE_H) / 2, text, PLOT_TITLE_SCALE, PLOT_BLACK);
}

static void slice_name(const attn_slice *s, char *buf, size_t cap)
{
    if (s->head == ATTN_MEAN)
        snprintf(buf, cap, "layer %u mean of heads", s->layer);
    else
        snprintf(buf, cap, "layer %u head %d", s->layer, s->head);
}

static float max_unmasked(const float *v, const unsigned char *masked, size_t n, int absolute)
{
    float m = 0;
    for (size_t e = 0; e < n; e++) {
        float x = absolute ? fabsf(v[e]) : v[e];
        if (!masked[e] && x > m) m = x;
    }
    return m;
}

/* The smallest round step whose numbers do not collide along the x axis. */
static int auto_tick(const attn_run *r, int cell)
{
    char num[16];
    int w = snprintf(num, sizeof num, "%u", r->first_query + r->shape.qlen) * PLOT_CHAR_W + PLOT_CHAR_W;
    static const int steps[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000};
    for (size_t k = 0; k < sizeof steps / sizeof *steps; k++)
        if (steps[k] * cell >= w) return steps[k];
    return 10000;
}

int attn_draw_heatmaps(const attn_run *r, const attn_slice *s, uint32_t n, const attn_figure_opts *o, plot_canvas *c)
{
    const txlm_attention_shape *sh = &r->shape;
    attn_layout l;
    attn_heatmap_layout(n, o->terms, o->grid_cols, sh->qlen, sh->klen, o->cell, &l);
    if (new_canvas(&l, c)) return 1;
    header(c, r);
    size_t mat = (size_t)sh->qlen * sh->klen;
    float pmax = 0;
    for (uint32_t k = 0; k < n; k++) {
        float m = max_unmasked(s[k].m[4], r->masked, mat, 0);
        if (m > pmax) pmax = m;
    }
    plot_heatmap hm = {
        .rows = (int)sh->qlen, .cols = (int)sh->klen, .cell = l.cell, .masked = r->masked,
        .row0 = (int)r->first_query, .col0 = (int)(r->first_query - sh->mlen),
        .tick = o->tick > 0 ? o->tick : auto_tick(r, l.cell), .split_col = (int)sh->mlen,
        .row_labels = l.labels ? (const char *const *)r->key_labels + sh->mlen : NULL,
        .col_labels = l.labels ? (const char *const *)r->key_labels : NULL,
        .x_title = "key position", .y_title = "query position",
    };
    char title[96], name[64];
    for (uint32_t k = 0, p = 0; k < n; k++) {
        slice_name(&s[k], name, sizeof name);
        /* One signed scale for a slice's four terms, so they compare. */
        float tmax = 0;
        for (int t = 0; o->terms && t < 4; t++) {
            float m = max_unmasked(s[k].m[t], r->masked, mat, 1);
            if (m > tmax) tmax = m;
        }
        for (int t = o->terms ? 0 : 4; t < 5; t++, p++) {
            int x, y;
            plot_grid_cell((int)p, l.cols, l.pw, l.ph, &x, &y);
            hm.v = s[k].m[t];
            hm.diverging = t < 4;
            hm.lo = t < 4 ? -tmax : 0;
            hm.hi = t < 4 ? tmax : pmax;
            if (o->terms)
                snprintf(title, sizeof title, "%s %s", name, term_names[t]);
            else
                snprintf(title, sizeof title, "%s", name);
            hm.title = title;
            plot_heatmap_draw(c, x, y, &hm);
        }
    }
    return 0;
}

int attn_by_distance(const float *probs, const unsigned char *masked, uint32_t qlen, uint32_t mlen, float *curve)
{
    uint32_t klen = mlen + qlen;
    int seen = 0;
    for (uint32_t d = 0; d < klen; d++) {
        double sum = 0;
        uint32_t count = 0;
        for (uint32_t i = 0; i < qlen; i++) {
            if (mlen + i < d) continue; /* no key that far back */
            size_t e = (size_t)i * klen + (mlen + i - d);
            if (masked[e]) continue;
            sum += probs[e];
            count++;
        }
        curve[d] = count ? (float)(sum / count) : 0;
        if (count) seen = (int)d + 1;
    }
    return seen;
}

int attn_draw_distance(const attn_run *r, const attn_slice *s, uint32_t n, plot_canvas *c)
{
    const txlm_attention_shape *sh = &r->shape;
    uint32_t n_layers = 0, per_layer = 0;
    for (uint32_t k = 0; k < n; k++) n_layers += k == 0 || s[k].layer != s[k - 1].layer;
    per_layer = n / n_layers;
    attn_layout l;
    attn_distance_layout(n_layers, per_layer, &l);
    float *curves = malloc((size_t)n * sh->klen * sizeof *curves);
    plot_series *series = malloc(per_layer * sizeof *series);
    char(*names)[32] = malloc(per_layer * sizeof *names);
    int rc = !curves || !series || !names ? cli_error("out of memory") : new_canvas(&l, c);
    if (!rc) header(c, r);
    char title[64];
    for (uint32_t g = 0; !rc && g < n_layers; g++) {
        for (uint32_t k = 0; k < per_layer; k++) {
            const attn_slice *sl = &s[g * per_layer + k];
            float *curve = curves + (size_t)(g * per_layer + k) * sh->klen;
            int seen = attn_by_distance(sl->m[4], r->masked, sh->qlen, sh->mlen, curve);
            if (sl->head == ATTN_MEAN)
                snprintf(names[k], sizeof names[k], "mean");
            else
                snprintf(names[k], sizeof names[k], "head %d", sl->head);
            series[k] = (plot_series){curve, seen, names[k]};
        }
        snprintf(title, sizeof title, "layer %u", s[g * per_layer].layer);
        plot_chart ch = {series, (int)per_layer, title, "distance (query position - key position)",
                         "mean probability"};
        int x, y;
        plot_grid_cell((int)g, l.cols, l.pw, l.ph, &x, &y);
        plot_chart_draw(c, x, y, &ch);
    }
    free(curves);
    free(series);
    free(names);
    return rc;
}
