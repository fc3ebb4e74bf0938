/* The one place stb_image_write is instantiated. */
#include <stdlib.h>
#include <string.h>

#include "canvas.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

typedef struct growing {
    unsigned char *data;
    size_t len, cap;
    int failed;
} growing;

static void append(void *ctx, void *data, int size)
{
    growing *g = ctx;
    if (g->failed || size <= 0) return;
    if (g->len + (size_t)size > g->cap) {
        size_t cap = (g->len + (size_t)size) * 2;
        unsigned char *d = realloc(g->data, cap);
        if (!d) {
            g->failed = 1;
            return;
        }
        g->data = d, g->cap = cap;
    }
    memcpy(g->data + g->len, data, (size_t)size);
    g->len += (size_t)size;
}

unsigned char *plot_png_encode(const plot_canvas *c, size_t *len)
{
    growing g = {0};
    if (!stbi_write_png_to_func(append, &g, c->w, c->h, 3, c->px, c->w * 3) || g.failed) {
        free(g.data);
        return NULL;
    }
    *len = g.len;
    return g.data;
}
