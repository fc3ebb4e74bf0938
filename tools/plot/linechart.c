#include "linechart.h"

#include <math.h>
#include <stdio.h>

#include "colormap.h"
#include "font.h"

enum {
    PAD = 6,
    TITLE_H = PLOT_TITLE_H + 6,
    AREA_W = 420,
    AREA_H = 240,
    LEFT = PAD + PLOT_TITLE_H + 4 + 7 * PLOT_CHAR_W + 5,
    BOTTOM = 5 + PLOT_CHAR_H + 4 + PLOT_TITLE_H + PAD,
    LEGEND_W = 16 + 4 + 12 * PLOT_CHAR_W + PAD,
    LEGEND_ROW = PLOT_CHAR_H + 4,
};

void plot_chart_size(int n_series, int *w, int *h)
{
    int legend_h = n_series * LEGEND_ROW;
    *w = LEFT + AREA_W + 12 + LEGEND_W;
    *h = TITLE_H + (legend_h > AREA_H ? legend_h : AREA_H) + BOTTOM;
}

double plot_nice_step(double span, int count)
{
    if (!(span > 0)) return 1;
    double raw = span / count, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

void plot_chart_draw(plot_canvas *c, int x, int y, const plot_chart *ch)
{
    int ax = x + LEFT, ay = y + TITLE_H;
    int xmax = 1;
    double ymax = 0;
    for (int s = 0; s < ch->n_series; s++) {
        if (ch->series[s].n - 1 > xmax) xmax = ch->series[s].n - 1;
        for (int k = 0; k < ch->series[s].n; k++)
            if (ch->series[s].y[k] > ymax) ymax = ch->series[s].y[k];
    }
    double ystep = plot_nice_step(ymax > 0 ? ymax : 1, 5);
    double ytop = ystep * ceil((ymax > 0 ? ymax : 1) / ystep);
    double xstep = plot_nice_step(xmax, 8);
    if (xstep < 1) xstep = 1;
#define PX(v) (ax + (v) * (AREA_W - 1) / (double)xmax)
#define PY(v) (ay + AREA_H - 1 - (v) * (AREA_H - 1) / ytop)

    if (ch->title) plot_text(c, ax, y + PAD / 2, ch->title, PLOT_TITLE_SCALE, PLOT_BLACK);
    char num[32];
    for (double v = 0; v <= ytop + ystep / 2; v += ystep) {
        int py = (int)lround(PY(v));
        plot_rect(c, ax, py, AREA_W, 1, (plot_rgb){230, 230, 230});
        plot_rect(c, ax - 4, py, 4, 1, PLOT_BLACK);
        snprintf(num, sizeof num, "%.3g", v);
        plot_text(c, ax - 6 - plot_text_width(num, -1, 1), py - PLOT_CHAR_H / 2, num, 1, PLOT_BLACK);
    }
    for (double v = 0; v <= xmax + 1e-9; v += xstep) {
        int px = (int)lround(PX(v));
        plot_rect(c, px, ay + AREA_H, 1, 4, PLOT_BLACK);
        snprintf(num, sizeof num, "%.0f", v);
        plot_text(c, px - plot_text_width(num, -1, 1) / 2, ay + AREA_H + 5, num, 1, PLOT_BLACK);
    }
    plot_rect(c, ax, ay, 1, AREA_H, PLOT_BLACK);
    plot_rect(c, ax, ay + AREA_H - 1, AREA_W, 1, PLOT_BLACK);
    if (ch->x_title) {
        int tw = plot_text_width(ch->x_title, -1, PLOT_TITLE_SCALE);
        plot_text(c, ax + (AREA_W - tw) / 2, ay + AREA_H + 5 + PLOT_CHAR_H + 4, ch->x_title, PLOT_TITLE_SCALE, PLOT_BLACK);
    }
    if (ch->y_title) {
        int tw = plot_text_width(ch->y_title, -1, PLOT_TITLE_SCALE);
        plot_text_up(c, x + PAD, ay + (AREA_H + tw) / 2, ch->y_title, PLOT_TITLE_SCALE, PLOT_BLACK);
    }

    for (int s = 0; s < ch->n_series; s++) {
        const plot_series *se = &ch->series[s];
        plot_rgb col = plot_category(s);
        for (int k = 0; k + 1 < se->n; k++) plot_line(c, PX(k), PY(se->y[k]), PX(k + 1), PY(se->y[k + 1]), 2, col);
        if (se->n == 1) plot_rect(c, (int)PX(0) - 1, (int)PY(se->y[0]) - 1, 3, 3, col);
        int ly = ay + s * LEGEND_ROW + LEGEND_ROW / 2, lx = ax + AREA_W + 12;
        plot_rect(c, lx, ly - 1, 16, 3, col);
        plot_text(c, lx + 20, ly - PLOT_CHAR_H / 2, se->name ? se->name : "", 1, PLOT_BLACK);
    }
#undef PX
#undef PY
}
