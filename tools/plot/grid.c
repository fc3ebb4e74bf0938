#include "grid.h"

void plot_grid_size(int n, int cols, int pw, int ph, int *w, int *h)
{
    if (cols > n) cols = n;
    if (cols < 1) cols = 1;
    *w = cols * pw > PLOT_MIN_W ? cols * pw : PLOT_MIN_W;
    *h = PLOT_HEADER_H + (n + cols - 1) / cols * ph;
}

void plot_grid_cell(int k, int cols, int pw, int ph, int *x, int *y)
{
    if (cols < 1) cols = 1;
    *x = k % cols * pw;
    *y = PLOT_HEADER_H + k / cols * ph;
}
