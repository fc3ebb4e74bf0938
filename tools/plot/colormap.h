/* Colour maps: sequential (dark blue-purple to yellow, for probabilities),
 * diverging (blue-white-red, for signed values) and categorical (lines). */
#ifndef TXLM_PLOT_COLORMAP_H
#define TXLM_PLOT_COLORMAP_H

#include "canvas.h"

/* Masked cells: a grey that neither map uses. */
#define PLOT_MASKED ((plot_rgb){200, 200, 200})

/* t in [0, 1] (clamped). */
plot_rgb plot_sequential(double t);
/* t in [-1, 1] (clamped): -1 blue, 0 white, 1 red. */
plot_rgb plot_diverging(double t);
/* The k-th of ten distinct line colours (repeats after ten). */
plot_rgb plot_category(int k);

#endif
