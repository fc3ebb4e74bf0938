/* The tensor table (tensor_table.h). Its shapes are those the HF and the
 * authors' modules create their parameters with, so a shape here is the
 * shape PyTorch saved. */
#include "tensor_table.h"

#include <stdio.h>

#include "dtype.h"
#include "inv_freq.h"

/* How many tensors of a kind a model has. */
enum count_rule {
    N_ONE,       /* one */
    N_LAYERS,    /* n_layer */
    N_TABLES,    /* div_val 1: one table over the whole vocabulary; else one per cluster */
    N_EMB_PROJS, /* div_val 1: one when d_embed != d_model, else none; else one per cluster */
    N_OUT_PROJS, /* one per cluster when there are projections (div_val > 1 or d_embed != d_model) */
    N_TAIL,      /* one when there are tail clusters */
};

/* What a kind is tied to, and when. */
enum tie_rule {
    TIE_NONE,
    TIE_WEIGHT, /* tie_weight: output table i is embedding table i */
    TIE_PROJ,   /* tie_projs[i]: output projection i is the embedding projection (0 with div_val 1) */
};

typedef struct kind {
    const char *name; /* %u: the index */
    uint8_t count, rows, cols, tie, f32_only, optional;
    const char *shared; /* untie_r false: the one checkpoint tensor every layer's copy is */
} kind;

static const kind table[TXLM_TT_COUNT] = {
    [TXLM_TT_EMB_TABLE] = {"word_emb.emb_layers.%u.weight", N_TABLES, TXLM_TD_ROWS, TXLM_TD_WIDTH, TIE_NONE, 0, 0, NULL},
    [TXLM_TT_EMB_PROJ] = {"word_emb.emb_projs.%u", N_EMB_PROJS, TXLM_TD_MODEL, TXLM_TD_WIDTH, TIE_NONE, 0, 0, NULL},
    [TXLM_TT_QKV] = {"layers.%u.dec_attn.qkv_net.weight", N_LAYERS, TXLM_TD_3HD, TXLM_TD_MODEL, TIE_NONE, 0, 0, NULL},
    [TXLM_TT_R_NET] = {"layers.%u.dec_attn.r_net.weight", N_LAYERS, TXLM_TD_HD, TXLM_TD_MODEL, TIE_NONE, 0, 0, NULL},
    [TXLM_TT_O_NET] = {"layers.%u.dec_attn.o_net.weight", N_LAYERS, TXLM_TD_MODEL, TXLM_TD_HD, TIE_NONE, 0, 0, NULL},
    [TXLM_TT_R_W_BIAS] = {"layers.%u.dec_attn.r_w_bias", N_LAYERS, TXLM_TD_HEADS, TXLM_TD_HEAD, TIE_NONE, 1, 0, "r_w_bias"},
    [TXLM_TT_R_R_BIAS] = {"layers.%u.dec_attn.r_r_bias", N_LAYERS, TXLM_TD_HEADS, TXLM_TD_HEAD, TIE_NONE, 1, 0, "r_r_bias"},
    [TXLM_TT_ATTN_LN_W] = {"layers.%u.dec_attn.layer_norm.weight", N_LAYERS, TXLM_TD_MODEL, TXLM_TD_NONE, TIE_NONE, 1, 0, NULL},
    [TXLM_TT_ATTN_LN_B] = {"layers.%u.dec_attn.layer_norm.bias", N_LAYERS, TXLM_TD_MODEL, TXLM_TD_NONE, TIE_NONE, 1, 0, NULL},
    [TXLM_TT_FF_W1] = {"layers.%u.pos_ff.CoreNet.0.weight", N_LAYERS, TXLM_TD_INNER, TXLM_TD_MODEL, TIE_NONE, 0, 0, NULL},
    [TXLM_TT_FF_B1] = {"layers.%u.pos_ff.CoreNet.0.bias", N_LAYERS, TXLM_TD_INNER, TXLM_TD_NONE, TIE_NONE, 1, 0, NULL},
    [TXLM_TT_FF_W2] = {"layers.%u.pos_ff.CoreNet.3.weight", N_LAYERS, TXLM_TD_MODEL, TXLM_TD_INNER, TIE_NONE, 0, 0, NULL},
    [TXLM_TT_FF_B2] = {"layers.%u.pos_ff.CoreNet.3.bias", N_LAYERS, TXLM_TD_MODEL, TXLM_TD_NONE, TIE_NONE, 1, 0, NULL},
    [TXLM_TT_FF_LN_W] = {"layers.%u.pos_ff.layer_norm.weight", N_LAYERS, TXLM_TD_MODEL, TXLM_TD_NONE, TIE_NONE, 1, 0, NULL},
    [TXLM_TT_FF_LN_B] = {"layers.%u.pos_ff.layer_norm.bias", N_LAYERS, TXLM_TD_MODEL, TXLM_TD_NONE, TIE_NONE, 1, 0, NULL},
    [TXLM_TT_OUT_WEIGHT] = {"crit.out_layers.%u.weight", N_TABLES, TXLM_TD_ROWS, TXLM_TD_WIDTH, TIE_WEIGHT, 0, 0, NULL},
    [TXLM_TT_OUT_BIAS] = {"crit.out_layers.%u.bias", N_TABLES, TXLM_TD_ROWS, TXLM_TD_NONE, TIE_NONE, 1, 0, NULL},
    [TXLM_TT_OUT_PROJ] = {"crit.out_projs.%u", N_OUT_PROJS, TXLM_TD_MODEL, TXLM_TD_WIDTH, TIE_PROJ, 0, 0, NULL},
    /* the kernels read the cluster logits' weights as f32 */
    [TXLM_TT_CLUSTER_W] = {"crit.cluster_weight", N_TAIL, TXLM_TD_CUTOFFS, TXLM_TD_EMBED, TIE_NONE, 1, 0, NULL},
    [TXLM_TT_CLUSTER_B] = {"crit.cluster_bias", N_TAIL, TXLM_TD_CUTOFFS, TXLM_TD_NONE, TIE_NONE, 1, 0, NULL},
    [TXLM_TT_INV_FREQ] = {TXLM_INV_FREQ_NAME, N_ONE, TXLM_TD_HALF, TXLM_TD_NONE, TIE_NONE, 1, 1, NULL},
};

static int has_projs(const txlm_hparams *h) { return h->div_val > 1 || h->d_embed != h->d_model; }

static uint32_t count_of(const txlm_hparams *h, uint8_t rule)
{
    int div1 = h->div_val == 1;
    switch (rule) {
    case N_LAYERS: return h->n_layer;
    case N_TABLES: return div1 ? 1 : txlm_n_clusters(h);
    case N_EMB_PROJS: return div1 ? h->d_embed != h->d_model : txlm_n_clusters(h);
    case N_OUT_PROJS: return has_projs(h) ? txlm_n_clusters(h) : 0;
    case N_TAIL: return h->n_cutoffs > 0;
    default: return 1;
    }
}

static uint64_t dim_of(const txlm_hparams *h, uint8_t d, uint32_t i)
{
    uint64_t hd = (uint64_t)h->n_head * h->d_head;
    switch (d) {
    case TXLM_TD_MODEL: return h->d_model;
    case TXLM_TD_INNER: return h->d_inner;
    case TXLM_TD_EMBED: return h->d_embed;
    case TXLM_TD_HEADS: return h->n_head;
    case TXLM_TD_HEAD: return h->d_head;
    case TXLM_TD_HD: return hd;
    case TXLM_TD_3HD: return 3 * hd;
    case TXLM_TD_ROWS: return h->div_val == 1 ? h->n_token : txlm_cluster_end(h, i) - txlm_cluster_begin(h, i);
    case TXLM_TD_WIDTH: return txlm_cluster_dim(h, i);
    case TXLM_TD_CUTOFFS: return h->n_cutoffs;
    case TXLM_TD_HALF: return h->d_model / 2;
    default: return 0;
    }
}

uint32_t txlm_tt_count(const txlm_hparams *h, txlm_tt_id id)
{
    return (unsigned)id < TXLM_TT_COUNT ? count_of(h, table[id].count) : 0;
}

/* Whether tensor i of kind k is tied for h, and to which. */
static int tied_to(const txlm_hparams *h, const kind *k, uint32_t i, txlm_tt_id *id, uint32_t *index)
{
    if (k->tie == TIE_WEIGHT && h->tie_weight) {
        *id = TXLM_TT_EMB_TABLE;
        *index = i;
        return 1;
    }
    if (k->tie == TIE_PROJ && h->tie_projs[i]) {
        *id = TXLM_TT_EMB_PROJ;
        *index = h->div_val == 1 ? 0 : i;
        return 1;
    }
    return 0;
}

int txlm_tt_slot_of(const txlm_hparams *h, txlm_tt_id id, uint32_t i, txlm_tt_slot *s)
{
    if (i >= txlm_tt_count(h, id)) return -1;
    const kind *k = &table[id];
    memset(s, 0, sizeof *s);
    s->id = id;
    s->index = i;
    snprintf(s->name, sizeof s->name, k->name, i);
    s->rank = k->cols == TXLM_TD_NONE ? 1 : 2;
    s->dims[0] = dim_of(h, k->rows, i);
    s->dims[1] = dim_of(h, k->cols, i);
    s->terms[0] = (txlm_tt_dim)k->rows;
    s->terms[1] = (txlm_tt_dim)k->cols;
    s->f32_only = k->f32_only;
    s->optional = k->optional;
    s->tied = (uint8_t)tied_to(h, k, i, &s->tie_id, &s->tie_index);
    if (s->tied) snprintf(s->tie, sizeof s->tie, table[s->tie_id].name, s->tie_index);
    if (k->shared && !h->untie_r) snprintf(s->shared, sizeof s->shared, "%s", k->shared);
    return 0;
}

/* The index name holds in template t's form: the number where t has %u
 * (0 for a template without one), or -1 where name is not of that form. */
static int64_t index_in(const char *t, const char *name)
{
    const char *at = strstr(t, "%u");
    if (!at) return strcmp(t, name) ? -1 : 0;
    size_t lead = (size_t)(at - t);
    if (strncmp(name, t, lead)) return -1;
    const char *c = name + lead;
    int64_t i = 0;
    for (; *c >= '0' && *c <= '9' && i <= UINT32_MAX; c++) i = i * 10 + (*c - '0');
    return c == name + lead || i > UINT32_MAX ? -1 : i;
}

int txlm_tt_find(const txlm_hparams *h, const char *name, txlm_tt_slot *s)
{
    for (uint32_t id = 0; id < TXLM_TT_COUNT; id++) {
        int64_t i = index_in(table[id].name, name);
        /* h must have it, spelt so ("layers.01..." is no tensor's name) */
        if (i >= 0 && !txlm_tt_slot_of(h, (txlm_tt_id)id, (uint32_t)i, s) && !strcmp(s->name, name)) return 0;
    }
    return -1;
}

int txlm_tt_each(const txlm_hparams *h, int (*fn)(void *user, const txlm_tt_slot *s), void *user)
{
    for (uint32_t first = 0; first < TXLM_TT_COUNT;) {
        uint32_t end = first + 1;
        while (end < TXLM_TT_COUNT && table[end].count == table[first].count) end++;
        uint32_t n = count_of(h, table[first].count);
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t id = first; id < end; id++) {
                txlm_tt_slot s;
                if (table[id].optional || txlm_tt_slot_of(h, (txlm_tt_id)id, i, &s)) continue;
                int rc = fn(user, &s);
                if (rc) return rc;
            }
        first = end;
    }
    return 0;
}

uint32_t txlm_tt_stored_dtype(const txlm_tt_slot *s, uint32_t want)
{
    const txlm_dtype_info *di = txlm_dtype_get(want);
    if (s->f32_only || s->rank != 2 || !di) return TXLM_DT_F32;
    if (di->block_elems > 1 && s->dims[1] % di->block_elems) return TXLM_DT_F32;
    return want;
}
