/* The tensor table (format/container/tensor_table.h) against the list of
 * docs/tensors.md, written out here for three shapes of model: names in
 * file order, shapes, ties, shared r biases and the stored-type rule. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "dtype.h"
#include "tensor_table.h"

typedef struct listing {
    char text[8192];
    size_t len;
} listing;

/* One line per tensor: "name [d0, d1] f32 -> tie = shared". */
static int render(void *user, const txlm_tt_slot *s)
{
    listing *l = user;
    char dims[64];
    if (s->rank == 2) snprintf(dims, sizeof dims, "[%" PRIu64 ", %" PRIu64 "]", s->dims[0], s->dims[1]);
    else snprintf(dims, sizeof dims, "[%" PRIu64 "]", s->dims[0]);
    l->len += (size_t)snprintf(l->text + l->len, sizeof l->text - l->len, "%s %s%s%s%s%s%s\n", s->name, dims,
                               s->f32_only ? " f32" : "", s->tied ? " -> " : "", s->tied ? s->tie : "",
                               s->shared[0] ? " = " : "", s->shared);
    return 0;
}

static void expect_list(const char *what, const txlm_hparams *h, const char *want)
{
    listing l = {"", 0};
    txlm_tt_each(h, render, &l);
    CHECK(!strcmp(l.text, want), "%s: got\n%s\nwanted\n%s", what, l.text, want);
}

static txlm_hparams base(void)
{
    txlm_hparams h;
    memset(&h, 0, sizeof h);
    h.n_token = 100, h.d_model = 48, h.d_embed = 48, h.n_head = 4, h.d_head = 12, h.d_inner = 96, h.n_layer = 1;
    h.div_val = 1, h.untie_r = 1, h.tie_weight = 1;
    return h;
}

#define LAYER0_HEAD                                 \
    "layers.0.dec_attn.qkv_net.weight [144, 48]\n" \
    "layers.0.dec_attn.r_net.weight [48, 48]\n"    \
    "layers.0.dec_attn.o_net.weight [48, 48]\n"
#define LAYER0_TAIL                                    \
    "layers.0.dec_attn.layer_norm.weight [48] f32\n"  \
    "layers.0.dec_attn.layer_norm.bias [48] f32\n"    \
    "layers.0.pos_ff.CoreNet.0.weight [96, 48]\n"     \
    "layers.0.pos_ff.CoreNet.0.bias [96] f32\n"       \
    "layers.0.pos_ff.CoreNet.3.weight [48, 96]\n"     \
    "layers.0.pos_ff.CoreNet.3.bias [48] f32\n"       \
    "layers.0.pos_ff.layer_norm.weight [48] f32\n"    \
    "layers.0.pos_ff.layer_norm.bias [48] f32\n"
static const char layer0[] = LAYER0_HEAD "layers.0.dec_attn.r_w_bias [4, 12] f32\n"
                                         "layers.0.dec_attn.r_r_bias [4, 12] f32\n" LAYER0_TAIL;
/* untie_r false: each layer's copy is the checkpoint's one shared tensor */
static const char layer0_shared[] = LAYER0_HEAD "layers.0.dec_attn.r_w_bias [4, 12] f32 = r_w_bias\n"
                                                "layers.0.dec_attn.r_r_bias [4, 12] f32 = r_r_bias\n" LAYER0_TAIL;

/* div_val 1, no projections, no tail clusters, tied output table. */
static void test_plain(void)
{
    txlm_hparams h = base();
    char want[4096];
    snprintf(want, sizeof want, "word_emb.emb_layers.0.weight [100, 48]\n%s"
             "crit.out_layers.0.weight [100, 48] -> word_emb.emb_layers.0.weight\n"
             "crit.out_layers.0.bias [100] f32\n", layer0);
    expect_list("plain", &h, want);
    txlm_tt_slot s;
    CHECK(txlm_tt_slot_of(&h, TXLM_TT_EMB_PROJ, 0, &s) == -1, "a projection without projections");
    CHECK(txlm_tt_slot_of(&h, TXLM_TT_CLUSTER_W, 0, &s) == -1, "cluster weights without clusters");
    CHECK(txlm_tt_slot_of(&h, TXLM_TT_QKV, 1, &s) == -1, "layer 1 of 1");
    CHECK(txlm_tt_slot_of(&h, TXLM_TT_INV_FREQ, 0, &s) == 0 && s.optional && s.f32_only && s.dims[0] == 24 &&
              !strcmp(s.name, "pos_emb.inv_freq"), "inv_freq: %s [%" PRIu64 "]", s.name, s.dims[0]);
}

/* div_val 1 with d_embed != d_model and two cutoffs: one table sliced by
 * cluster, one embedding projection every cluster's output may tie to. */
static void test_div1_projected(void)
{
    txlm_hparams h = base();
    h.d_embed = 32, h.n_cutoffs = 2, h.cutoffs[0] = 20, h.cutoffs[1] = 60;
    h.tie_weight = 0, h.tie_projs[0] = 1, h.tie_projs[2] = 1, h.untie_r = 0;
    char want[4096];
    snprintf(want, sizeof want, "word_emb.emb_layers.0.weight [100, 32]\n"
             "word_emb.emb_projs.0 [48, 32]\n%s"
             "crit.out_layers.0.weight [100, 32]\n"
             "crit.out_layers.0.bias [100] f32\n"
             "crit.out_projs.0 [48, 32] -> word_emb.emb_projs.0\n"
             "crit.out_projs.1 [48, 32]\n"
             "crit.out_projs.2 [48, 32] -> word_emb.emb_projs.0\n"
             "crit.cluster_weight [2, 32] f32\n"
             "crit.cluster_bias [2] f32\n", layer0_shared);
    expect_list("div_val 1 projected", &h, want);
}

/* div_val 2: a table and a projection per cluster, widths halving. */
static void test_adaptive(void)
{
    txlm_hparams h = base();
    h.d_embed = 64, h.div_val = 2, h.n_cutoffs = 1, h.cutoffs[0] = 30, h.n_layer = 2;
    h.tie_projs[1] = 1;
    listing l = {"", 0};
    txlm_tt_each(&h, render, &l);
    const char *want_head = "word_emb.emb_layers.0.weight [30, 64]\n"
                            "word_emb.emb_layers.1.weight [70, 32]\n"
                            "word_emb.emb_projs.0 [48, 64]\n"
                            "word_emb.emb_projs.1 [48, 32]\n"
                            "layers.0.dec_attn.qkv_net.weight [144, 48]\n";
    const char *want_tail = "layers.1.pos_ff.layer_norm.bias [48] f32\n"
                            "crit.out_layers.0.weight [30, 64] -> word_emb.emb_layers.0.weight\n"
                            "crit.out_layers.0.bias [30] f32\n"
                            "crit.out_layers.1.weight [70, 32] -> word_emb.emb_layers.1.weight\n"
                            "crit.out_layers.1.bias [70] f32\n"
                            "crit.out_projs.0 [48, 64]\n"
                            "crit.out_projs.1 [48, 32] -> word_emb.emb_projs.1\n"
                            "crit.cluster_weight [1, 64] f32\n"
                            "crit.cluster_bias [1] f32\n";
    size_t tl = strlen(want_tail);
    CHECK(!strncmp(l.text, want_head, strlen(want_head)) && l.len >= tl && !strcmp(l.text + l.len - tl, want_tail),
          "adaptive: got\n%s", l.text);
    CHECK(strstr(l.text, "layers.1.dec_attn.qkv_net.weight [144, 48]\n") != NULL, "adaptive: no layer 1");
    txlm_tt_slot s;
    CHECK(!txlm_tt_slot_of(&h, TXLM_TT_OUT_WEIGHT, 1, &s) && s.tied && s.tie_id == TXLM_TT_EMB_TABLE && s.tie_index == 1,
          "tie of output table 1");
}

/* Matrices take the asked type; vectors, r biases and cluster weights stay
 * f32, and so do rows that are not whole blocks of a block type. */
static void test_stored_dtype(void)
{
    txlm_hparams h = base();
    h.d_embed = 40, h.div_val = 1, h.n_cutoffs = 1, h.cutoffs[0] = 50, h.tie_weight = 0;
    txlm_tt_slot s;
    txlm_tt_slot_of(&h, TXLM_TT_FF_W2, 0, &s); /* [48, 96]: 3 blocks a row */
    CHECK(txlm_tt_stored_dtype(&s, TXLM_DT_Q8_0) == TXLM_DT_Q8_0 && txlm_tt_stored_dtype(&s, TXLM_DT_Q4_0) == TXLM_DT_Q4_0 &&
              txlm_tt_stored_dtype(&s, TXLM_DT_F16) == TXLM_DT_F16 && txlm_tt_stored_dtype(&s, TXLM_DT_F32) == TXLM_DT_F32,
          "a matrix of whole blocks");
    txlm_tt_slot_of(&h, TXLM_TT_QKV, 0, &s); /* [144, 48]: 1.5 blocks a row */
    CHECK(txlm_tt_stored_dtype(&s, TXLM_DT_Q8_0) == TXLM_DT_F32 && txlm_tt_stored_dtype(&s, TXLM_DT_F16) == TXLM_DT_F16,
          "rows of part blocks");
    static const txlm_tt_id f32_only[] = {TXLM_TT_R_W_BIAS, TXLM_TT_R_R_BIAS, TXLM_TT_CLUSTER_W, TXLM_TT_FF_B1,
                                          TXLM_TT_ATTN_LN_W, TXLM_TT_OUT_BIAS, TXLM_TT_CLUSTER_B};
    for (size_t i = 0; i < sizeof f32_only / sizeof *f32_only; i++) {
        CHECK(!txlm_tt_slot_of(&h, f32_only[i], 0, &s), "kind %d absent", (int)f32_only[i]);
        CHECK(txlm_tt_stored_dtype(&s, TXLM_DT_F16) == TXLM_DT_F32, "%s stored as f16", s.name);
    }
}

/* Every tensor is found by its name as the same slot; a name that is not
 * one of h's tensors, spelt as the table spells it, is not found. */
static int found_again(void *user, const txlm_tt_slot *s)
{
    const txlm_hparams *h = user;
    txlm_tt_slot f;
    CHECK(!txlm_tt_find(h, s->name, &f) && f.id == s->id && f.index == s->index && f.dims[0] == s->dims[0] &&
              f.dims[1] == s->dims[1] && f.terms[0] == s->terms[0] && f.terms[1] == s->terms[1],
          "%s not found as itself", s->name);
    return 0;
}

static void test_find(void)
{
    txlm_hparams h = base();
    h.d_embed = 64, h.div_val = 2, h.n_cutoffs = 1, h.cutoffs[0] = 30, h.n_layer = 12;
    txlm_tt_each(&h, found_again, &h);
    txlm_tt_slot s;
    CHECK(!txlm_tt_find(&h, "pos_emb.inv_freq", &s) && s.id == TXLM_TT_INV_FREQ, "the optional inv_freq");
    CHECK(!txlm_tt_find(&h, "layers.11.pos_ff.CoreNet.3.weight", &s) && s.id == TXLM_TT_FF_W2 && s.index == 11,
          "layer 11's ff2: %d.%u", (int)s.id, s.index);
    static const char *none[] = {
        "layers.12.dec_attn.qkv_net.weight",          /* past n_layer */
        "layers.01.dec_attn.qkv_net.weight",          /* not the table's spelling of 1 */
        "layers..dec_attn.qkv_net.weight",            /* no index */
        "layers.4294967296.dec_attn.qkv_net.weight",  /* past 32 bits */
        "layers.0.dec_attn.qkv_net.weight.x",         /* longer */
        "layers.0.dec_attn.qkv_net",                  /* shorter */
        "word_emb.emb_projs.2",                       /* two clusters */
        "transformer.layers.0.dec_attn.r_w_bias",     /* HF's prefix is the importers' to strip */
        "",
    };
    for (size_t i = 0; i < sizeof none / sizeof *none; i++)
        CHECK(txlm_tt_find(&h, none[i], &s) == -1, "'%s' found", none[i]);
    h.n_cutoffs = 0, h.div_val = 1, h.d_embed = h.d_model;
    CHECK(txlm_tt_find(&h, "crit.cluster_weight", &s) == -1, "cluster weights without clusters");
}

/* What each dimension is in hyper-parameter terms (model_pad.c widens by them). */
static void test_terms(void)
{
    txlm_hparams h = base();
    static const struct {
        txlm_tt_id id;
        txlm_tt_dim rows, cols;
    } want[] = {
        {TXLM_TT_EMB_TABLE, TXLM_TD_ROWS, TXLM_TD_WIDTH},   {TXLM_TT_QKV, TXLM_TD_3HD, TXLM_TD_MODEL},
        {TXLM_TT_R_NET, TXLM_TD_HD, TXLM_TD_MODEL},         {TXLM_TT_O_NET, TXLM_TD_MODEL, TXLM_TD_HD},
        {TXLM_TT_R_W_BIAS, TXLM_TD_HEADS, TXLM_TD_HEAD},    {TXLM_TT_ATTN_LN_B, TXLM_TD_MODEL, TXLM_TD_NONE},
        {TXLM_TT_FF_W1, TXLM_TD_INNER, TXLM_TD_MODEL},      {TXLM_TT_FF_B1, TXLM_TD_INNER, TXLM_TD_NONE},
        {TXLM_TT_FF_W2, TXLM_TD_MODEL, TXLM_TD_INNER},      {TXLM_TT_OUT_BIAS, TXLM_TD_ROWS, TXLM_TD_NONE},
        {TXLM_TT_INV_FREQ, TXLM_TD_HALF, TXLM_TD_NONE},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        txlm_tt_slot s;
        CHECK(!txlm_tt_slot_of(&h, want[i].id, 0, &s) && s.terms[0] == want[i].rows && s.terms[1] == want[i].cols,
              "%s: terms %d, %d", s.name, (int)s.terms[0], (int)s.terms[1]);
    }
}

int main(void)
{
    test_find();
    test_terms();
    test_plain();
    test_div1_projected();
    test_adaptive();
    test_stored_dtype();
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
