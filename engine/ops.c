#include "ops.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "dtype.h"
#include "log.h"

static uint32_t div_up(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

/* The choice of a product's kernel. A call's conditions are named
 * (linear_conditions says which hold); each candidate of linear_rules,
 * best first, names the conditions it needs and whether it is a texel
 * kernel; the first on the call's path (texel or not, linear_path) whose
 * needs all hold and which the device can run is used. With
 * TXLM_EXPLAIN_KERNELS the log says which won and why each candidate
 * before it did not. */
enum linear_cond {
    ONE_ROW,   /* M == 1, and not TXLM_LIN_BLOCK */
    TWO_ROWS,  /* M == 2, and not TXLM_LIN_BLOCK (a few streams' tokens) */
    FOUR_ROWS, /* M == 3 or 4, and not TXLM_LIN_BLOCK */
    SOME_ROWS, /* M from 2 to 15, and not TXLM_LIN_BLOCK (a batch's tokens, fewer than the GPU tiles take) */
    ROWS_16,   /* M >= 16, and not TXLM_LIN_BLOCK (position keys must not depend on the batch) */
    MANY_ROWS, /* M >= 24: the 32-row texel blocks */
    ALIGNED8,  /* K, x.off and x.ld multiples of 8: 8x8 register blocks, wide loads */
    GPU,       /* vk->gpu_kernels */
    GPU_GRID,  /* gemv_gpu's grid of row groups fits the device's limit */
    Q8_BLOCKS, /* q8_0 rows of whole 32-weight blocks, one per 256-bit load */
    Q8_LONG,   /* q8_0 rows of 4 superblocks and more: touch the next one ahead */
    N_CONDS
};
static const char *const cond_names[N_CONDS] = {
    [ONE_ROW] = "one_row",     [TWO_ROWS] = "two_rows",   [FOUR_ROWS] = "four_rows", [SOME_ROWS] = "some_rows",
    [ROWS_16] = "rows_16",     [MANY_ROWS] = "many_rows", [ALIGNED8] = "aligned8",   [GPU] = "gpu",
    [GPU_GRID] = "gpu_grid",   [Q8_BLOCKS] = "q8_blocks", [Q8_LONG] = "q8_long",
};

typedef struct linear_conds {
    bool holds[N_CONDS];
} linear_conds;

static linear_conds linear_conditions(const txlm_vk *vk, txlm_arg x, const txlm_gpu_tensor *w, uint32_t nrows, uint32_t M,
                                      uint32_t flags)
{
    bool free_rows = !(flags & TXLM_LIN_BLOCK); /* the rows may take any kernel (not the position keys) */
    uint32_t most_rows = nrows < w->chunk_rows ? nrows : w->chunk_rows;
    uint32_t gemv_gpu_groups = div_up(most_rows, txlm_kernel_descs[txlm_kernel_of(TXLM_KF_GEMV_GPU, w->dtype)].tile_n);
    linear_conds c = {{
        [ONE_ROW] = M == 1 && free_rows,
        [TWO_ROWS] = M == 2 && free_rows,
        [FOUR_ROWS] = M >= 3 && M <= 4 && free_rows,
        [SOME_ROWS] = M >= 2 && M < 16 && free_rows,
        [ROWS_16] = M >= 16 && free_rows,
        [MANY_ROWS] = M >= 24,
        [ALIGNED8] = w->cols % 8 == 0 && x.off % 8 == 0 && x.ld % 8 == 0,
        [GPU] = vk->gpu_kernels,
        [GPU_GRID] = gemv_gpu_groups <= vk->props.limits.maxComputeWorkGroupCount[0],
        [Q8_BLOCKS] = w->dtype == TXLM_DT_Q8_0 && w->cols % 32 == 0,
        [Q8_LONG] = w->dtype == TXLM_DT_Q8_0 && w->cols >= 4 * 512,
    }};
    return c;
}

/* A product's candidates, best first. `texel`: a texel kernel, chosen
 * only on the texel path (linear_path), the others only off it. `split`:
 * the kernel stores through linear_out.glsl's store(), which takes
 * TXLM_LINF_SPLIT (the block kernels store raw and finish in place;
 * linear.comp has its own epilogue). */
static const struct linear_rule {
    bool texel;
    txlm_kernel_family family; /* or, for a kernel of one dtype, */
    txlm_kernel_id id;         /* (family TXLM_KF_COUNT) */
    bool needs[N_CONDS];       /* every condition it needs */
    bool split;
} linear_rules[] = {
    /* the texel path (CPU devices): one row per lane */
    {.texel = true, .family = TXLM_KF_COUNT, .id = TXLM_K_GEMV_TEX_Q8_0_LONG, .needs = {[ONE_ROW] = true, [Q8_LONG] = true}, .split = true},
    {.texel = true, .family = TXLM_KF_GEMV_TEX, .needs = {[ONE_ROW] = true}, .split = true},
    /* a few streams' tokens: a weight unpacked once for all */
    {.texel = true, .family = TXLM_KF_GEMV_TEX2, .needs = {[TWO_ROWS] = true}, .split = true},
    {.texel = true, .family = TXLM_KF_GEMV_TEX4, .needs = {[FOUR_ROWS] = true}, .split = true},
    {.texel = true, .family = TXLM_KF_LINEAR_TEXSG, .needs = {[MANY_ROWS] = true}}, /* 32x8 blocks, X shared by shuffles */
    {.texel = true, .family = TXLM_KF_LINEAR_TEX, .needs = {[MANY_ROWS] = true}},   /* 32x16 blocks */
    {.texel = true, .family = TXLM_KF_LINEAR_TEXSG8},                           /* 8x16 blocks for a few rows */
    {.texel = true, .family = TXLM_KF_LINEAR_TEX8},
    /* GPUs: 64 lanes walk K side by side */
    {.family = TXLM_KF_GEMV_GPU, .needs = {[ONE_ROW] = true, [GPU] = true, [GPU_GRID] = true}, .split = true},
    /* the same for 8 rows of X at once: W read once */
    {.family = TXLM_KF_GEMV_GPU8, .needs = {[SOME_ROWS] = true, [GPU] = true, [GPU_GRID] = true}, .split = true},
    /* GPUs' matrix units: f16 tiles, f32 sums (no f32 weights) */
    {.family = TXLM_KF_LINEAR_CM, .needs = {[ROWS_16] = true, [GPU] = true}, .split = true},
    /* GPUs: 64x64 tiles in workgroup memory */
    {.family = TXLM_KF_LINEAR_SMEM, .needs = {[ROWS_16] = true, [GPU] = true}, .split = true},
    {.family = TXLM_KF_COUNT, .id = TXLM_K_GEMV_Q8_SG, .needs = {[ONE_ROW] = true, [ALIGNED8] = true, [Q8_BLOCKS] = true}, .split = true},
    {.family = TXLM_KF_COUNT, .id = TXLM_K_GEMV_Q8, .needs = {[ONE_ROW] = true, [ALIGNED8] = true, [Q8_BLOCKS] = true}, .split = true},
    /* one row: one pass over W, 32 rows a workgroup */
    {.family = TXLM_KF_GEMV_WIDE_SG, .needs = {[ONE_ROW] = true, [ALIGNED8] = true}, .split = true},
    {.family = TXLM_KF_GEMV_WIDE, .needs = {[ONE_ROW] = true, [ALIGNED8] = true}, .split = true},
    {.family = TXLM_KF_GEMV_SG, .needs = {[ONE_ROW] = true, [ALIGNED8] = true}, .split = true},
    {.family = TXLM_KF_GEMV, .needs = {[ONE_ROW] = true, [ALIGNED8] = true}, .split = true},
    {.family = TXLM_KF_LINEAR_WIDE, .needs = {[ALIGNED8] = true}, .split = true}, /* 8x8 register blocks */
    {.family = TXLM_KF_LINEAR_TILED, .needs = {[ALIGNED8] = true}, .split = true},
    {.family = TXLM_KF_LINEAR},
};

static txlm_kernel_id rule_kernel(const struct linear_rule *r, uint32_t dtype)
{
    return r->family < TXLM_KF_COUNT ? txlm_kernel_of(r->family, dtype) : r->id;
}

/* Whether every condition r needs holds. */
static bool meets(const struct linear_rule *r, const linear_conds *c)
{
    for (int j = 0; j < N_CONDS; j++)
        if (r->needs[j] && !c->holds[j]) return false;
    return true;
}

/* Whether the call takes the texel path (X and W read as texels: the
 * texel kernels exist for CPU devices): NULL if so, else why not. */
static const char *linear_path(const txlm_ops *o, txlm_arg x, const txlm_gpu_tensor *w, const linear_conds *c, int in_place)
{
    const txlm_vk *vk = o->rec->vk;
    if (!vk->texel) return "texel kernels off on this device";
    /* they read X from element x.off in steps of 4 and W in steps of 16,
     * and every binding must make a valid texel view */
    if (w->cols % 16 || x.off % 4 || x.ld % 4) return "K, X's offset or X's stride not whole texels";
    if (!txlm_rec_texel_fits(o->rec, x.view)) return "X past a texel view";
    for (uint32_t i = 0; i < txlm_tensor_n_chunks(w); i++)
        if (!txlm_rec_texel_fits(o->rec, txlm_tensor_chunk(w, i, &(uint32_t){0}))) return "W past a texel view";
    /* the block kernels store Y raw, then add bias and residual in place:
     * a residual that is Y itself (the embedding projection) must take a
     * one-row kernel */
    txlm_kernel_family rows_family = c->holds[ONE_ROW] ? TXLM_KF_GEMV_TEX : c->holds[TWO_ROWS] ? TXLM_KF_GEMV_TEX2 : TXLM_KF_GEMV_TEX4;
    bool few_rows = (c->holds[ONE_ROW] || c->holds[TWO_ROWS] || c->holds[FOUR_ROWS]) &&
                    txlm_kernel_usable(vk, txlm_kernel_of(rows_family, w->dtype));
    if (in_place && !few_rows) return "Y is its own residual, which the block kernels cannot add";
    return NULL;
}

/* The log line of one choice (TXLM_EXPLAIN_KERNELS), built as it is made. */
typedef struct explain {
    char text[1024];
    size_t len;
} explain;

static void say(explain *e, const char *fmt, ...) TXLM_PRINTF(2, 3);
static void say(explain *e, const char *fmt, ...)
{
    if (e->len >= sizeof e->text) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(e->text + e->len, sizeof e->text - e->len, fmt, ap);
    va_end(ap);
    e->len += n > 0 ? (size_t)n : 0;
}

static const char *kernel_name(txlm_kernel_id k) { return k < TXLM_K_COUNT ? txlm_kernel_descs[k].name : "none"; }

/* The rule of Y[M, nrows] = X · W^T for this shape on this device (its
 * kernel in *k); why (NULL: not asked) gets the reasons. */
static const struct linear_rule *linear_kernel(const txlm_ops *o, txlm_arg x, const txlm_gpu_tensor *w, uint32_t nrows,
                                               uint32_t M, uint32_t flags, int in_place, txlm_kernel_id *k, explain *why)
{
    const txlm_vk *vk = o->rec->vk;
    linear_conds c = linear_conditions(vk, x, w, nrows, M, flags);
    const char *not_texel = linear_path(o, x, w, &c, in_place);
    bool texel = !not_texel;
    if (why) {
        const txlm_dtype_info *di = txlm_dtype_get(w->dtype);
        say(why, "kernel choice: Y[%u, %u] = X W^T, K %u, %s%s; holds:", M, nrows, w->cols, di ? di->name : "?",
            flags & TXLM_LIN_BLOCK ? ", position keys (TXLM_LIN_BLOCK)" : "");
        for (int i = 0; i < N_CONDS; i++)
            if (c.holds[i]) say(why, " %s", cond_names[i]);
        say(why, "; %s", texel ? "texel path" : "not the texel path: ");
        if (!texel) say(why, "%s", not_texel);
    }
    for (size_t i = 0; i < sizeof linear_rules / sizeof *linear_rules; i++) {
        const struct linear_rule *r = &linear_rules[i];
        *k = rule_kernel(r, w->dtype);
        if (r->texel != texel) continue;
        bool met = meets(r, &c);
        const char *device_not = met ? txlm_kernel_unusable(vk, *k) : NULL;
        if (met && !device_not) {
            if (why) say(why, " => %s", kernel_name(*k));
            return r;
        }
        if (!why) continue;
        say(why, "; passed over %s (", kernel_name(*k));
        for (int j = 0, n = 0; j < N_CONDS; j++)
            if (r->needs[j] && !c.holds[j]) say(why, "%snot %s", n++ ? ", " : "", cond_names[j]);
        say(why, "%s)", met ? device_not : "");
    }
    *k = txlm_kernel_of(TXLM_KF_LINEAR, w->dtype); /* unless a test forbade it, never reached */
    if (why) say(why, "; none usable => %s", kernel_name(*k));
    return &linear_rules[sizeof linear_rules / sizeof *linear_rules - 1];
}

/* The choice explained on the log, where the context asks (TXLM_EXPLAIN_KERNELS). */
static explain *explaining(const txlm_ops *o, explain *e)
{
    const txlm_debug *d = o->rec->vk->debug;
    if (!d || !d->explain_kernels) return NULL;
    e->len = 0;
    e->text[0] = 0;
    return e;
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
    explain e, *why = explaining(o, &e);
    const struct linear_rule *rule = linear_kernel(o, a->x, a->w, a->n, a->m, flags, in_place, &k, why);
    if (!a->split_y || rule->split) {
        if (why) txlm_log(TXLM_LOG_INFO, "%s", why->text);
        linear(o, a, flags, k);
        return;
    }
    if (why) txlm_log(TXLM_LOG_INFO, "%s, which cannot write two outputs: its two parts follow", why->text);
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
    explain e, *why = explaining(o, &e);
    linear_kernel(o, x, w, nrows, M, r ? TXLM_LIN_RESIDUAL : 0, r && r->view.buf == y.view.buf, &product, why);
    txlm_kernel_id k = ln_kernel(product, w->dtype);
    /* the texel LN kernels read gamma, beta and Y as vec4 */
    int tex = k < TXLM_K_COUNT && txlm_kernel_descs[k].texel_mask;
    int fused = o->sync.buf && k < TXLM_K_COUNT && txlm_kernel_usable(o->rec->vk, k) &&
                txlm_tensor_n_chunks(w) == 1 && nrows <= w->rows && ln.view.buf == y.view.buf &&
                ln.view.off == y.view.off && ln.ld == y.ld &&
                (!tex || (y.off | ln.off | nrows | g->cols | b->cols) % 4 == 0) && g->cols >= d && b->cols >= d &&
                d <= nrows;
    if (why && fused) txlm_log(TXLM_LOG_INFO, "%s, run as %s: its last workgroup normalises", why->text, kernel_name(k));
    if (!fused) {
        /* (txlm_op_linear explains its own choice) */
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
