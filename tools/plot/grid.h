/* A figure: a header line, then equal panels in rows of `cols`. */
#ifndef TXLM_PLOT_GRID_H
#define TXLM_PLOT_GRID_H

#define PLOT_HEADER_H 24
/* Room for the header line however narrow the panels. */
#define PLOT_MIN_W 320

/* The figure's size for n panels of pw x ph pixels. */
void plot_grid_size(int n, int cols, int pw, int ph, int *w, int *h);
/* Top-left corner of panel k. */
void plot_grid_cell(int k, int cols, int pw, int ph, int *x, int *y);

#endif
