#include "canvas.h"

#include <math.h>
#include <stdlib.h>

int plot_canvas_init(plot_canvas *c, int w, int h, plot_rgb bg)
{
    c->w = w, c->h = h;
    c->px = w > 0 && h > 0 ? malloc((size_t)w * h * 3) : NULL;
    if (!c->px) return -1;
    plot_rect(c, 0, 0, w, h, bg);
    return 0;
}

void plot_canvas_free(plot_canvas *c)
{
    free(c->px);
    c->px = NULL;
}

void plot_pixel(plot_canvas *c, int x, int y, plot_rgb col)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h) return;
    uint8_t *p = c->px + ((size_t)y * c->w + x) * 3;
    p[0] = col.r, p[1] = col.g, p[2] = col.b;
}

void plot_rect(plot_canvas *c, int x, int y, int w, int h, plot_rgb col)
{
    int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    int x1 = x + w > c->w ? c->w : x + w, y1 = y + h > c->h ? c->h : y + h;
    for (int yy = y0; yy < y1; yy++)
        for (int xx = x0; xx < x1; xx++) {
            uint8_t *p = c->px + ((size_t)yy * c->w + xx) * 3;
            p[0] = col.r, p[1] = col.g, p[2] = col.b;
        }
}

void plot_frame(plot_canvas *c, int x, int y, int w, int h, plot_rgb col)
{
    plot_rect(c, x, y, w, 1, col);
    plot_rect(c, x, y + h - 1, w, 1, col);
    plot_rect(c, x, y, 1, h, col);
    plot_rect(c, x + w - 1, y, 1, h, col);
}

void plot_line(plot_canvas *c, double x0, double y0, double x1, double y1, int width, plot_rgb col)
{
    /* Steps of at most half a pixel along the longer axis, stamping a
     * square brush: simple, and exact enough for charts. */
    double dx = x1 - x0, dy = y1 - y0, len = fabs(dx) > fabs(dy) ? fabs(dx) : fabs(dy);
    int steps = (int)ceil(len * 2) + 1, lo = -(width - 1) / 2;
    for (int s = 0; s <= steps; s++) {
        double t = (double)s / steps;
        int x = (int)floor(x0 + dx * t + 0.5), y = (int)floor(y0 + dy * t + 0.5);
        plot_rect(c, x + lo, y + lo, width, width, col);
    }
}
