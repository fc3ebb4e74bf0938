/* A 5x7 bitmap font for labels (printable ASCII), drawn at integer scales. */
#ifndef TXLM_PLOT_FONT_H
#define TXLM_PLOT_FONT_H

#include "canvas.h"

/* One character cell at scale 1: 5x7 glyph plus one column and row of space. */
#define PLOT_CHAR_W 6
#define PLOT_CHAR_H 8
/* Titles (of pictures, panels and axes) are drawn twice as large, in
 * black: at scale 1 they were unreadable once a large picture was shown
 * scaled down. Tick numbers and token labels stay at scale 1. */
#define PLOT_TITLE_SCALE 2
#define PLOT_TITLE_H (PLOT_CHAR_H * PLOT_TITLE_SCALE)

/* Width in pixels of the first n bytes of s (n < 0: all of it). */
int plot_text_width(const char *s, int n, int scale);
/* Draws s with its top-left corner at (x, y). Bytes outside printable
 * ASCII are drawn as '?'. */
void plot_text(plot_canvas *c, int x, int y, const char *s, int scale, plot_rgb col);
/* Draws s turned a quarter left (reading upwards), starting at the
 * bottom-left corner (x, y). */
void plot_text_up(plot_canvas *c, int x, int y, const char *s, int scale, plot_rgb col);

#endif
