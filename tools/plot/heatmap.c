#include "heatmap.h"

#include <stdio.h>
#include <string.h>

#include "colormap.h"
#include "font.h"

enum {
    PAD = 6,
    TITLE_H = PLOT_TITLE_H + 6,
    TICK = 3,
    NUM_CHARS = 6,                                   /* tick numbers up to 999999 */
    LEFT = PAD + PLOT_TITLE_H + 2 + NUM_CHARS * PLOT_CHAR_W + TICK + 2,
    BOTTOM = TICK + 2 + PLOT_CHAR_H + 4 + PLOT_TITLE_H + PAD,
    LABEL_PX = PLOT_LABEL_CHARS * PLOT_CHAR_W + 4,
    BAR_GAP = 10,
    BAR_W = 12,
    BAR_TEXT = 4 + 8 * PLOT_CHAR_W,                  /* "-1.2e-05" */
    BAR_MIN_H = 5 * PLOT_CHAR_H,
};

int plot_heatmap_labels_fit(int cell) { return cell >= PLOT_CHAR_H; }

static int top_of(int labels) { return TITLE_H + (labels ? LABEL_PX : 0); }
static int right_of(int labels) { return (labels ? LABEL_PX : 0) + BAR_GAP + BAR_W + BAR_TEXT + PAD; }

void plot_heatmap_size(int rows, int cols, int cell, int labels, int *w, int *h)
{
    int mh = rows * cell;
    *w = LEFT + cols * cell + right_of(labels);
    *h = top_of(labels) + (mh > BAR_MIN_H ? mh : BAR_MIN_H) + BOTTOM;
}

static plot_rgb colour(const plot_heatmap *hm, double v)
{
    double span = hm->hi - hm->lo;
    if (hm->diverging) {
        double m = hm->hi > -hm->lo ? hm->hi : -hm->lo;
        return plot_diverging(m > 0 ? v / m : 0);
    }
    return plot_sequential(span > 0 ? (v - hm->lo) / span : 0);
}

/* Copies at most PLOT_LABEL_CHARS bytes of a label, spaces shown as '_'. */
static void label_text(const char *s, char *out)
{
    size_t n = 0;
    for (; s[n] && n < PLOT_LABEL_CHARS; n++) out[n] = s[n] == ' ' ? '_' : s[n];
    out[n] = 0;
}

static void draw_cells(plot_canvas *c, int hx, int hy, const plot_heatmap *hm)
{
    for (int r = 0; r < hm->rows; r++)
        for (int k = 0; k < hm->cols; k++) {
            size_t i = (size_t)r * hm->cols + k;
            plot_rgb col = hm->masked && hm->masked[i] ? PLOT_MASKED : colour(hm, hm->v[i]);
            plot_rect(c, hx + k * hm->cell, hy + r * hm->cell, hm->cell, hm->cell, col);
        }
    if (hm->split_col > 0 && hm->split_col < hm->cols && hm->cell >= 3)
        plot_rect(c, hx + hm->split_col * hm->cell - 1, hy, 2, hm->rows * hm->cell, PLOT_BLACK);
}

static void draw_ticks(plot_canvas *c, int hx, int hy, const plot_heatmap *hm)
{
    char num[32];
    int mw = hm->cols * hm->cell, mh = hm->rows * hm->cell, tick = hm->tick > 0 ? hm->tick : 1;
    for (int r = 0; r < hm->rows; r++) {
        if ((hm->row0 + r) % tick) continue;
        int yc = hy + r * hm->cell + hm->cell / 2;
        snprintf(num, sizeof num, "%d", hm->row0 + r);
        plot_rect(c, hx - TICK, yc, TICK, 1, PLOT_BLACK);
        plot_text(c, hx - TICK - 2 - plot_text_width(num, -1, 1), yc - PLOT_CHAR_H / 2, num, 1, PLOT_BLACK);
    }
    for (int k = 0; k < hm->cols; k++) {
        if ((hm->col0 + k) % tick) continue;
        int xc = hx + k * hm->cell + hm->cell / 2;
        snprintf(num, sizeof num, "%d", hm->col0 + k);
        plot_rect(c, xc, hy + mh, 1, TICK, PLOT_BLACK);
        plot_text(c, xc - plot_text_width(num, -1, 1) / 2, hy + mh + TICK + 2, num, 1, PLOT_BLACK);
    }
    if (hm->x_title) {
        int tw = plot_text_width(hm->x_title, -1, PLOT_TITLE_SCALE);
        plot_text(c, hx + (mw - tw) / 2, hy + mh + TICK + 2 + PLOT_CHAR_H + 4, hm->x_title, PLOT_TITLE_SCALE, PLOT_BLACK);
    }
    if (hm->y_title) {
        /* Along a short matrix, as many whole words as fit. */
        char t[64];
        snprintf(t, sizeof t, "%s", hm->y_title);
        char *sp;
        while (plot_text_width(t, -1, PLOT_TITLE_SCALE) > mh && (sp = strrchr(t, ' '))) *sp = 0;
        int tw = plot_text_width(t, -1, PLOT_TITLE_SCALE);
        if (tw <= mh) plot_text_up(c, hx - LEFT + PAD, hy + (mh + tw) / 2, t, PLOT_TITLE_SCALE, PLOT_BLACK);
    }
}

static void draw_labels(plot_canvas *c, int hx, int hy, const plot_heatmap *hm)
{
    char text[PLOT_LABEL_CHARS + 1];
    for (int r = 0; hm->row_labels && r < hm->rows; r++) {
        label_text(hm->row_labels[r], text);
        plot_text(c, hx + hm->cols * hm->cell + 4, hy + r * hm->cell + (hm->cell - PLOT_CHAR_H) / 2 + 1, text, 1,
                  PLOT_BLACK);
    }
    for (int k = 0; hm->col_labels && k < hm->cols; k++) {
        label_text(hm->col_labels[k], text);
        plot_text_up(c, hx + k * hm->cell + (hm->cell - PLOT_CHAR_H) / 2 + 1, hy - 4, text, 1, PLOT_BLACK);
    }
}

static void draw_bar(plot_canvas *c, int bx, int by, int bh, const plot_heatmap *hm)
{
    for (int y = 0; y < bh; y++) {
        double v = hm->hi - (hm->hi - hm->lo) * y / (bh > 1 ? bh - 1 : 1);
        plot_rect(c, bx, by + y, BAR_W, 1, colour(hm, v));
    }
    plot_frame(c, bx - 1, by - 1, BAR_W + 2, bh + 2, PLOT_BLACK);
    char num[32];
    for (int k = 0; k < 3; k++) {
        double v = hm->hi - (hm->hi - hm->lo) * k / 2;
        if (v > -1e-12 * (hm->hi - hm->lo) && v < 1e-12 * (hm->hi - hm->lo)) v = 0;
        snprintf(num, sizeof num, "%.3g", v);
        int yc = by + (bh - 1) * k / 2;
        plot_rect(c, bx + BAR_W, yc, 3, 1, PLOT_BLACK);
        int ty = yc - PLOT_CHAR_H / 2;
        if (ty < by - 2) ty = by - 2;
        if (ty > by + bh - PLOT_CHAR_H + 2) ty = by + bh - PLOT_CHAR_H + 2;
        plot_text(c, bx + BAR_W + 5, ty, num, 1, PLOT_BLACK);
    }
}

void plot_heatmap_draw(plot_canvas *c, int x, int y, const plot_heatmap *hm)
{
    int labels = hm->row_labels || hm->col_labels;
    int hx = x + LEFT, hy = y + top_of(labels), mh = hm->rows * hm->cell;
    if (hm->title) plot_text(c, hx, y + PAD / 2, hm->title, PLOT_TITLE_SCALE, PLOT_BLACK);
    draw_cells(c, hx, hy, hm);
    plot_frame(c, hx - 1, hy - 1, hm->cols * hm->cell + 2, mh + 2, PLOT_BLACK);
    draw_ticks(c, hx, hy, hm);
    draw_labels(c, hx, hy, hm);
    int bh = mh > BAR_MIN_H ? mh : BAR_MIN_H;
    draw_bar(c, hx + hm->cols * hm->cell + (labels ? LABEL_PX : 0) + BAR_GAP, hy, bh, hm);
}
