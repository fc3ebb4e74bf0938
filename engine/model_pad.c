/* The device layout's widths. The fast kernels read rows in whole texels
 * or wide words (K a multiple of 16, head vectors a multiple of 4); a
 * model whose d_model, d_head or d_inner is not (the "base" shape: 410,
 * 41, 2100) would run on the plain kernels at a tenth of their speed. Its
 * weights are therefore widened at load with zero rows and columns:
 * zero columns of W meet padding columns of X and add nothing, zero rows
 * of W produce padding columns of Y that are exactly zero, so every
 * activation's padding stays zero from the embedding on (LayerNorm takes
 * its statistics over the real columns and writes zeros after them) and
 * the numbers are those of the unpadded model. */
#include "model_pad.h"

#include <stdlib.h>
#include <string.h>

static uint32_t round_up(uint32_t n, uint32_t m) { return (n + m - 1) / m * m; }

/* The projection-free layout: z is the output layer's input as it is. */
static int direct(const txlm_hparams *h) { return h->div_val == 1 && h->d_embed == h->d_model; }

static txlm_pad pad(uint32_t n, uint32_t to) { return n == to ? (txlm_pad){0, 0} : (txlm_pad){n, to}; }

void txlm_pad_of(const txlm_hparams *h, const txlm_dims *dv, const char *name, txlm_pad out[2])
{
    txlm_pad d = pad(h->d_model, dv->d), dh = pad(h->d_head, dv->dh), di = pad(h->d_inner, dv->di);
    static const struct {
        const char *suffix;
        char rows, cols; /* 'd' d_model, 'h' per head, 'i' d_inner, 0 as is */
    } rules[] = {
        {"dec_attn.qkv_net.weight", 'h', 'd'},   {"dec_attn.r_net.weight", 'h', 'd'},
        {"dec_attn.o_net.weight", 'd', 'h'},     {"dec_attn.layer_norm.weight", 0, 'd'},
        {"dec_attn.layer_norm.bias", 0, 'd'},    {"dec_attn.r_w_bias", 0, 'h'},
        {"dec_attn.r_r_bias", 0, 'h'},           {"pos_ff.CoreNet.0.weight", 'i', 'd'},
        {"pos_ff.CoreNet.0.bias", 0, 'i'},       {"pos_ff.CoreNet.3.weight", 'd', 'i'},
        {"pos_ff.CoreNet.3.bias", 0, 'd'},       {"pos_ff.layer_norm.weight", 0, 'd'},
        {"pos_ff.layer_norm.bias", 0, 'd'},
    };
    out[0] = out[1] = (txlm_pad){0, 0};
    if (!strncmp(name, "layers.", 7)) {
        const char *dot = strchr(name + 7, '.');
        if (!dot) return;
        for (size_t i = 0; i < sizeof rules / sizeof *rules; i++) {
            if (strcmp(dot + 1, rules[i].suffix)) continue;
            char axis[2] = {rules[i].rows, rules[i].cols};
            for (int a = 0; a < 2; a++) out[a] = axis[a] == 'd' ? d : axis[a] == 'h' ? dh : axis[a] == 'i' ? di : out[a];
            return;
        }
        return;
    }
    /* without projections the embedding, the output layer and the cluster
     * logits all take rows of width d_model */
    if (direct(h) && (!strcmp(name, "word_emb.emb_layers.0.weight") || !strcmp(name, "crit.out_layers.0.weight") ||
                      !strcmp(name, "crit.cluster_weight")))
        out[1] = d;
}

void txlm_dims_choose(const txlm_hparams *h, const txlm_file *f, int no_pad, txlm_dims *dv)
{
    dv->d = h->d_model, dv->dh = h->d_head, dv->di = h->d_inner;
    if (no_pad) return; /* comparisons: the unpadded layout */
    txlm_dims want = *dv;
    /* Projections (z · P) would need their own widening; only the
     * projection-free layout widens d_model. */
    if (direct(h)) want.d = round_up(h->d_model, 16);
    /* head vectors in whole vec4s, and H*dh (the output projection's K)
     * a multiple of 16 where 12 more columns per head allow it */
    if (h->d_head % 4) {
        want.dh = round_up(h->d_head, 4);
        for (uint32_t step = 0; step < 3 && h->n_head * want.dh % 16; step++) want.dh += 4;
    }
    want.di = round_up(h->d_inner, 16);
    /* quantised weights keep their blocks: no widening at all then */
    for (uint32_t i = 0; i < txlm_file_tensor_count(f); i++) {
        const txlm_tensor_info *t = txlm_file_tensor(f, i);
        txlm_pad p[2];
        txlm_pad_of(h, &want, t->name, p);
        if ((p[0].n || p[1].n) && t->dtype != TXLM_DT_F32 && t->dtype != TXLM_DT_F16) return;
    }
    *dv = want;
}
