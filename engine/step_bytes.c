/* How many bytes of weights one generated token reads: what a one-token
 * step's speed is measured against (txlm bench, docs/performance.md). */
#include "model.h"

uint64_t txlm_model_step_bytes(const txlm_model *m)
{
    if (!m) return 0;
    uint64_t n = 0;
    /* every layer's tensors but r_net: the position keys it makes are kept */
    for (uint32_t l = 0; l < m->h.n_layer; l++) {
        const txlm_layer *L = &m->layers[l];
        const txlm_gpu_tensor *t[] = {L->qkv,   L->o_net, L->attn_ln_g, L->attn_ln_b, L->r_w_bias, L->r_r_bias,
                                      L->ff_w1, L->ff_b1, L->ff_w2,     L->ff_b2,     L->ff_ln_g,  L->ff_ln_b};
        for (size_t i = 0; i < sizeof t / sizeof *t; i++) n += t[i] ? txlm_tensor_bytes(t[i], t[i]->rows) : 0;
    }
    /* the output layer's head: its cluster's rows, bias and projection,
     * and the logits of the tail clusters; a tail is read only when a
     * draw falls in it */
    const txlm_out_cluster *c = &m->out[0];
    uint32_t rows = c->end - c->begin;
    n += txlm_tensor_bytes(c->weight, rows) + (c->bias ? (uint64_t)rows * 4 : 0);
    if (c->proj_t) n += txlm_tensor_bytes(c->proj_t, c->proj_t->rows);
    if (m->cluster_w) n += txlm_tensor_bytes(m->cluster_w, m->cluster_w->rows);
    if (m->cluster_b) n += txlm_tensor_bytes(m->cluster_b, m->cluster_b->rows);
    return n;
}
