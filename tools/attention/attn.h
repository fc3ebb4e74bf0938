/* `txlm attention`: the captured attention of a text's last segment, and
 * the matrices, pictures and dumps made of it. */
#ifndef TXLM_ATTN_H
#define TXLM_ATTN_H

#include <stdint.h>

#include "plot/canvas.h"
#include "txlm.h"

/* What one run of a text leaves: every layer's matrices of the last segment. */
typedef struct attn_run {
    txlm_attention_shape shape;
    uint32_t first_query;     /* text position of the last segment's first token */
    int have_terms;
    float **probs;            /* per layer [H, qlen, klen] */
    float **terms;            /* per layer [4, H, qlen, klen], or NULL */
    unsigned char *masked;    /* [qlen, klen], 1 where the key is hidden from the query */
    char **key_labels;        /* klen token strings (queries are keys mlen..klen-1) */
} attn_run;

/* Feeds tokens[0..n) through one session in segments of seg_len, the last
 * one with attention captured (the four terms too when `terms`). */
int attn_run_tokens(txlm_model *m, const txlm_session_options *so, const int32_t *tokens, uint32_t n,
                    uint32_t seg_len, int terms, attn_run *out);
void attn_run_free(attn_run *r);
/* The masks of the spec: causal, and with same_length the lower bound. */
void attn_mask(uint32_t qlen, uint32_t mlen, uint32_t mem_len, int same_length, unsigned char *masked);

#define ATTN_ALL (-1)
#define ATTN_MEAN (-2)
#define ATTN_LAST_LAYER (-3) /* --layer last, until the model says which */

/* The matrices of one layer and one head (or the mean of the heads):
 * m[0..3] the terms (a)-(d) (NULL when not captured), m[4] the probabilities. */
typedef struct attn_slice {
    uint32_t layer;
    int head;                 /* ATTN_MEAN for the mean over heads */
    float *m[5];              /* each [qlen, klen] */
} attn_slice;

/* Slices for layer (index or ATTN_ALL) and head (index, ATTN_ALL or
 * ATTN_MEAN), layers ascending, heads ascending within a layer. */
int attn_select(const attn_run *r, int layer, int head, attn_slice **out, uint32_t *n);
void attn_slices_free(attn_slice *s, uint32_t n);

/* Picture geometry, a function of these numbers only (the tests rely on it). */
typedef struct attn_layout {
    int panels, cols;         /* panels, and panels per row of the grid */
    int cell, labels;         /* pixels per matrix entry; token strings drawn */
    int pw, ph;               /* one panel */
    int w, h;                 /* the whole picture */
} attn_layout;

/* cell 0 = chosen from the matrix size. grid_cols 0 = about square (5, a slice a row, with terms). */
void attn_heatmap_layout(uint32_t n_slices, int terms, int grid_cols, uint32_t qlen, uint32_t klen, int cell,
                         attn_layout *l);
void attn_distance_layout(uint32_t n_layers, uint32_t n_series, attn_layout *l);

typedef struct attn_figure_opts {
    int terms;                /* five panels per slice: (a)-(d) and the probabilities */
    int grid_cols;            /* 0 = about square */
    int cell;                 /* 0 = automatic */
    int tick;                 /* 0 = automatic */
} attn_figure_opts;

int attn_draw_heatmaps(const attn_run *r, const attn_slice *s, uint32_t n, const attn_figure_opts *o, plot_canvas *c);
/* Mean probability over queries against relative distance, a panel per layer, a line per slice. */
int attn_draw_distance(const attn_run *r, const attn_slice *s, uint32_t n, plot_canvas *c);
/* curve[dist] for dist in [0, klen): the mean probability over the queries
 * that see a key at that distance (0 where none does). Returns 1 + the
 * largest distance some query sees. */
int attn_by_distance(const float *probs, const unsigned char *masked, uint32_t qlen, uint32_t mlen, float *curve);

/* The dumps (layouts in `txlm attention --help`): malloc'd bytes. */
int attn_dump_f32(const attn_run *r, const attn_slice *s, uint32_t n, int terms, void **data, size_t *size);
int attn_dump_csv(const attn_run *r, const attn_slice *s, uint32_t n, int terms, void **data, size_t *size);

#endif
