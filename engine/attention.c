/* Relative attention of one stream (txlm_op_attention, ops.h) and the
 * choice of its kernel (attention.h). */
#include "attention.h"

#include <math.h>

static uint32_t div_up(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

txlm_attn_push txlm_attn_push_of(const txlm_attn_shape *s, uint32_t rk_off)
{
    uint32_t klen = s->mlen + s->qlen;
    return (txlm_attn_push){
        .qlen = s->qlen, .mlen = s->mlen, .klen = klen, .H = s->H, .dh = s->dh, .rk_off = rk_off,
        .clamp_max = s->clamp_max, .same_length = s->same_length, .mem_len = s->mem_len,
        .scale = (float)(1.0 / sqrt((double)(s->dh_real ? s->dh_real : s->dh))),
        .kv_row0 = s->kv_row0, .kv_rows = s->kv_rows ? s->kv_rows : s->kv_row0 + klen, .kv_dyn = s->kv_dyn,
        .splits = 1, .q0 = s->q0,
    };
}

void txlm_attn_merge(txlm_ops *o, const txlm_attn_push *ps, txlm_view scratch, txlm_view out, uint32_t qlen,
                     uint32_t streams)
{
    txlm_attn_push pm = *ps;
    pm.zdim = 1;
    txlm_view v2[2] = {scratch, out};
    txlm_rec_dispatch(o->rec, TXLM_K_ATTN_MERGE, v2, &pm, sizeof pm, div_up(ps->H * ps->dh / 4, 64), qlen, streams);
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

/* The attention's candidates, best first (attention_kernel): texel
 * variants where the device prefers them and the inputs fit, those built
 * for one head size where it matches (0: any). */
enum { SG = 1, MERGES = 2 }; /* a lane per element of a head (attn_split_sg.comp); its last run merges */
static const struct attn_rule {
    int texel;
    uint32_t dh;
    txlm_kernel_id id;
    unsigned kind;
} split_rules[] = {
    /* a handful of queries: keys split into runs, merged after */
    {1, 64, TXLM_K_ATTN_SPLIT_SG64_MERGE, SG | MERGES}, /* lanes share a key; the last run merges */
    {1, 64, TXLM_K_ATTN_SPLIT_SG64, SG},
    {1, 48, TXLM_K_ATTN_SPLIT_SG48_MERGE, SG | MERGES},
    {1, 48, TXLM_K_ATTN_SPLIT_SG48, SG},
    {1, 64, TXLM_K_ATTN_SPLIT_TEX64, 0},
    {1, 48, TXLM_K_ATTN_SPLIT_TEX48, 0},
    {1, 0, TXLM_K_ATTN_SPLIT_TEX, 0},
    {0, 0, TXLM_K_ATTN_SPLIT, 0},
}, query_rules[] = {
    /* more queries: two per invocation (a key or value row loaded serves both), or one */
    {1, 64, TXLM_K_ATTN_PAIR_TEXSG64, 0},
    {1, 64, TXLM_K_ATTN_PAIR_TEX64, 0},
    {1, 48, TXLM_K_ATTN_PAIR_TEX48, 0},
    {1, 0, TXLM_K_ATTN_PAIR_TEX, 0},
    {0, 0, TXLM_K_ATTN_PAIR, 0},
    {1, 0, TXLM_K_ATTN_FUSED, 0},
    {0, 0, TXLM_K_ATTN_FUSED, 0},
};

/* The first usable rule for texel (or not) and head size dh, else NULL. */
static const struct attn_rule *attention_rule(const txlm_vk *vk, const struct attn_rule *r, size_t n, int texel,
                                              uint32_t dh, int merge_ok)
{
    for (size_t i = 0; i < n; i++)
        if (r[i].texel == texel && (!r[i].dh || r[i].dh == dh) && txlm_kernel_usable(vk, r[i].id) &&
            (merge_ok || !(r[i].kind & MERGES)))
            return &r[i];
    return NULL;
}

/* A handful of queries (generation): the keys split into runs so that
 * every lane has work, then the runs merged (by the last run of each head
 * group where the counts fit in ops->sync, or a dispatch of their own). */
static int choose_split(const txlm_ops *o, const txlm_attn_shape *s, int tex, txlm_attn_choice *c)
{
    uint32_t klen = s->mlen + s->qlen, groups = div_up(s->H, TXLM_ATTN_SG_HEADS);
    int merge_ok = o->sync.buf && 1 + groups * s->qlen <= o->sync.size / 4;
    const struct attn_rule *r = attention_rule(o->rec->vk, split_rules, sizeof split_rules / sizeof *split_rules, tex,
                                               s->dh, merge_ok);
    if (!r) return 0;
    int sg = (r->kind & SG) != 0;
    c->k = r->id;
    c->path = TXLM_ATTN_SPLIT;
    c->run = sg ? TXLM_ATTN_RUN_SG : TXLM_ATTN_RUN;
    uint32_t nparts = div_up(klen, c->run);
    c->merged = (r->kind & MERGES) != 0;
    c->merge_after = !c->merged;
    c->sync = c->merged ? groups * s->qlen : 0;
    c->scratch = (uint64_t)s->H * s->qlen * nparts * (s->dh + 4) * 4;
    if (sg) c->gx = groups, c->gy = nparts;
    else c->gx = div_up(nparts, 8), c->gy = s->H;
    c->gz = s->qlen;
    return 1;
}

txlm_attn_choice txlm_attn_choose(const txlm_ops *o, const txlm_attn_shape *s, int probs, int tex, uint32_t rk_off,
                                  uint64_t scratch_bytes)
{
    const txlm_vk *vk = o->rec->vk;
    txlm_attn_choice c = {.path = TXLM_ATTN_THREE_PASS, .k = TXLM_K_COUNT, .splits = 1};
    int vec_ok = !probs && s->dh % 4 == 0 && s->dh <= 256 && rk_off % 4 == 0;
    /* same_length with no memory kept can hide every key of a row, which
     * the reference turns into a uniform row; only the one-query kernel
     * (and the three-pass path) carries that case. */
    int all_masked_rows = s->same_length && s->mem_len == 0;
    /* GPUs: 16 queries a workgroup, keys staged in tiles (attn_tile.comp), on
     * the matrix units where the model is not f32 and a head is whole fragments */
    txlm_kernel_id tile = s->f16 && s->dh % 16 == 0 && txlm_kernel_usable(vk, TXLM_K_ATTN_CM) ? TXLM_K_ATTN_CM
                          : txlm_kernel_usable(vk, TXLM_K_ATTN_TILE)                        ? TXLM_K_ATTN_TILE
                                                                                            : TXLM_K_COUNT;
    if (vec_ok && !all_masked_rows && vk->gpu_kernels && s->dh <= 64 && tile < TXLM_K_COUNT) {
        c = (txlm_attn_choice){.path = TXLM_ATTN_TILE, .k = tile, .splits = tile_splits(s, scratch_bytes)};
        c.gx = div_up(s->qlen, 16), c.gy = s->H, c.gz = c.splits;
        /* runs merged by the last of each query tile and head where its
         * count fits in ops->sync, else by attn_merge after */
        txlm_kernel_id merging = tile == TXLM_K_ATTN_CM ? TXLM_K_ATTN_CM_MERGE : TXLM_K_ATTN_TILE_MERGE;
        c.merged = c.splits > 1 && o->sync.buf && 1 + c.gx * c.gy <= o->sync.size / 4 && txlm_kernel_usable(vk, merging);
        c.merge_after = c.splits > 1 && !c.merged;
        if (c.merged) c.k = merging, c.sync = c.gx * c.gy;
        c.scratch = c.splits > 1 ? (uint64_t)c.splits * s->H * s->qlen * (s->dh + 4) * 4 : 0;
        return c;
    }
    if (vec_ok && !all_masked_rows && s->qlen <= 4 && txlm_attn_split_bytes(s) <= scratch_bytes &&
        choose_split(o, s, tex, &c))
        return c;
    if (vec_ok && (s->qlen > 4 || all_masked_rows)) {
        /* the paired kernels need a second query beside each */
        size_t n = sizeof query_rules / sizeof *query_rules, from = all_masked_rows ? n - 2 : 0;
        const struct attn_rule *r = attention_rule(vk, query_rules + from, n - from, tex, s->dh, 0);
        if (r)
            c = (txlm_attn_choice){.path = TXLM_ATTN_QUERY, .k = r->id, .splits = 1,
                                   .gx = div_up(s->qlen, r->id == TXLM_K_ATTN_FUSED ? 8 : 16), .gy = s->H, .gz = 1};
    }
    return c;
}

/* Scores, softmax, then P·V, each a pass of its own (the probabilities are
 * kept in *probs when asked for). */
static void attention_three_pass(txlm_ops *o, const txlm_attn_shape *s, const txlm_attn_push *ps, txlm_view *v,
                                 txlm_view scores, txlm_view out)
{
    uint32_t klen = s->mlen + s->qlen;
    v[5] = scores;
    txlm_rec_dispatch(o->rec, TXLM_K_ATTN_SCORES, v, ps, sizeof *ps, div_up(klen, 64), s->qlen, s->H);
    txlm_rec_barrier(o->rec);
    txlm_softmax_push pm = {s->H * s->qlen, klen};
    txlm_rec_dispatch(o->rec, TXLM_K_SOFTMAX, &scores, &pm, sizeof pm, pm.rows, 1, 1);
    txlm_rec_barrier(o->rec);
    txlm_view v3[3] = {scores, v[1], out};
    txlm_rec_dispatch(o->rec, TXLM_K_ATTN_PV, v3, ps, sizeof *ps, div_up(s->H * s->dh, 64), s->qlen, 1);
    txlm_rec_barrier(o->rec);
}

void txlm_op_attention(txlm_ops *o, const txlm_attention_args *a)
{
    const txlm_rec *rec = o->rec;
    /* the split and paired kernels read their inputs as texels where the device prefers that */
    txlm_view rw = txlm_tensor_view(a->r_w_bias), rr = txlm_tensor_view(a->r_r_bias);
    int tex = rec->vk->texel && txlm_rec_texel_fits(rec, a->q) && txlm_rec_texel_fits(rec, a->kv) &&
              txlm_rec_texel_fits(rec, a->rk) && txlm_rec_texel_fits(rec, rw) && txlm_rec_texel_fits(rec, rr);
    txlm_attn_choice c = txlm_attn_choose(o, a->shape, a->probs != NULL, tex, a->rk_off, a->scratch.size);
    txlm_attn_dispatch(o, a, &c);
}

void txlm_attn_dispatch(txlm_ops *o, const txlm_attention_args *a, const txlm_attn_choice *choice)
{
    const txlm_attn_shape *s = a->shape;
    txlm_view q = a->q, kv = a->kv, rk = a->rk, scratch = a->scratch, out = a->out;
    txlm_attn_choice c = *choice;
    txlm_view rw = txlm_tensor_view(a->r_w_bias), rr = txlm_tensor_view(a->r_r_bias);
    txlm_attn_push ps = txlm_attn_push_of(s, a->rk_off);
    txlm_view v[8] = {q, kv, rk, rw, rr, scratch, o->dummy, o->dummy};
    switch (c.path) {
    case TXLM_ATTN_TILE:
    case TXLM_ATTN_QUERY:
        ps.splits = c.splits;
        v[5] = c.merge_after || c.merged ? scratch : out;
        if (c.merged) v[6] = out, v[7] = o->sync;
        break;
    case TXLM_ATTN_SPLIT:
        ps.merge = (uint32_t)c.merged;
        ps.run = c.run;
        if (c.merged) v[6] = out, v[7] = o->sync;
        break;
    case TXLM_ATTN_THREE_PASS:
        attention_three_pass(o, s, &ps, v, a->probs ? *a->probs : scratch, out);
        return;
    }
    txlm_rec_dispatch(o->rec, c.k, v, &ps, sizeof ps, c.gx, c.gy, c.gz);
    txlm_rec_barrier(o->rec);
    if (c.merge_after) txlm_attn_merge(o, &ps, scratch, out, s->qlen, 1);
}

uint64_t txlm_attn_scratch_most(const txlm_vk *vk, uint32_t H, uint32_t dh, uint32_t mlen, uint32_t max_qlen,
                                uint64_t own_scratch)
{
    txlm_attn_shape s = {.qlen = max_qlen < 4 ? max_qlen : 4, .mlen = mlen, .H = H, .dh = dh};
    uint64_t most = txlm_attn_split_bytes(&s);
    for (uint32_t q = 1; vk->gpu_kernels && q <= max_qlen; q++) {
        s.qlen = q;
        uint64_t n = tile_splits(&s, own_scratch), bytes = n * H * q * (dh + 4) * 4;
        if (n > 1 && bytes > most) most = bytes;
    }
    return most;
}

uint64_t txlm_attn_split_bytes(const txlm_attn_shape *s)
{
    uint64_t runs = div_up(s->mlen + s->qlen, TXLM_ATTN_RUN);
    return (uint64_t)s->H * s->qlen * runs * (s->dh + 4) * 4;
}

void txlm_op_attention_terms(txlm_ops *o, const txlm_attention_args *a)
{
    txlm_attn_push ps = txlm_attn_push_of(a->shape, a->rk_off);
    txlm_view v[6] = {a->q, a->kv, a->rk, txlm_tensor_view(a->r_w_bias), txlm_tensor_view(a->r_r_bias), a->out};
    txlm_rec_dispatch(o->rec, TXLM_K_ATTN_TERMS, v, &ps, sizeof ps, div_up(ps.klen, 64), a->shape->qlen, a->shape->H);
    txlm_rec_barrier(o->rec);
}
