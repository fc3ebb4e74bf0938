/* The device layout's widths. The fast kernels read rows in whole texels
 * or wide words (K a multiple of 16, head vectors a multiple of 4); a
 * model whose d_model, d_head or d_inner is not (the "base" shape: 410,
 * 41, 2100) would run on the plain kernels at a tenth of their speed. Its
 * weights are therefore widened at load with zero rows and columns:
 * zero columns of W meet padding columns of X and add nothing, zero rows
 * of W produce padding columns of Y that are exactly zero, so every
 * activation's padding stays zero from the embedding on (LayerNorm takes
 * its statistics over the real columns and writes zeros after them) and
 * the numbers are those of the unpadded model. Which dimensions widen
 * follows from the tensor table's shapes (format/container/tensor_table.c):
 * every d_model, d_head and d_inner they are made of. */
#include "model_pad.h"

#include "tensor_table.h"

static uint32_t round_up(uint32_t n, uint32_t m) { return (n + m - 1) / m * m; }

/* The projection-free layout: z is the output layer's input as it is. */
static int direct(const txlm_hparams *h) { return h->div_val == 1 && h->d_embed == h->d_model; }

static txlm_pad pad(uint32_t n, uint32_t to) { return n == to ? (txlm_pad){0, 0} : (txlm_pad){n, to}; }

/* How a dimension widens, by what it is in the tensor table's terms:
 * d_model's, a head's (H*dh and 3*H*dh are runs of d_head, each widened),
 * d_inner's. A cluster's width and d_embed are d_model's in the
 * projection-free layout, the only one whose d_model widens; counts
 * (heads, vocabulary rows, cutoffs) and d_model / 2 never widen. */
static txlm_pad widening(const txlm_hparams *h, const txlm_dims *dv, txlm_tt_dim term)
{
    switch (term) {
    case TXLM_TD_MODEL: return pad(h->d_model, dv->d);
    case TXLM_TD_EMBED:
    case TXLM_TD_WIDTH: return direct(h) ? pad(h->d_model, dv->d) : pad(0, 0);
    case TXLM_TD_HEAD:
    case TXLM_TD_HD:
    case TXLM_TD_3HD: return pad(h->d_head, dv->dh);
    case TXLM_TD_INNER: return pad(h->d_inner, dv->di);
    default: return pad(0, 0);
    }
}

void txlm_pad_of(const txlm_hparams *h, const txlm_dims *dv, const char *name, txlm_pad out[2])
{
    txlm_tt_slot s;
    out[0] = out[1] = pad(0, 0);
    /* a tensor the table does not give h is uploaded as stored (nothing binds it) */
    if (txlm_tt_find(h, name, &s)) return;
    /* a vector is one row: its one dimension is the columns */
    if (s.rank == 1) out[1] = widening(h, dv, s.terms[0]);
    else out[0] = widening(h, dv, s.terms[0]), out[1] = widening(h, dv, s.terms[1]);
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
