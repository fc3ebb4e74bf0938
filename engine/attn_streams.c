/* The streams' attention in shared dispatches, one per kernel (attn_streams.h). */
#include "attn_streams.h"

#include <stdlib.h>
#include <string.h>

static uint32_t div_up(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
static uint32_t max_u(uint32_t a, uint32_t b) { return a > b ? a : b; }

void txlm_attn_plan_free(txlm_attn_plan *p)
{
    free(p->order), free(p->entry), free(p->words), free(p->choice), free(p->alone), free(p->groups), free(p->kv);
    free(p->rk);
    memset(p, 0, sizeof *p);
}

static int same_choice(const txlm_attn_choice *a, const txlm_attn_choice *b)
{
    return a->path == b->path && a->k == b->k && a->merge_after == b->merge_after && a->run == b->run;
}

static void write_entry(txlm_attn_plan *p, uint32_t e, const txlm_attn_stream *st, uint64_t part_bytes, uint32_t sync,
                        const txlm_attn_choice *c)
{
    uint32_t *w = p->words + TXLM_ENTRY_TABLE + e * TXLM_ENTRY_WORDS;
    const txlm_attn_shape *s = &st->shape;
    w[TXLM_ENTRY_Q0] = st->row0, w[TXLM_ENTRY_QLEN] = s->qlen, w[TXLM_ENTRY_MLEN] = s->mlen;
    w[TXLM_ENTRY_KV_FIRST] = s->kv_row0, w[TXLM_ENTRY_KV_ROWS] = s->kv_rows, w[TXLM_ENTRY_MEM_LEN] = s->mem_len;
    w[TXLM_ENTRY_PART0] = (uint32_t)(part_bytes / 16), w[TXLM_ENTRY_SYNC0] = sync, w[TXLM_ENTRY_SPLITS] = c->splits;
    w[TXLM_ENTRY_SAME_LENGTH] = s->same_length, w[TXLM_ENTRY_CLAMP] = s->clamp_max;
}

typedef struct group_room {
    uint64_t scratch_bytes;
    uint32_t sync_words; /* of the counts buffer bound (txlm_ops.sync) */
} group_room;

/* Places the streams of c[i]'s choice and st[i]'s position-key table
 * (from i on, not yet placed) in groups of at most `slots`, each within
 * the scratch and the counts, each binding the position keys of its
 * stream with the most rows (txlm_attn_group). */
static void place(txlm_attn_plan *p, const txlm_attn_stream *st, const txlm_attn_choice *c, uint32_t n, uint32_t i,
                  uint32_t slots, group_room room, unsigned char *placed, uint32_t *e)
{
    txlm_attn_group *g = NULL;
    uint64_t used = 0;
    uint32_t sync = 0;
    for (uint32_t j = i; j < n; j++) {
        if (placed[j] || !same_choice(&c[i], &c[j]) || st[j].shape.clamp_max != st[i].shape.clamp_max) continue;
        if (!g || g->n == slots || used + c[j].scratch > room.scratch_bytes || 1 + sync + c[j].sync > room.sync_words) {
            g = &p->groups[p->n_groups++];
            *g = (txlm_attn_group){.c = c[j], .k = c[j].k, .first = *e, .rk_stream = j};
            used = 0, sync = 0;
        }
        if (st[j].rk_rows > st[g->rk_stream].rk_rows) g->rk_stream = j;
        write_entry(p, *e, &st[j], used, sync, &c[j]);
        p->entry[j] = *e;
        g->c.gx = max_u(g->c.gx, c[j].gx), g->c.gy = max_u(g->c.gy, c[j].gy), g->c.gz = max_u(g->c.gz, c[j].gz);
        g->max_qlen = max_u(g->max_qlen, st[j].shape.qlen);
        used += c[j].scratch, sync += c[j].sync;
        p->order[(*e)++] = j;
        placed[j] = 1;
        if (++g->n > 1) g->k = txlm_kernel_descs[c[j].k].twin;
    }
}

/* The streams the three-pass attention takes (its scores kept, or a head
 * size the vector kernels do not take): an entry each after the shared
 * ones, for kv_put and their own dispatches. */
static void place_alone(txlm_attn_plan *p, const txlm_attn_stream *st, uint32_t n, uint32_t *e)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!p->alone[i]) continue;
        write_entry(p, *e, &st[i], 0, 0, &p->choice[i]);
        p->entry[i] = *e;
        p->order[(*e)++] = i;
        p->n_alone++;
    }
}

int txlm_attn_plan_make(const txlm_ops *o, const txlm_attn_stream *st, uint32_t n, txlm_view q, uint32_t rk_off,
                        txlm_view rw, txlm_view rr, uint64_t scratch_bytes, txlm_attn_plan *p)
{
    memset(p, 0, sizeof *p);
    const txlm_rec *rec = o->rec;
    txlm_attn_choice *c = p->choice = malloc(n * sizeof *c);
    unsigned char *placed = calloc(n, 1);
    p->alone = calloc(n, 1);
    p->order = malloc(n * sizeof *p->order), p->entry = malloc(n * sizeof *p->entry);
    p->words = calloc(TXLM_ENTRY_TABLE + (size_t)n * TXLM_ENTRY_WORDS, sizeof *p->words);
    p->groups = malloc(n * sizeof *p->groups);
    p->kv = malloc(n * sizeof *p->kv), p->rk = malloc(n * sizeof *p->rk);
    if (!c || !placed || !p->alone || !p->order || !p->entry || !p->words || !p->groups || !p->kv || !p->rk) {
        free(placed);
        txlm_attn_plan_free(p);
        return 0;
    }
    /* the inputs every stream shares (queries, biases) as texels, then its own ring and position keys */
    int shared_tex = rec->vk->texel && txlm_rec_texel_fits(rec, q) && txlm_rec_texel_fits(rec, rw) &&
                     txlm_rec_texel_fits(rec, rr);
    for (uint32_t i = 0; i < n; i++) {
        int tex = shared_tex && txlm_rec_texel_fits(rec, st[i].kv) && txlm_rec_texel_fits(rec, st[i].rk);
        c[i] = txlm_attn_choose(o, &st[i].shape, st[i].probs, tex, rk_off, st[i].own_scratch);
        /* a vector kernel's partial results and counts fit: the scratch
         * holds every stream's own (txlm_workspace_fit), the counts are
         * checked by the choice */
        placed[i] = p->alone[i] = c[i].path == TXLM_ATTN_THREE_PASS;
    }
    uint32_t e = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (placed[i]) continue;
        txlm_kernel_id twin = txlm_kernel_descs[c[i].k].twin;
        uint32_t slots = rec->vk->stream_slots && twin < TXLM_K_COUNT && txlm_kernel_usable(rec->vk, twin) ? TXLM_STREAM_SLOTS : 1;
        place(p, st, c, n, i, slots, (group_room){scratch_bytes, (uint32_t)(o->sync.size / 4)}, placed, &e);
    }
    place_alone(p, st, n, &e);
    free(placed);
    p->n = n;
    p->push = txlm_attn_push_of(&st[0].shape, rk_off);
    return 1;
}

/* The views of a dispatch of entries [first, first + n): the kernel's
 * bindings from v, then binding 1's slots 1 .. TXLM_STREAM_SLOTS - 1
 * (unused ones repeat slot 0). */
static void slot_views(const txlm_attn_plan *p, txlm_kernel_id k, const txlm_view *v, const txlm_view *kv,
                       uint32_t first, uint32_t n, txlm_view *out)
{
    const txlm_kernel_desc *d = &txlm_kernel_descs[k];
    uint32_t at = 0;
    for (uint32_t i = 0; i < d->n_bindings; i++) out[at++] = v[i];
    for (uint32_t s = 1; s < d->slots; s++) out[at++] = kv[p->order[first + (s < n ? s : 0)]];
}

/* Segment length of table entry e. */
static uint32_t entry_qlen(const txlm_attn_plan *p, uint32_t e)
{
    return p->words[TXLM_ENTRY_TABLE + e * TXLM_ENTRY_WORDS + TXLM_ENTRY_QLEN];
}

void txlm_op_attention_streams(txlm_ops *o, const txlm_attention_streams_args *a)
{
    const txlm_attn_plan *p = a->plan;
    txlm_view rw = txlm_tensor_view(a->r_w_bias), rr = txlm_tensor_view(a->r_r_bias);
    for (uint32_t i = 0; i < p->n_groups; i++) {
        const txlm_attn_group *g = &p->groups[i];
        txlm_attn_push ps = p->push;
        ps.table = TXLM_ENTRY_TABLE + g->first * TXLM_ENTRY_WORDS;
        ps.zdim = g->c.gz;
        ps.merge = (uint32_t)g->c.merged;
        ps.run = g->c.run;
        txlm_view v[8] = {a->q, a->kv[p->order[g->first]], a->rk[g->rk_stream], rw, rr,
                          g->c.merge_after || g->c.merged || g->c.path == TXLM_ATTN_SPLIT ? a->scratch : a->out,
                          o->dummy, o->dummy};
        if (g->c.merged) v[6] = a->out, v[7] = o->sync;
        txlm_view views[TXLM_MAX_BINDINGS];
        slot_views(p, g->k, v, a->kv, g->first, g->n, views);
        txlm_rec_dispatch(o->rec, g->k, views, &ps, sizeof ps, g->c.gx, g->c.gy, g->c.gz * g->n);
        txlm_rec_barrier(o->rec);
        if (g->c.merge_after) txlm_attn_merge(o, &ps, a->scratch, a->out, g->max_qlen, g->n);
    }
}

/* Segments of at most this many rows are put 8 streams a dispatch even on
 * CPU devices (vk->stream_slots off): there every case of kv_put's switch
 * runs, but for a few rows that costs less than the dispatches saved. */
#define FEW_ROWS 4u

void txlm_op_kv_put_streams(txlm_ops *o, const txlm_attn_plan *p, txlm_view src, const txlm_view *kv)
{
    uint32_t longest = 0;
    for (uint32_t e = 0; e < p->n; e++) longest = max_u(longest, entry_qlen(p, e));
    int shared = o->rec->vk->stream_slots || longest <= FEW_ROWS;
    uint32_t slots = shared && txlm_kernel_usable(o->rec->vk, TXLM_K_KV_PUT_X8) ? TXLM_STREAM_SLOTS : 1;
    for (uint32_t first = 0; first < p->n; first += slots) {
        uint32_t n = p->n - first < slots ? p->n - first : slots, rows = 0;
        for (uint32_t e = first; e < first + n; e++) rows = max_u(rows, entry_qlen(p, e));
        txlm_kernel_id k = n > 1 ? TXLM_K_KV_PUT_X8 : TXLM_K_KV_PUT;
        txlm_attn_push ps = p->push;
        ps.table = TXLM_ENTRY_TABLE + first * TXLM_ENTRY_WORDS;
        ps.zdim = 1;
        txlm_view v[2] = {src, kv[p->order[first]]}, views[TXLM_MAX_BINDINGS];
        slot_views(p, k, v, kv, first, n, views);
        txlm_rec_dispatch(o->rec, k, views, &ps, sizeof ps, div_up(2 * ps.H * ps.dh / 4, 64), rows, n);
    }
}
