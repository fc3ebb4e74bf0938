#include "ops.h"

#include <math.h>

static uint32_t div_up(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

struct linear_push {
    uint32_t M, N, K, x_off, ldx, w_off, w_ld, y_off, ldy, b_off, r_off, ldr, flags;
    float alpha;
    uint32_t ln_d, ln_d_out; /* the LN kernels (txlm_op_linear_ln) */
    float ln_eps;
};

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

/* Rows per workgroup of gemv_gpu.comp (ROWS there). */
#define GEMV_GPU_ROWS 4u

/* q8_0 rows of 4 superblocks and more take the one-row kernel that
 * touches each row's next superblock ahead (gemv_tex.comp, TOUCH). */
static int long_q8_rows(const txlm_ops *o, const txlm_gpu_tensor *w)
{
    return w->dtype == TXLM_DT_Q8_0 && w->cols >= 4 * 512 && !o->no_touch;
}

/* Rows per invocation of gemv_tex.comp, whose ROWS says why. */
static uint32_t gemv_tex_rows(uint32_t dtype)
{
    return dtype == TXLM_DT_Q8_0 ? 16 : dtype == TXLM_DT_Q4_0 ? 8 : 4;
}

void txlm_op_linear(txlm_ops *o, txlm_arg x, const txlm_gpu_tensor *w, uint32_t row0, uint32_t nrows,
                    const txlm_gpu_tensor *bias, uint32_t bias_off, const txlm_arg *r, txlm_arg y, uint32_t M,
                    uint32_t flags, float alpha)
{
    uint32_t end = row0 + nrows;
    const txlm_vk *vk = o->rec->vk;
    txlm_kernel_id kernel;
    uint32_t per_n, per_m; /* columns and rows of Y per workgroup */
    /* the block kernels store Y raw, then add bias and residual in place:
     * a residual that is Y itself (the embedding projection) must not */
    int in_place = (flags & TXLM_LIN_RESIDUAL) && r && r->view.buf == y.view.buf;
    int one_row = M == 1 && !o->no_gemv && !(flags & TXLM_LIN_BLOCK);
    if (texel_linear_ok(o, x, w) && (one_row || !in_place)) {
        /* texel fetches (CPU devices): one row; blocks of 32x8 and 8x16
         * with X shared by subgroup shuffles, else 32x16 and 8x16 */
        int sg = !o->no_shuffle && txlm_kernel_usable(vk, TXLM_K_LINEAR_TEXSG);
        txlm_kernel_id base = one_row  ? TXLM_K_GEMV_TEX
                              : M >= 24 ? (sg ? TXLM_K_LINEAR_TEXSG : TXLM_K_LINEAR_TEX)
                                        : (sg ? TXLM_K_LINEAR_TEXSG8 : TXLM_K_LINEAR_TEX8);
        kernel = txlm_kernel_for_dtype(base, w->dtype);
        if (kernel == TXLM_K_GEMV_TEX_Q8_0 && long_q8_rows(o, w)) kernel = TXLM_K_GEMV_TEX_Q8_0_LONG;
        per_n = base == TXLM_K_GEMV_TEX ? 8 * gemv_tex_rows(w->dtype) : base == TXLM_K_LINEAR_TEXSG ? 8 * 8 : 16 * 8;
        per_m = base == TXLM_K_GEMV_TEX       ? 1
                : base == TXLM_K_LINEAR_TEX   ? 32 * 2
                : base == TXLM_K_LINEAR_TEX8  ? 8 * 2
                : base == TXLM_K_LINEAR_TEXSG ? 32
                                              : 8;
    } else {
        /* 8x8 register blocks with wide loads when the shapes line up */
        int tiled = w->cols % 8 == 0 && x.off % 8 == 0 && x.ld % 8 == 0;
        txlm_kernel_id base = !tiled ? TXLM_K_LINEAR : vk->int64 ? TXLM_K_LINEAR_WIDE : TXLM_K_LINEAR_TILED;
        per_n = tiled ? 8 * 8 : 4 * 8;
        per_m = tiled ? 8 * 2 : 4 * 8;
        uint32_t most_rows = nrows < w->chunk_rows ? nrows : w->chunk_rows;
        if (vk->gpu_kernels && one_row && txlm_kernel_usable(vk, TXLM_K_GEMV_GPU) &&
            div_up(most_rows, GEMV_GPU_ROWS) <= vk->props.limits.maxComputeWorkGroupCount[0]) {
            /* GPUs, one row: 64 lanes walk K side by side (shaders/gemv_gpu.comp) */
            base = TXLM_K_GEMV_GPU;
            per_n = GEMV_GPU_ROWS, per_m = 1;
        } else if (vk->gpu_kernels && M >= 16 && !(flags & TXLM_LIN_BLOCK) && txlm_kernel_usable(vk, TXLM_K_LINEAR_SMEM)) {
            /* GPUs, several rows: 64x64 tiles through workgroup memory; not
             * for TXLM_LIN_BLOCK (position keys must not depend on the batch) */
            base = TXLM_K_LINEAR_SMEM;
            per_n = 64, per_m = 64;
        } else if (tiled && one_row) {
            /* one row: a single pass over the weights, 32 rows per workgroup */
            int sg = txlm_kernel_usable(vk, TXLM_K_GEMV_SG);
            base = vk->int64 ? (sg ? TXLM_K_GEMV_WIDE_SG : TXLM_K_GEMV_WIDE) : (sg ? TXLM_K_GEMV_SG : TXLM_K_GEMV);
            per_n = 32, per_m = 1;
        }
        kernel = txlm_kernel_for_dtype(base, w->dtype);
        /* q8_0 rows: a whole block per 256-bit load */
        if (per_m == 1 && base != TXLM_K_GEMV_GPU && w->dtype == TXLM_DT_Q8_0 && vk->int64 && w->cols % 32 == 0 &&
            !o->no_gemv_q8)
            kernel = txlm_kernel_usable(vk, TXLM_K_GEMV_Q8_SG) ? TXLM_K_GEMV_Q8_SG : TXLM_K_GEMV_Q8;
    }
    for (uint32_t c = 0; c < txlm_tensor_n_chunks(w); c++) {
        uint32_t c0;
        txlm_view wv = txlm_tensor_chunk(w, c, &c0);
        uint32_t c1 = c0 + w->chunk_rows;
        uint32_t lo = row0 > c0 ? row0 : c0, hi = end < c1 ? end : c1;
        if (lo >= hi) continue;
        struct linear_push p = {
            .M = M, .N = hi - lo, .K = w->cols,
            .x_off = x.off, .ldx = x.ld,
            .w_off = (lo - c0) * w->cols, .w_ld = w->cols,
            .y_off = y.off + (lo - row0), .ldy = y.ld,
            .b_off = bias_off + (lo - row0),
            .r_off = r ? r->off + (lo - row0) : 0, .ldr = r ? r->ld : 0,
            .flags = (flags & (TXLM_LIN_RELU | TXLM_LIN_RESIDUAL)) | (bias ? 1u : 0u) | (flags & TXLM_LIN_DYN_Y ? 16u : 0u),
            .alpha = alpha,
        };
        txlm_view views[5] = {x.view, wv, bias ? txlm_tensor_view(bias) : o->dummy,
                              (flags & TXLM_LIN_RESIDUAL) && r ? r->view : o->dummy, y.view};
        txlm_rec_dispatch(o->rec, kernel, views, &p, sizeof p, div_up(p.N, per_n), div_up(M, per_m), 1);
        /* chunks write disjoint columns of Y, but bindings cover whole
         * buffers, so each chunk is ordered after the previous one */
        txlm_rec_barrier(o->rec);
    }
}

void txlm_op_linear_ln(txlm_ops *o, txlm_arg x, const txlm_gpu_tensor *w, uint32_t nrows, const txlm_gpu_tensor *bias,
                       const txlm_arg *r, txlm_arg y, uint32_t M, const txlm_gpu_tensor *g, const txlm_gpu_tensor *b,
                       uint32_t d, float eps)
{
    txlm_kernel_id k = long_q8_rows(o, w) ? TXLM_K_GEMV_TEX_Q8_0_LONG_LN : txlm_kernel_for_dtype(TXLM_K_GEMV_TEX_LN, w->dtype);
    /* the LN kernels read gamma and beta as vec4 and write whole vec4 of Y */
    int fused = M == 1 && o->sync.buf && !o->no_gemv && !o->no_fused_ln && texel_linear_ok(o, x, w) &&
                txlm_tensor_n_chunks(w) == 1 && nrows <= w->rows && txlm_kernel_usable(o->rec->vk, k) &&
                (y.off | nrows | g->cols | b->cols) % 4 == 0 && g->cols >= d && b->cols >= d && d <= nrows;
    if (!fused) {
        txlm_op_linear(o, x, w, 0, nrows, bias, 0, r, y, M, r ? TXLM_LIN_RESIDUAL : 0, 1.0f);
        txlm_op_layernorm(o, y, NULL, g, b, y, M, d, nrows, eps);
        return;
    }
    uint32_t c0;
    txlm_view wv = txlm_tensor_chunk(w, 0, &c0);
    struct linear_push p = {
        .M = 1, .N = nrows, .K = w->cols,
        .x_off = x.off, .ldx = x.ld,
        .w_off = 0, .w_ld = w->cols,
        .y_off = y.off, .ldy = y.ld,
        .r_off = r ? r->off : 0, .ldr = r ? r->ld : 0,
        .flags = (r ? TXLM_LIN_RESIDUAL : 0u) | (bias ? 1u : 0u),
        .alpha = 1.0f,
        .ln_d = d, .ln_d_out = nrows, .ln_eps = eps,
    };
    txlm_view views[8] = {x.view, wv, bias ? txlm_tensor_view(bias) : o->dummy, r ? r->view : o->dummy, y.view,
                          txlm_tensor_view(g), txlm_tensor_view(b), o->sync};
    txlm_rec_dispatch(o->rec, k, views, &p, sizeof p, div_up(nrows, 8 * gemv_tex_rows(w->dtype)), 1, 1);
    txlm_rec_barrier(o->rec);
}

void txlm_op_linear_t(txlm_ops *o, txlm_arg x, const txlm_gpu_tensor *pj, txlm_arg y, uint32_t M)
{
    /* P is split along K (its rows): each chunk adds its partial product */
    for (uint32_t c = 0; c < txlm_tensor_n_chunks(pj); c++) {
        uint32_t k0;
        txlm_view pv = txlm_tensor_chunk(pj, c, &k0);
        uint32_t nk = pj->rows - k0 < pj->chunk_rows ? pj->rows - k0 : pj->chunk_rows;
        struct linear_push p = {
            .M = M, .N = pj->cols, .K = nk,
            .x_off = x.off + k0, .ldx = x.ld,
            .w_off = 0, .w_ld = pj->cols,
            .y_off = y.off, .ldy = y.ld,
            .r_off = y.off, .ldr = y.ld,
            .flags = 8u /* TRANS_W */ | (c ? TXLM_LIN_RESIDUAL : 0u),
            .alpha = 1.0f,
        };
        txlm_view views[5] = {x.view, pv, o->dummy, c ? y.view : o->dummy, y.view};
        txlm_rec_dispatch(o->rec, txlm_kernel_for_dtype(TXLM_K_LINEAR, pj->dtype), views, &p, sizeof p,
                          div_up(p.N, 32), div_up(M, 32), 1);
        txlm_rec_barrier(o->rec);
    }
}

void txlm_op_gather(txlm_ops *o, txlm_view ids, uint32_t n, const txlm_gpu_tensor *e, int32_t id_lo, txlm_arg y, float alpha)
{
    for (uint32_t c = 0; c < txlm_tensor_n_chunks(e); c++) {
        uint32_t r0;
        txlm_view ev = txlm_tensor_chunk(e, c, &r0);
        uint32_t nr = e->rows - r0 < e->chunk_rows ? e->rows - r0 : e->chunk_rows;
        struct {
            uint32_t n_rows, dim;
            int32_t row_lo, row_hi;
            uint32_t y_off, ldy;
            float alpha;
        } p = {n, e->cols, id_lo + (int32_t)r0, id_lo + (int32_t)(r0 + nr), y.off, y.ld, alpha};
        txlm_view views[3] = {ids, ev, y.view};
        txlm_rec_dispatch(o->rec, txlm_kernel_for_dtype(TXLM_K_GATHER, e->dtype), views, &p, sizeof p, div_up(e->cols, 64), n, 1);
        txlm_rec_barrier(o->rec);
    }
}

void txlm_op_layernorm(txlm_ops *o, txlm_arg x, const txlm_arg *r, const txlm_gpu_tensor *g, const txlm_gpu_tensor *b,
                       txlm_arg y, uint32_t rows, uint32_t d, uint32_t d_out, float eps)
{
    struct {
        uint32_t rows, d, x_off, ldx, r_off, ldr, y_off, ldy, residual;
        float eps;
        uint32_t d_out;
    } p = {rows, d, x.off, x.ld, r ? r->off : 0, r ? r->ld : 0, y.off, y.ld, r != NULL, eps, d_out};
    txlm_view views[5] = {x.view, r ? r->view : o->dummy, txlm_tensor_view(g), txlm_tensor_view(b), y.view};
    /* texel reads and subgroup sums where the layout allows (CPU devices) */
    int tex = o->rec->vk->texel && !o->no_shuffle && txlm_kernel_usable(o->rec->vk, TXLM_K_LAYERNORM_TEX) &&
              (x.off | x.ld | y.off | y.ld | d_out | (r ? r->off | r->ld : 0) | g->cols | b->cols) % 4 == 0 &&
              g->cols >= d && b->cols >= d;
    for (int i = 0; i < 5 && tex; i++) tex = txlm_rec_texel_fits(o->rec, views[i]);
    txlm_rec_dispatch(o->rec, tex ? TXLM_K_LAYERNORM_TEX : TXLM_K_LAYERNORM, views, &p, sizeof p, rows, 1, 1);
    txlm_rec_barrier(o->rec);
}

/* shaders/attn_push.glsl */
struct attn_push {
    uint32_t qlen, mlen, klen, H, dh, rk_off, clamp_max, same_length, mem_len;
    float scale;
    uint32_t kv_row0, kv_rows;
    uint32_t merge; /* attn_split_sg: its last run merges (bindings 6 and 7) */
    uint32_t kv_dyn;
    uint32_t splits; /* attn_tile: runs of keys, merged after (1: none) */
};

static struct attn_push attn_push_of(const txlm_attn_shape *s, uint32_t rk_off)
{
    uint32_t klen = s->mlen + s->qlen;
    return (struct attn_push){s->qlen, s->mlen, klen, s->H, s->dh, rk_off, s->clamp_max, s->same_length,
                              s->mem_len, (float)(1.0 / sqrt((double)(s->dh_real ? s->dh_real : s->dh))),
                              s->kv_row0, s->kv_rows ? s->kv_rows : s->kv_row0 + klen, 0, s->kv_dyn, 1};
}

/* attn_merge: the partial softmaxes of nparts runs a query (scratch) into out */
static void merge_runs(txlm_ops *o, const txlm_attn_shape *s, txlm_view scratch, txlm_view out, uint32_t nparts)
{
    struct {
        uint32_t qlen, H, dh, nparts;
    } pm = {s->qlen, s->H, s->dh, nparts};
    txlm_view v2[2] = {scratch, out};
    txlm_rec_dispatch(o->rec, TXLM_K_ATTN_MERGE, v2, &pm, sizeof pm, div_up(s->H * s->dh / 4, 64), s->qlen, 1);
    txlm_rec_barrier(o->rec);
}

/* attn_tile's runs of keys: enough workgroups to fill a large GPU (about
 * 1024 when the queries alone give fewer), each run at least 4 tiles,
 * their partial sums within the scratch. */
static uint32_t tile_splits(const txlm_attn_shape *s, uint64_t scratch_bytes)
{
    uint32_t klen = s->mlen + s->qlen, groups = div_up(s->qlen, 16) * s->H;
    uint32_t n = div_up(1024, groups), most = div_up(div_up(klen, 16), 4);
    uint64_t per_run = (uint64_t)s->H * s->qlen * (s->dh + 4) * 4;
    if (n > most) n = most;
    if (n > 64) n = 64;
    if ((uint64_t)n * per_run > scratch_bytes) n = (uint32_t)(scratch_bytes / per_run);
    return n ? n : 1;
}

void txlm_op_attention(txlm_ops *o, const txlm_attn_shape *s, txlm_view q, txlm_view kv, txlm_view rk, uint32_t rk_off,
                       const txlm_gpu_tensor *r_w_bias, const txlm_gpu_tensor *r_r_bias, const txlm_view *probs,
                       txlm_view scratch, txlm_view out)
{
    uint32_t klen = s->mlen + s->qlen;
    struct attn_push ps = attn_push_of(s, rk_off);
    int vec_ok = !probs && !o->no_fused_attention && s->dh % 4 == 0 && s->dh <= 256 && rk_off % 4 == 0;
    /* same_length with no memory kept can hide every key of a row, which
     * the reference turns into a uniform row; only the one-query kernel
     * (and the three-pass path) carries that case. */
    int all_masked_rows = s->same_length && s->mem_len == 0;
    /* the split and paired kernels read their inputs as texels where the device prefers that */
    txlm_view rw = txlm_tensor_view(r_w_bias), rr = txlm_tensor_view(r_r_bias);
    int tex = o->rec->vk->texel && txlm_rec_texel_fits(o->rec, q) && txlm_rec_texel_fits(o->rec, kv) &&
              txlm_rec_texel_fits(o->rec, rk) && txlm_rec_texel_fits(o->rec, rw) && txlm_rec_texel_fits(o->rec, rr);
    /* GPUs: 16 queries a workgroup, keys staged in tiles (attn_tile.comp) */
    if (vec_ok && !all_masked_rows && o->rec->vk->gpu_kernels && s->dh <= 64 &&
        txlm_kernel_usable(o->rec->vk, TXLM_K_ATTN_TILE)) {
        ps.splits = tile_splits(s, scratch.size);
        txlm_view v[6] = {q, kv, rk, rw, rr, ps.splits > 1 ? scratch : out};
        txlm_rec_dispatch(o->rec, TXLM_K_ATTN_TILE, v, &ps, sizeof ps, div_up(s->qlen, 16), s->H, ps.splits);
        txlm_rec_barrier(o->rec);
        if (ps.splits > 1) merge_runs(o, s, scratch, out, ps.splits);
        return;
    }
    /* A handful of queries (generation): the keys are split into runs so
     * that every lane has work, then the runs are merged. */
    if (vec_ok && !all_masked_rows && s->qlen <= 4 && txlm_attn_split_bytes(s) <= scratch.size) {
        txlm_view v[8] = {q, kv, rk, rw, rr, scratch, o->dummy, o->dummy};
        uint32_t nparts = div_up(klen, TXLM_ATTN_RUN);
        if (tex && s->dh == 64 && !o->no_attn_sg && txlm_kernel_usable(o->rec->vk, TXLM_K_ATTN_SPLIT_SG64)) {
            uint32_t groups = div_up(s->H, TXLM_ATTN_SG_HEADS);
            nparts = div_up(klen, TXLM_ATTN_RUN_SG);
            /* the last run of each head group merges (attn_split_sg.comp) */
            ps.merge = o->sync.buf && !o->no_fused_merge && 1 + groups * s->qlen <= o->sync.size / 4;
            if (ps.merge) v[6] = out, v[7] = o->sync;
            txlm_rec_dispatch(o->rec, TXLM_K_ATTN_SPLIT_SG64, v, &ps, sizeof ps, groups, nparts, s->qlen);
            if (ps.merge) {
                txlm_rec_barrier(o->rec);
                return;
            }
        } else {
            txlm_kernel_id split = !tex ? TXLM_K_ATTN_SPLIT
                                   : s->dh == 64 ? TXLM_K_ATTN_SPLIT_TEX64
                                   : s->dh == 48 ? TXLM_K_ATTN_SPLIT_TEX48
                                                 : TXLM_K_ATTN_SPLIT_TEX;
            txlm_rec_dispatch(o->rec, split, v, &ps, sizeof ps, div_up(nparts, 8), s->H, s->qlen);
        }
        txlm_rec_barrier(o->rec);
        merge_runs(o, s, scratch, out, nparts);
        return;
    }
    /* Two queries per invocation (each key and value row loaded serves
     * both), or one. */
    if (vec_ok && (s->qlen > 4 || all_masked_rows)) {
        txlm_view v[6] = {q, kv, rk, rw, rr, out};
        int pair = !o->no_paired_attention && !all_masked_rows;
        int sg = s->dh == 64 && !o->no_shuffle && txlm_kernel_usable(o->rec->vk, TXLM_K_ATTN_PAIR_TEXSG64);
        txlm_kernel_id paired = !tex            ? TXLM_K_ATTN_PAIR
                                : sg            ? TXLM_K_ATTN_PAIR_TEXSG64
                                : s->dh == 64   ? TXLM_K_ATTN_PAIR_TEX64
                                : s->dh == 48   ? TXLM_K_ATTN_PAIR_TEX48
                                                : TXLM_K_ATTN_PAIR_TEX;
        txlm_rec_dispatch(o->rec, pair ? paired : TXLM_K_ATTN_FUSED, v, &ps, sizeof ps,
                          div_up(s->qlen, pair ? 16 : 8), s->H, 1);
        txlm_rec_barrier(o->rec);
        return;
    }
    txlm_view scores = probs ? *probs : scratch;
    txlm_view v1[6] = {q, kv, rk, txlm_tensor_view(r_w_bias), txlm_tensor_view(r_r_bias), scores};
    txlm_rec_dispatch(o->rec, TXLM_K_ATTN_SCORES, v1, &ps, sizeof ps, div_up(klen, 64), s->qlen, s->H);
    txlm_rec_barrier(o->rec);

    struct {
        uint32_t rows, n;
    } pm = {s->H * s->qlen, klen};
    txlm_rec_dispatch(o->rec, TXLM_K_SOFTMAX, &scores, &pm, sizeof pm, pm.rows, 1, 1);
    txlm_rec_barrier(o->rec);

    txlm_view v3[3] = {scores, kv, out};
    txlm_rec_dispatch(o->rec, TXLM_K_ATTN_PV, v3, &ps, sizeof ps, div_up(s->H * s->dh, 64), s->qlen, 1);
    txlm_rec_barrier(o->rec);
}

uint64_t txlm_attn_split_bytes(const txlm_attn_shape *s)
{
    uint64_t runs = div_up(s->mlen + s->qlen, TXLM_ATTN_RUN);
    return (uint64_t)s->H * s->qlen * runs * (s->dh + 4) * 4;
}

void txlm_op_attention_terms(txlm_ops *o, const txlm_attn_shape *s, txlm_view q, txlm_view kv, txlm_view rk, uint32_t rk_off,
                             const txlm_gpu_tensor *r_w_bias, const txlm_gpu_tensor *r_r_bias, txlm_view terms)
{
    struct attn_push ps = attn_push_of(s, rk_off);
    txlm_view v[6] = {q, kv, rk, txlm_tensor_view(r_w_bias), txlm_tensor_view(r_r_bias), terms};
    txlm_rec_dispatch(o->rec, TXLM_K_ATTN_TERMS, v, &ps, sizeof ps, div_up(ps.klen, 64), s->qlen, s->H);
    txlm_rec_barrier(o->rec);
}

void txlm_op_logsoftmax(txlm_ops *o, txlm_arg src, txlm_arg dst, const txlm_arg *add, uint32_t add_col, uint32_t rows,
                        uint32_t n, uint32_t n_write, const txlm_arg *pick, uint32_t pick_base, const txlm_arg *row_map)
{
    struct {
        uint32_t rows, n, src_off, ld_src, dst_off, ld_dst, add_off, ld_add, add_col, n_write, pick_off, pick_base, map_off;
    } p = {rows, n, src.off, src.ld, dst.off, dst.ld, add ? add->off : 0, add ? add->ld : 0, add ? add_col : 0xffffffffu,
           n_write, pick ? pick->off : 0xffffffffu, pick_base, row_map ? row_map->off : 0xffffffffu};
    txlm_view views[5] = {src.view, dst.view, add ? add->view : o->dummy, pick ? pick->view : o->dummy,
                          row_map ? row_map->view : o->dummy};
    int tex = o->rec->vk->texel && src.off % 4 == 0 && src.ld % 4 == 0 && txlm_rec_texel_fits(o->rec, src.view);
    txlm_rec_dispatch(o->rec, tex ? TXLM_K_LOGSOFTMAX_TEX : TXLM_K_LOGSOFTMAX, views, &p, sizeof p, rows, 1, 1);
    txlm_rec_barrier(o->rec);
}
