#include "colormap.h"

#include <math.h>

/* Linear interpolation between n evenly spaced stops, t in [0, 1]. */
static plot_rgb ramp(const plot_rgb *stops, int n, double t)
{
    if (!(t > 0)) t = 0; /* also catches NaN */
    if (t > 1) t = 1;
    double x = t * (n - 1);
    int i = (int)floor(x);
    if (i >= n - 1) return stops[n - 1];
    double f = x - i;
    plot_rgb a = stops[i], b = stops[i + 1];
    return (plot_rgb){(uint8_t)lround(a.r + (b.r - a.r) * f), (uint8_t)lround(a.g + (b.g - a.g) * f),
                      (uint8_t)lround(a.b + (b.b - a.b) * f)};
}

/* Lightness rises steadily from the first stop to the last, so the order
 * of values survives printing in grey. */
plot_rgb plot_sequential(double t)
{
    static const plot_rgb stops[] = {
        {68, 1, 84},    {71, 44, 122},  {59, 81, 139},  {44, 113, 142},  {33, 144, 141},
        {39, 173, 129}, {92, 200, 99},  {170, 220, 50}, {253, 231, 37},
    };
    return ramp(stops, (int)(sizeof stops / sizeof *stops), t);
}

plot_rgb plot_diverging(double t)
{
    static const plot_rgb stops[] = {
        {33, 102, 172}, {103, 169, 207}, {247, 247, 247}, {239, 138, 98}, {178, 24, 43},
    };
    return ramp(stops, (int)(sizeof stops / sizeof *stops), (t + 1) / 2);
}

plot_rgb plot_category(int k)
{
    static const plot_rgb colours[] = {
        {31, 119, 180}, {255, 127, 14}, {44, 160, 44},  {214, 39, 40},  {148, 103, 189},
        {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207},
    };
    int n = (int)(sizeof colours / sizeof *colours);
    return colours[((k % n) + n) % n];
}
