/* One heatmap panel: a title, the matrix as coloured cells, numbered ticks
 * along the left and bottom, optional labels (token strings) along the top
 * and right, and a colour bar with its scale. */
#ifndef TXLM_PLOT_HEATMAP_H
#define TXLM_PLOT_HEATMAP_H

#include "canvas.h"

/* Longest label drawn along an axis, in characters (longer ones are cut). */
#define PLOT_LABEL_CHARS 10

typedef struct plot_heatmap {
    const float *v;               /* [rows, cols] row-major */
    const unsigned char *masked;  /* [rows, cols], 1 = drawn grey, or NULL */
    int rows, cols;
    int cell;                     /* pixels per matrix entry (square) */
    int diverging;                /* blue-white-red, else sequential */
    double lo, hi;                /* the colour scale's range */
    const char *title;
    int row0, col0;               /* numbers of the first row and column on the ticks */
    int tick;                     /* a tick on every number divisible by this */
    const char *const *row_labels; /* one per row, or NULL */
    const char *const *col_labels; /* one per column, or NULL */
    int split_col;                /* a dividing line before this column (0 = none) */
    const char *x_title, *y_title;
} plot_heatmap;

/* Whether one label per cell fits at this cell size. */
int plot_heatmap_labels_fit(int cell);
/* The panel's size in pixels; it depends only on these. */
void plot_heatmap_size(int rows, int cols, int cell, int labels, int *w, int *h);
void plot_heatmap_draw(plot_canvas *c, int x, int y, const plot_heatmap *hm);

#endif
