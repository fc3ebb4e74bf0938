/* One line-chart panel: a title, axes with numbered ticks, one line per
 * series in its own colour, and a legend to the right. */
#ifndef TXLM_PLOT_LINECHART_H
#define TXLM_PLOT_LINECHART_H

#include "canvas.h"

typedef struct plot_series {
    const float *y; /* y[k] is drawn at x = k */
    int n;
    const char *name;
} plot_series;

typedef struct plot_chart {
    const plot_series *series;
    int n_series;
    const char *title, *x_title, *y_title;
} plot_chart;

/* The panel's size in pixels; it depends only on the number of series. */
void plot_chart_size(int n_series, int *w, int *h);
void plot_chart_draw(plot_canvas *c, int x, int y, const plot_chart *ch);
/* A round step (1, 2 or 5 times a power of ten) giving about `count` steps over span. */
double plot_nice_step(double span, int count);

#endif
