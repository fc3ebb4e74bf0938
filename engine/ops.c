#include "ops.h"

#include <assert.h>
#include <math.h>

static uint32_t div_up(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

/* The texel kernels read X from element x.off in steps of 4 and W in
 * steps of 16, and every binding must make a valid texel view. */
static int texel_linear_ok(const txlm_ops *o, txlm_arg x, const txlm_gpu_tensor *w)
{
    if (!o->rec->vk->texel || w->cols % 16 || x.off % 4 || x.ld % 4 || !txlm_rec_texel_fits(o->rec, x.view))
        return 0;
    for (uint32_t c = 0; c < txlm_tensor_n_chunks(w); c++)
        if (!txlm_rec_texel_fits(o->rec, txlm_tensor_chunk(w, c, &(uint32_t){0}))) return 0;
    return 1;
}

/* What the choice of a product's kernel depends on (linear_rules). */
enum {
    ONE_ROW = 1,     /* M == 1, and not TXLM_LIN_BLOCK */
    MANY_ROWS = 2,   /* M >= 24: the 32-row texel blocks */
    ROWS_16 = 4,     /* M >= 16, and not TXLM_LIN_BLOCK (position keys must not depend on the batch) */
    ALIGNED8 = 8,    /* K, x.off and x.ld multiples of 8: 8x8 register blocks, wide loads */
    GPU = 16,        /* vk->gpu_kernels */
    GPU_GRID = 32,   /* gemv_gpu's grid of row groups fits the device's limit */
    Q8_BLOCKS = 64,  /* q8_0 rows of whole 32-weight blocks, one per 256-bit load */
    Q8_LONG = 128,   /* q8_0 rows of 4 superblocks and more: touch the next one ahead */
    TWO_ROWS = 256,  /* M == 2, and not TXLM_LIN_BLOCK (a few streams' tokens) */
    FOUR_ROWS = 512, /* M == 3 or 4, and not TXLM_LIN_BLOCK */
    SOME_ROWS = 1024, /* M from 2 to 15, and not TXLM_LIN_BLOCK (a batch's tokens, fewer than the GPU tiles take) */
};

/* A product's candidates, best first: the first whose conditions hold and
 * which the device can run is used. Texel rules apply where X and W can be
 * read as texels (CPU devices), the others elsewhere. `split`: the kernel
 * stores through linear_out.glsl's store(), which takes TXLM_LINF_SPLIT
 * (the block kernels store raw and finish in place; linear.comp has its
 * own epilogue). */
static const struct linear_rule {
    int texel;
    txlm_kernel_family family; /* or, for a kernel of one dtype, */
    txlm_kernel_id id;         /* (family TXLM_KF_COUNT) */
    unsigned when;
    int split;
} linear_rules[] = {
    {1, TXLM_KF_COUNT, TXLM_K_GEMV_TEX_Q8_0_LONG, ONE_ROW | Q8_LONG, 1}, /* one row per lane */
    {1, TXLM_KF_GEMV_TEX, 0, ONE_ROW, 1},
    {1, TXLM_KF_GEMV_TEX2, 0, TWO_ROWS, 1},      /* a few streams' tokens: a weight unpacked once for all */
    {1, TXLM_KF_GEMV_TEX4, 0, FOUR_ROWS, 1},
    {1, TXLM_KF_LINEAR_TEXSG, 0, MANY_ROWS, 0},  /* 32x8 blocks, X shared by shuffles */
    {1, TXLM_KF_LINEAR_TEX, 0, MANY_ROWS, 0},    /* 32x16 blocks */
    {1, TXLM_KF_LINEAR_TEXSG8, 0, 0, 0},         /* 8x16 blocks for a few rows */
    {1, TXLM_KF_LINEAR_TEX8, 0, 0, 0},
    {0, TXLM_KF_GEMV_GPU, 0, ONE_ROW | GPU | GPU_GRID, 1}, /* GPUs: 64 lanes walk K side by side */
    {0, TXLM_KF_GEMV_GPU8, 0, SOME_ROWS | GPU | GPU_GRID, 1}, /* the same for 8 rows of X at once: W read once */
    {0, TXLM_KF_LINEAR_CM, 0, ROWS_16 | GPU, 1},           /* GPUs' matrix units: f16 tiles, f32 sums (no f32 weights) */
    {0, TXLM_KF_LINEAR_SMEM, 0, ROWS_16 | GPU, 1},         /* GPUs: 64x64 tiles in workgroup memory */
    {0, TXLM_KF_COUNT, TXLM_K_GEMV_Q8_SG, ONE_ROW | ALIGNED8 | Q8_BLOCKS, 1},
    {0, TXLM_KF_COUNT, TXLM_K_GEMV_Q8, ONE_ROW | ALIGNED8 | Q8_BLOCKS, 1},
    {0, TXLM_KF_GEMV_WIDE_SG, 0, ONE_ROW | ALIGNED8, 1}, /* one row: one pass over W, 32 rows a workgroup */
    {0, TXLM_KF_GEMV_WIDE, 0, ONE_ROW | ALIGNED8, 1},
    {0, TXLM_KF_GEMV_SG, 0, ONE_ROW | ALIGNED8, 1},
    {0, TXLM_KF_GEMV, 0, ONE_ROW | ALIGNED8, 1},
    {0, TXLM_KF_LINEAR_WIDE, 0, ALIGNED8, 1}, /* 8x8 register blocks */
    {0, TXLM_KF_LINEAR_TILED, 0, ALIGNED8, 1},
    {0, TXLM_KF_LINEAR, 0, 0, 0},
};

static txlm_kernel_id rule_kernel(const struct linear_rule *r, uint32_t dtype)
{
    return r->family < TXLM_KF_COUNT ? txlm_kernel_of(r->family, dtype) : r->id;
}

/* The rule of Y[M, nrows] = X · W^T for this shape on this device (its
 * kernel in *k). */
static const struct linear_rule *linear_kernel(const txlm_ops *o, txlm_arg x, const txlm_gpu_tensor *w, uint32_t nrows,
                                               uint32_t M, uint32_t flags, int in_place, txlm_kernel_id *k)
{
    const txlm_vk *vk = o->rec->vk;
    uint32_t most_rows = nrows < w->chunk_rows ? nrows : w->chunk_rows;
    unsigned have = (M == 1 && !(flags & TXLM_LIN_BLOCK) ? ONE_ROW : 0) | (M >= 24 ? MANY_ROWS : 0) |
                    (M >= 16 && !(flags & TXLM_LIN_BLOCK) ? ROWS_16 : 0) |
                    (w->cols % 8 == 0 && x.off % 8 == 0 && x.ld % 8 == 0 ? ALIGNED8 : 0) | (vk->gpu_kernels ? GPU : 0) |
                    (div_up(most_rows, txlm_kernel_descs[txlm_kernel_of(TXLM_KF_GEMV_GPU, w->dtype)].tile_n) <=
                             vk->props.limits.maxComputeWorkGroupCount[0]
                         ? GPU_GRID
                         : 0) |
                    (w->dtype == TXLM_DT_Q8_0 && w->cols % 32 == 0 ? Q8_BLOCKS : 0) |
                    (w->dtype == TXLM_DT_Q8_0 && w->cols >= 4 * 512 ? Q8_LONG : 0) |
                    (M == 2 && !(flags & TXLM_LIN_BLOCK) ? TWO_ROWS : 0) |
                    (M >= 3 && M <= 4 && !(flags & TXLM_LIN_BLOCK) ? FOUR_ROWS : 0) |
                    (M >= 2 && M < 16 && !(flags & TXLM_LIN_BLOCK) ? SOME_ROWS : 0);
    /* the block kernels store Y raw, then add bias and residual in place:
     * a residual that is Y itself (the embedding projection) must not */
    txlm_kernel_family rows_family = have & ONE_ROW ? TXLM_KF_GEMV_TEX : have & TWO_ROWS ? TXLM_KF_GEMV_TEX2 : TXLM_KF_GEMV_TEX4;
    int few_rows = (have & (ONE_ROW | TWO_ROWS | FOUR_ROWS)) && txlm_kernel_usable(vk, txlm_kernel_of(rows_family, w->dtype));
    int texel = texel_linear_ok(o, x, w) && (few_rows || !in_place);
    for (size_t i = 0; i < sizeof linear_rules / sizeof *linear_rules; i++) {
        const struct linear_rule *r = &linear_rules[i];
        *k = rule_kernel(r, w->dtype);
        if (r->texel == texel && (r->when & have) == r->when && txlm_kernel_usable(vk, *k)) return r;
    }
    *k = txlm_kernel_of(TXLM_KF_LINEAR, w->dtype); /* unless a test forbade it, never reached */
    return &linear_rules[sizeof linear_rules / sizeof *linear_rules - 1];
}

/* One dispatch (a chunk of W at a time) of a, its flags complete, in
 * `kernel`; with a->split_y the first a->split columns go there. */
static void linear(txlm_ops *o, const txlm_linear_args *a, uint32_t flags, txlm_kernel_id kernel)
{
    const txlm_gpu_tensor *w = a->w;
    const txlm_arg *r = a->split_y ? a->split_y : a->residual;
    uint32_t end = a->row0 + a->n, M = a->m;
    uint32_t per_n = txlm_kernel_descs[kernel].tile_n, per_m = txlm_kernel_descs[kernel].tile_m;
    for (uint32_t c = 0; c < txlm_tensor_n_chunks(w); c++) {
        uint32_t c0;
        txlm_view wv = txlm_tensor_chunk(w, c, &c0);
        uint32_t c1 = c0 + w->chunk_rows;
        uint32_t lo = a->row0 > c0 ? a->row0 : c0, hi = end < c1 ? end : c1;
        if (lo >= hi) continue;
        /* this chunk's first column of the result, and its columns that go to split_y */
        uint32_t j0 = lo - a->row0, split = a->split_y && a->split > j0 ? a->split - j0 : 0;
        txlm_linear_push p = {
            .M = M, .N = hi - lo, .K = w->cols,
            .x_off = a->x.off, .ldx = a->x.ld,
            .w_off = (lo - c0) * w->cols, .w_ld = w->cols,
            .y_off = a->y.off + j0 + split - (a->split_y ? a->split : 0), .ldy = a->y.ld,
            .b_off = a->bias_off + j0,
            .r_off = r ? r->off + j0 : 0, .ldr = r ? r->ld : 0,
            .flags = (flags & TXLM_LIN_SHADER_FLAGS) | (a->bias ? TXLM_LINF_BIAS : 0u) | (a->split_y ? TXLM_LINF_SPLIT : 0u),
            .alpha = a->scale ? a->scale : 1.0f,
            .split = split,
        };
        txlm_view views[5] = {a->x.view, wv, a->bias ? txlm_tensor_view(a->bias) : o->dummy,
                              (flags & TXLM_LIN_RESIDUAL) || a->split_y ? r->view : o->dummy, a->y.view};
        txlm_rec_dispatch(o->rec, kernel, views, &p, sizeof p, div_up(p.N, per_n), div_up(M, per_m), 1);
        /* chunks write disjoint columns of Y, but bindings cover whole
         * buffers, so each chunk is ordered after the previous one */
        txlm_rec_barrier(o->rec);
    }
}

void txlm_op_linear(txlm_ops *o, const txlm_linear_args *a)
{
    /* split_y takes the residual's binding (ops.h) */
    assert(!(a->split_y && a->residual));
    uint32_t flags = (a->flags & ~(uint32_t)TXLM_LIN_RESIDUAL) | (a->residual ? TXLM_LIN_RESIDUAL : 0u);
    int in_place = a->residual && a->residual->view.buf == a->y.view.buf;
    txlm_kernel_id k;
    const struct linear_rule *rule = linear_kernel(o, a->x, a->w, a->n, a->m, flags, in_place, &k);
    if (!a->split_y || rule->split) {
        linear(o, a, flags, k);
        return;
    }
    /* a kernel that cannot split its output: the two parts one after the other */
    txlm_linear_args first = *a, rest = *a;
    first.split_y = rest.split_y = NULL;
    first.n = a->split, first.y = *a->split_y, first.flags &= ~(uint32_t)TXLM_LIN_DYN_Y;
    rest.row0 += a->split, rest.n -= a->split, rest.bias_off += a->split;
    txlm_op_linear(o, &first);
    txlm_op_linear(o, &rest);
}

static void layernorm(txlm_ops *o, txlm_arg x, const txlm_arg *r, const txlm_gpu_tensor *g, const txlm_gpu_tensor *b,
                      txlm_arg y, uint32_t rows, uint32_t d, uint32_t d_out, float eps);

/* The kernel of a product of a few rows that also normalises them (its
 * last workgroup does), for the product's own kernel k: TXLM_K_COUNT if
 * none. The twins of the one-row kernels (gemv_tex, gemv_gpu) take one
 * row; gemv_gpu8's, up to 15. */
static txlm_kernel_id ln_kernel(txlm_kernel_id k, uint32_t dtype)
{
    static const txlm_kernel_family twins[][2] = {{TXLM_KF_GEMV_TEX, TXLM_KF_GEMV_TEX_LN},
                                                  {TXLM_KF_GEMV_GPU, TXLM_KF_GEMV_GPU_LN},
                                                  {TXLM_KF_GEMV_GPU8, TXLM_KF_GEMV_GPU8_LN}};
    if (k == TXLM_K_GEMV_TEX_Q8_0_LONG) return TXLM_K_GEMV_TEX_Q8_0_LONG_LN;
    for (size_t i = 0; i < sizeof twins / sizeof *twins; i++)
        if (k == txlm_kernel_of(twins[i][0], dtype)) return txlm_kernel_of(twins[i][1], dtype);
    return TXLM_K_COUNT;
}

void txlm_op_linear_ln(txlm_ops *o, const txlm_linear_ln_args *a)
{
    txlm_arg x = a->x, y = a->y, ln = a->ln_out ? *a->ln_out : a->y;
    const txlm_gpu_tensor *w = a->w, *bias = a->bias, *g = a->ln_g, *b = a->ln_b;
    const txlm_arg *r = a->residual;
    uint32_t nrows = a->n, M = a->m, d = a->d;
    txlm_kernel_id product;
    linear_kernel(o, x, w, nrows, M, r ? TXLM_LIN_RESIDUAL : 0, r && r->view.buf == y.view.buf, &product);
    txlm_kernel_id k = ln_kernel(product, w->dtype);
    /* the texel LN kernels read gamma, beta and Y as vec4 */
    int tex = k < TXLM_K_COUNT && txlm_kernel_descs[k].texel_mask;
    int fused = o->sync.buf && k < TXLM_K_COUNT && txlm_kernel_usable(o->rec->vk, k) &&
                txlm_tensor_n_chunks(w) == 1 && nrows <= w->rows && ln.view.buf == y.view.buf &&
                ln.view.off == y.view.off && ln.ld == y.ld &&
                (!tex || (y.off | ln.off | nrows | g->cols | b->cols) % 4 == 0) && g->cols >= d && b->cols >= d &&
                d <= nrows;
    if (!fused) {
        txlm_op_linear(o, &(txlm_linear_args){.x = x, .w = w, .n = nrows, .bias = bias, .residual = r, .y = y, .m = M});
        layernorm(o, y, NULL, g, b, ln, M, d, nrows, a->eps);
        return;
    }
    uint32_t c0;
    txlm_view wv = txlm_tensor_chunk(w, 0, &c0);
    txlm_linear_push p = {
        .M = M, .N = nrows, .K = w->cols,
        .x_off = x.off, .ldx = x.ld,
        .w_off = 0, .w_ld = w->cols,
        .y_off = y.off, .ldy = y.ld,
        .r_off = r ? r->off : 0, .ldr = r ? r->ld : 0,
        .flags = (r ? TXLM_LINF_RESIDUAL : 0u) | (bias ? TXLM_LINF_BIAS : 0u),
        .alpha = 1.0f,
        .ln_d = d, .ln_d_out = nrows, .ln_eps = a->eps, .ln_y = ln.off,
    };
    txlm_view views[8] = {x.view, wv, bias ? txlm_tensor_view(bias) : o->dummy, r ? r->view : o->dummy, y.view,
                          txlm_tensor_view(g), txlm_tensor_view(b), o->sync};
    txlm_rec_dispatch(o->rec, k, views, &p, sizeof p, div_up(nrows, txlm_kernel_descs[k].tile_n),
                      div_up(M, txlm_kernel_descs[k].tile_m), 1);
    txlm_rec_barrier(o->rec);
}

void txlm_op_gather(txlm_ops *o, txlm_view ids, uint32_t n, const txlm_gpu_tensor *e, int32_t id_lo, txlm_arg y, float alpha,
                    int zero_rest)
{
    for (uint32_t c = 0; c < txlm_tensor_n_chunks(e); c++) {
        uint32_t r0;
        txlm_view ev = txlm_tensor_chunk(e, c, &r0);
        uint32_t nr = e->rows - r0 < e->chunk_rows ? e->rows - r0 : e->chunk_rows;
        /* the first chunk zeroes the rows of ids outside it, the later ones write theirs after it */
        txlm_gather_push p = {n, e->cols, id_lo + (int32_t)r0, id_lo + (int32_t)(r0 + nr), y.off, y.ld, alpha,
                              (uint32_t)(zero_rest && c == 0)};
        txlm_view views[3] = {ids, ev, y.view};
        txlm_rec_dispatch(o->rec, txlm_kernel_of(TXLM_KF_GATHER, e->dtype), views, &p, sizeof p, div_up(e->cols, 64), n, 1);
        txlm_rec_barrier(o->rec);
    }
}

void txlm_op_layernorm(txlm_ops *o, const txlm_layernorm_args *a)
{
    layernorm(o, a->x, a->residual, a->g, a->b, a->y, a->rows, a->d, a->d_out, a->eps);
}

static void layernorm(txlm_ops *o, txlm_arg x, const txlm_arg *r, const txlm_gpu_tensor *g, const txlm_gpu_tensor *b,
                      txlm_arg y, uint32_t rows, uint32_t d, uint32_t d_out, float eps)
{
    txlm_layernorm_push p = {rows, d, x.off, x.ld, r ? r->off : 0, r ? r->ld : 0, y.off, y.ld, r != NULL, eps, d_out};
    txlm_view views[5] = {x.view, r ? r->view : o->dummy, txlm_tensor_view(g), txlm_tensor_view(b), y.view};
    /* texel reads and subgroup sums where the layout allows (CPU devices) */
    int tex = o->rec->vk->texel && txlm_kernel_usable(o->rec->vk, TXLM_K_LAYERNORM_TEX) &&
              (x.off | x.ld | y.off | y.ld | d_out | (r ? r->off | r->ld : 0) | g->cols | b->cols) % 4 == 0 &&
              g->cols >= d && b->cols >= d;
    for (int i = 0; i < 5 && tex; i++) tex = txlm_rec_texel_fits(o->rec, views[i]);
    txlm_rec_dispatch(o->rec, tex ? TXLM_K_LAYERNORM_TEX : TXLM_K_LAYERNORM, views, &p, sizeof p, rows, 1, 1);
    txlm_rec_barrier(o->rec);
}

void txlm_op_logsoftmax(txlm_ops *o, const txlm_logsoftmax_args *a)
{
    txlm_arg src = a->src, dst = a->dst;
    const txlm_arg *add = a->add, *pick = a->pick, *row_map = a->row_map;
    uint32_t add_col = a->add_col, rows = a->rows, n = a->n, n_write = a->n_write, pick_base = a->pick_base;
    txlm_logsoftmax_push p = {rows, n, src.off, src.ld, dst.off, dst.ld, add ? add->off : 0, add ? add->ld : 0, add ? add_col : 0xffffffffu,
           n_write, pick ? pick->off : 0xffffffffu, pick_base, row_map ? row_map->off : 0xffffffffu};
    txlm_view views[5] = {src.view, dst.view, add ? add->view : o->dummy, pick ? pick->view : o->dummy,
                          row_map ? row_map->view : o->dummy};
    int tex = o->rec->vk->texel && src.off % 4 == 0 && src.ld % 4 == 0 && txlm_rec_texel_fits(o->rec, src.view);
    txlm_rec_dispatch(o->rec, tex ? TXLM_K_LOGSOFTMAX_TEX : TXLM_K_LOGSOFTMAX, views, &p, sizeof p, rows, 1, 1);
    txlm_rec_barrier(o->rec);
}
