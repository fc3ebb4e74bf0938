/* The canonical tensor list. It mirrors how the HF / authors' modules
 * create their parameters, so a shape here is the shape PyTorch saved. */
#include "pack_names.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <txlm_status.h>

typedef struct builder {
    txlm_pack_name *names;
    uint32_t n;
    txlm_pack_tie *ties;
    uint32_t n_ties;
} builder;

static void add_src(builder *b, const char *src, uint32_t rank, uint64_t d0, uint64_t d1, const char *fmt, ...)
    TXLM_PRINTF(6, 7);
static void add_src(builder *b, const char *src, uint32_t rank, uint64_t d0, uint64_t d1, const char *fmt, ...)
{
    txlm_pack_name *p = &b->names[b->n++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->name, sizeof p->name, fmt, ap);
    va_end(ap);
    snprintf(p->src, sizeof p->src, "%s", src ? src : p->name);
    p->rank = rank;
    p->dims[0] = d0;
    p->dims[1] = rank > 1 ? d1 : 0;
}

#define add(b, rank, d0, d1, ...) add_src(b, NULL, rank, d0, d1, __VA_ARGS__)

static void tie(builder *b, const char *target, const char *fmt, uint32_t c)
{
    txlm_pack_tie *t = &b->ties[b->n_ties++];
    snprintf(t->src, sizeof t->src, fmt, c);
    snprintf(t->target, sizeof t->target, "%s", target);
}

static void embedding(builder *b, const txlm_hparams *h)
{
    if (h->div_val == 1) {
        add(b, 2, h->n_token, h->d_embed, "word_emb.emb_layers.0.weight");
        if (h->d_embed != h->d_model) add(b, 2, h->d_model, h->d_embed, "word_emb.emb_projs.0");
        return;
    }
    for (uint32_t c = 0; c < txlm_n_clusters(h); c++)
        add(b, 2, txlm_cluster_end(h, c) - txlm_cluster_begin(h, c), txlm_cluster_dim(h, c), "word_emb.emb_layers.%u.weight", c);
    for (uint32_t c = 0; c < txlm_n_clusters(h); c++)
        add(b, 2, h->d_model, txlm_cluster_dim(h, c), "word_emb.emb_projs.%u", c);
}

static void layer(builder *b, const txlm_hparams *h, uint32_t n)
{
    uint64_t d = h->d_model, hd = (uint64_t)h->n_head * h->d_head;
    add(b, 2, 3 * hd, d, "layers.%u.dec_attn.qkv_net.weight", n);
    add(b, 2, hd, d, "layers.%u.dec_attn.r_net.weight", n);
    add(b, 2, d, hd, "layers.%u.dec_attn.o_net.weight", n);
    /* Shared biases (untie_r false) live once at the top level; every
     * layer gets its own copy in the file. torch.save state dicts of HF
     * models also list the shared tensor under each layer's name: such a
     * copy must equal the shared one. */
    add_src(b, h->untie_r ? NULL : "r_w_bias", 2, h->n_head, h->d_head, "layers.%u.dec_attn.r_w_bias", n);
    add_src(b, h->untie_r ? NULL : "r_r_bias", 2, h->n_head, h->d_head, "layers.%u.dec_attn.r_r_bias", n);
    if (!h->untie_r) {
        tie(b, "r_w_bias", "layers.%u.dec_attn.r_w_bias", n);
        tie(b, "r_r_bias", "layers.%u.dec_attn.r_r_bias", n);
    }
    add(b, 1, d, 0, "layers.%u.dec_attn.layer_norm.weight", n);
    add(b, 1, d, 0, "layers.%u.dec_attn.layer_norm.bias", n);
    add(b, 2, h->d_inner, d, "layers.%u.pos_ff.CoreNet.0.weight", n);
    add(b, 1, h->d_inner, 0, "layers.%u.pos_ff.CoreNet.0.bias", n);
    add(b, 2, d, h->d_inner, "layers.%u.pos_ff.CoreNet.3.weight", n);
    add(b, 1, d, 0, "layers.%u.pos_ff.CoreNet.3.bias", n);
    add(b, 1, d, 0, "layers.%u.pos_ff.layer_norm.weight", n);
    add(b, 1, d, 0, "layers.%u.pos_ff.layer_norm.bias", n);
}

static void crit(builder *b, const txlm_hparams *h)
{
    uint32_t n_out = h->div_val == 1 ? 1 : txlm_n_clusters(h);
    for (uint32_t c = 0; c < n_out; c++) {
        char emb[TXLM_MAX_NAME];
        snprintf(emb, sizeof emb, "word_emb.emb_layers.%u.weight", c);
        uint64_t rows = h->div_val == 1 ? h->n_token : txlm_cluster_end(h, c) - txlm_cluster_begin(h, c);
        if (h->tie_weight) tie(b, emb, "crit.out_layers.%u.weight", c);
        else add(b, 2, rows, txlm_cluster_dim(h, c), "crit.out_layers.%u.weight", c);
        add(b, 1, rows, 0, "crit.out_layers.%u.bias", c);
    }
    /* div_val 1 has one projection per cluster all the same size, tied
     * (when tied) to the single embedding projection. */
    int has_proj = h->div_val > 1 || h->d_embed != h->d_model;
    for (uint32_t c = 0; has_proj && c < txlm_n_clusters(h); c++) {
        char emb[TXLM_MAX_NAME];
        snprintf(emb, sizeof emb, "word_emb.emb_projs.%u", h->div_val == 1 ? 0 : c);
        if (h->tie_projs[c]) tie(b, emb, "crit.out_projs.%u", c);
        else add(b, 2, h->d_model, txlm_cluster_dim(h, c), "crit.out_projs.%u", c);
    }
    if (h->n_cutoffs > 0) {
        add(b, 2, h->n_cutoffs, h->d_embed, "crit.cluster_weight");
        add(b, 1, h->n_cutoffs, 0, "crit.cluster_bias");
    }
}

int txlm_pack_names(const txlm_hparams *h, txlm_pack_name **names, uint32_t *n_names, txlm_pack_tie **ties,
                    uint32_t *n_ties, txlm_err *err)
{
    uint32_t nc = txlm_n_clusters(h);
    /* Upper bounds; validated hparams keep these small (n_layer <= 1024). */
    size_t cap = 2 * (size_t)nc + 2 + 13 * (size_t)h->n_layer + 3 * (size_t)nc + 2;
    size_t tie_cap = 2 * (size_t)nc + 2 * (size_t)h->n_layer;
    builder b = {malloc(cap * sizeof *b.names), 0, malloc(tie_cap * sizeof *b.ties), 0};
    if (!b.names || !b.ties) {
        free(b.names);
        free(b.ties);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory for %zu tensor names", cap);
    }
    embedding(&b, h);
    for (uint32_t n = 0; n < h->n_layer; n++) layer(&b, h, n);
    crit(&b, h);
    *names = b.names;
    *n_names = b.n;
    *ties = b.ties;
    *n_ties = b.n_ties;
    return 0;
}
