/* An RGB canvas and the shapes the attention pictures are made of. */
#ifndef TXLM_PLOT_CANVAS_H
#define TXLM_PLOT_CANVAS_H

#include <stddef.h>
#include <stdint.h>

typedef struct plot_rgb {
    uint8_t r, g, b;
} plot_rgb;

typedef struct plot_canvas {
    int w, h;
    uint8_t *px; /* w * h * 3, rows top to bottom */
} plot_canvas;

#define PLOT_WHITE ((plot_rgb){255, 255, 255})
#define PLOT_BLACK ((plot_rgb){0, 0, 0})
#define PLOT_GREY ((plot_rgb){128, 128, 128})

/* Returns 0, or -1 when out of memory. */
int plot_canvas_init(plot_canvas *c, int w, int h, plot_rgb bg);
void plot_canvas_free(plot_canvas *c);
/* Everything below clips to the canvas. */
void plot_pixel(plot_canvas *c, int x, int y, plot_rgb col);
void plot_rect(plot_canvas *c, int x, int y, int w, int h, plot_rgb col);
void plot_frame(plot_canvas *c, int x, int y, int w, int h, plot_rgb col);
/* A line of the given width in pixels between two points. */
void plot_line(plot_canvas *c, double x0, double y0, double x1, double y1, int width, plot_rgb col);
/* PNG bytes of the canvas (malloc'd) or NULL when out of memory. */
unsigned char *plot_png_encode(const plot_canvas *c, size_t *len);

#endif
