/* The forward pass as the reference implementation computes it, kept
 * deliberately naive: the memory holds layer inputs and is re-projected
 * every segment, and R · Wr^T is recomputed for every segment, so that a
 * shortcut taken by the engine is checked rather than copied. */
#include "ref_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm.h>

#include "quantize.h"
#include "ref_ops.h"
#include "tensor_table.h"
#include "txlm_file.h"

typedef struct ref_layer {
    const float *qkv, *r_net, *o_net, *attn_ln_g, *attn_ln_b, *r_w_bias, *r_r_bias;
    const float *ff_w1, *ff_b1, *ff_w2, *ff_b2, *ff_ln_g, *ff_ln_b;
} ref_layer;

typedef struct ref_cluster {
    uint32_t begin, end, dim;
    const float *emb, *emb_proj;   /* embedding table rows of this cluster, projection [d_model, dim] or NULL */
    const float *weight, *bias;    /* output rows / biases of this cluster */
    const float *proj;             /* output projection [d_model, dim] or NULL */
} ref_cluster;

struct ref_model {
    txlm_hparams h;
    uint32_t n_tensors;
    char (*names)[TXLM_MAX_NAME];
    float **data;                  /* every tensor dequantised to f32 */
    ref_layer *layers;
    ref_cluster cl[TXLM_MAX_CLUSTERS];
    const float *cluster_w, *cluster_b;
};

struct ref_session {
    const ref_model *m;
    uint32_t mem_len, mlen;
    int32_t clamp_len;
    int same_length;
    float **mem;                   /* per layer [mem_len, d_model]: that layer's inputs */
};

static const float *find(const ref_model *m, const char *name)
{
    for (uint32_t i = 0; i < m->n_tensors; i++)
        if (!strcmp(m->names[i], name)) return m->data[i];
    return NULL;
}

/* Tensor i of kind id as the table names it; a tied one is its target. */
static const float *need(const ref_model *m, txlm_err *err, int *rc, txlm_tt_id id, uint32_t i)
{
    txlm_tt_slot s;
    if (txlm_tt_slot_of(&m->h, id, i, &s)) {
        if (!*rc) *rc = txlm_fail(err, TXLM_ERR_FORMAT, "reference: no tensor %d.%u for these hyper-parameters", (int)id, i);
        return NULL;
    }
    if (s.tied) return need(m, err, rc, s.tie_id, s.tie_index);
    const float *p = find(m, s.name);
    if (!p && !*rc) *rc = txlm_fail(err, TXLM_ERR_FORMAT, "reference: model has no tensor '%s'", s.name);
    return p;
}

static int bind(ref_model *m, txlm_err *err)
{
    const txlm_hparams *h = &m->h;
    int rc = 0, div1 = h->div_val == 1;
    m->layers = calloc(h->n_layer ? h->n_layer : 1, sizeof *m->layers);
    if (!m->layers) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "reference: out of memory");
    for (uint32_t n = 0; n < h->n_layer; n++) {
        ref_layer *L = &m->layers[n];
        L->qkv = need(m, err, &rc, TXLM_TT_QKV, n);
        L->r_net = need(m, err, &rc, TXLM_TT_R_NET, n);
        L->o_net = need(m, err, &rc, TXLM_TT_O_NET, n);
        L->attn_ln_g = need(m, err, &rc, TXLM_TT_ATTN_LN_W, n);
        L->attn_ln_b = need(m, err, &rc, TXLM_TT_ATTN_LN_B, n);
        L->r_w_bias = need(m, err, &rc, TXLM_TT_R_W_BIAS, n);
        L->r_r_bias = need(m, err, &rc, TXLM_TT_R_R_BIAS, n);
        L->ff_w1 = need(m, err, &rc, TXLM_TT_FF_W1, n);
        L->ff_b1 = need(m, err, &rc, TXLM_TT_FF_B1, n);
        L->ff_w2 = need(m, err, &rc, TXLM_TT_FF_W2, n);
        L->ff_b2 = need(m, err, &rc, TXLM_TT_FF_B2, n);
        L->ff_ln_g = need(m, err, &rc, TXLM_TT_FF_LN_W, n);
        L->ff_ln_b = need(m, err, &rc, TXLM_TT_FF_LN_B, n);
    }
    for (uint32_t c = 0; c < txlm_n_clusters(h); c++) {
        ref_cluster *cl = &m->cl[c];
        cl->begin = txlm_cluster_begin(h, c);
        cl->end = txlm_cluster_end(h, c);
        cl->dim = txlm_cluster_dim(h, c);
        /* div_val 1: one table and one output layer, sliced by cluster */
        uint32_t t = div1 ? 0 : c, row0 = div1 ? cl->begin : 0;
        const float *table = need(m, err, &rc, TXLM_TT_EMB_TABLE, t);
        const float *bias = need(m, err, &rc, TXLM_TT_OUT_BIAS, t);
        const float *weight = need(m, err, &rc, TXLM_TT_OUT_WEIGHT, t);
        if (rc) return rc;
        cl->emb = table + (size_t)row0 * cl->dim;
        cl->weight = weight + (size_t)row0 * cl->dim;
        cl->bias = bias + row0;
        if (c < txlm_tt_count(h, TXLM_TT_OUT_PROJ)) {
            cl->emb_proj = need(m, err, &rc, TXLM_TT_EMB_PROJ, t);
            cl->proj = need(m, err, &rc, TXLM_TT_OUT_PROJ, c);
        }
    }
    if (txlm_tt_count(h, TXLM_TT_CLUSTER_W)) {
        m->cluster_w = need(m, err, &rc, TXLM_TT_CLUSTER_W, 0);
        m->cluster_b = need(m, err, &rc, TXLM_TT_CLUSTER_B, 0);
    }
    return rc;
}

int ref_model_open(const char *path, ref_model **out, txlm_err *err)
{
    *out = NULL;
    txlm_file *f = NULL;
    int rc = txlm_file_open(path, 0, &f, err);
    if (rc) return rc;
    ref_model *m = calloc(1, sizeof *m);
    m->h = *txlm_file_hparams(f);
    m->n_tensors = txlm_file_tensor_count(f);
    m->names = calloc(m->n_tensors + 1, sizeof *m->names);
    m->data = calloc(m->n_tensors + 1, sizeof *m->data);
    for (uint32_t i = 0; !rc && i < m->n_tensors; i++) {
        const txlm_tensor_info *t = txlm_file_tensor(f, i);
        snprintf(m->names[i], sizeof m->names[i], "%s", t->name);
        m->data[i] = malloc((t->n_elems ? t->n_elems : 1) * sizeof(float));
        if (!m->data[i]) rc = txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "reference: out of memory for '%s'", t->name);
        else txlm_dequantize(t->dtype, txlm_file_data(f, t), t->n_elems, m->data[i]);
    }
    txlm_file_close(f);
    if (!rc) rc = bind(m, err);
    if (rc) {
        ref_model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

void ref_model_free(ref_model *m)
{
    if (!m) return;
    for (uint32_t i = 0; i < m->n_tensors; i++) free(m->data[i]);
    free(m->data);
    free(m->names);
    free(m->layers);
    free(m);
}

const txlm_hparams *ref_model_hparams(const ref_model *m) { return &m->h; }

int ref_session_new(const ref_model *m, const ref_session_options *opts, ref_session **out, txlm_err *err)
{
    const txlm_hparams *h = &m->h;
    ref_session *s = calloc(1, sizeof *s);
    if (!s) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "reference: out of memory");
    s->m = m;
    s->mem_len = opts && opts->mem_len ? opts->mem_len : h->mem_len;
    s->clamp_len = opts && opts->clamp_len ? opts->clamp_len : h->clamp_len;
    s->same_length = opts && opts->same_length >= 0 ? opts->same_length != 0 : h->same_length;
    s->mem = calloc(h->n_layer ? h->n_layer : 1, sizeof *s->mem);
    for (uint32_t n = 0; s->mem && n < h->n_layer; n++)
        if (!(s->mem[n] = malloc(((size_t)s->mem_len + 1) * h->d_model * sizeof(float)))) break;
    if (!s->mem || (h->n_layer && !s->mem[h->n_layer - 1])) {
        ref_session_free(s);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "reference: out of memory for the memory");
    }
    *out = s;
    return 0;
}

void ref_session_free(ref_session *s)
{
    if (!s) return;
    for (uint32_t n = 0; s->mem && n < s->m->h.n_layer; n++) free(s->mem[n]);
    free(s->mem);
    free(s);
}

uint32_t ref_session_memory_len(const ref_session *s) { return s->mlen; }

/* x [qlen, d] = (P_c · E_c[id - begin_c]) * sqrt(d_model). */
static void embed(const ref_model *m, const int32_t *tokens, uint32_t qlen, float *x)
{
    const txlm_hparams *h = &m->h;
    uint32_t d = h->d_model;
    float scale = sqrtf((float)d);
    /* div_val 1 has one table for every id: cluster 0's view of it starts at row 0 */
    uint32_t nc = h->div_val == 1 ? 1 : txlm_n_clusters(h);
    for (uint32_t i = 0; i < qlen; i++) {
        uint32_t c = 0;
        while (c + 1 < nc && (uint32_t)tokens[i] >= m->cl[c].end) c++;
        const ref_cluster *cl = &m->cl[c];
        const float *e = cl->emb + (size_t)((uint32_t)tokens[i] - cl->begin) * cl->dim;
        if (cl->emb_proj) ref_linear(e, cl->emb_proj, NULL, 1, d, cl->dim, 0, x + (size_t)i * d);
        else memcpy(x + (size_t)i * d, e, d * sizeof *x);
        for (uint32_t k = 0; k < d; k++) x[(size_t)i * d + k] *= scale;
    }
}

/* One layer: h [qlen, d] with memory mem [mlen, d] -> out [qlen, d]. */
static void layer(const ref_session *s, const ref_layer *L, const float *mem, uint32_t mlen, const float *hin, uint32_t qlen,
                  float *out)
{
    const txlm_hparams *h = &s->m->h;
    uint32_t d = h->d_model, H = h->n_head, dh = h->d_head, hd = H * dh, klen = mlen + qlen;
    float eps = h->layer_norm_epsilon;
    float *c = malloc((size_t)klen * d * 4), *qkv = malloc((size_t)klen * 3 * hd * 4);
    float *q = malloc((size_t)qlen * hd * 4), *k = malloc((size_t)klen * hd * 4), *v = malloc((size_t)klen * hd * 4);
    float *R = malloc((size_t)klen * d * 4), *rk = malloc((size_t)klen * hd * 4);
    float *att = malloc((size_t)qlen * hd * 4), *a = malloc((size_t)qlen * d * 4);
    float *ffh = malloc((size_t)qlen * h->d_inner * 4), *x = malloc((size_t)qlen * d * 4);

    memcpy(c, mem, (size_t)mlen * d * 4);
    memcpy(c + (size_t)mlen * d, hin, (size_t)qlen * d * 4);
    if (h->pre_lnorm) ref_layernorm(c, NULL, L->attn_ln_g, L->attn_ln_b, klen, d, eps, c);
    ref_linear(c, L->qkv, NULL, klen, 3 * hd, d, 0, qkv);
    for (uint32_t j = 0; j < klen; j++) {
        memcpy(k + (size_t)j * hd, qkv + (size_t)j * 3 * hd + hd, hd * 4);
        memcpy(v + (size_t)j * hd, qkv + (size_t)j * 3 * hd + 2 * hd, hd * 4);
        if (j >= mlen) memcpy(q + (size_t)(j - mlen) * hd, qkv + (size_t)j * 3 * hd, hd * 4);
    }
    ref_pos_emb(klen, d, s->clamp_len, R);
    ref_linear(R, L->r_net, NULL, klen, hd, d, 0, rk);
    ref_rel_attention(q, k, v, rk, L->r_w_bias, L->r_r_bias, qlen, mlen, H, dh, s->same_length, s->mem_len + h->same_length_rule, NULL, NULL,
                      att);
    ref_linear(att, L->o_net, NULL, qlen, d, hd, 0, a);
    if (h->pre_lnorm) {
        for (size_t i = 0; i < (size_t)qlen * d; i++) a[i] += hin[i];
        ref_layernorm(a, NULL, L->ff_ln_g, L->ff_ln_b, qlen, d, eps, x);
        ref_linear(x, L->ff_w1, L->ff_b1, qlen, h->d_inner, d, 1, ffh);
        ref_linear(ffh, L->ff_w2, L->ff_b2, qlen, d, h->d_inner, 0, out);
        for (size_t i = 0; i < (size_t)qlen * d; i++) out[i] += a[i];
    } else {
        ref_layernorm(a, hin, L->attn_ln_g, L->attn_ln_b, qlen, d, eps, a);
        ref_linear(a, L->ff_w1, L->ff_b1, qlen, h->d_inner, d, 1, ffh);
        ref_linear(ffh, L->ff_w2, L->ff_b2, qlen, d, h->d_inner, 0, x);
        ref_layernorm(x, a, L->ff_ln_g, L->ff_ln_b, qlen, d, eps, out);
    }
    free(c), free(qkv), free(q), free(k), free(v), free(R), free(rk), free(att), free(a), free(ffh), free(x);
}

/* Logits of cluster c for z [qlen, d]: (z · P_c) · W_c^T + b_c. */
static float *cluster_logits(const ref_model *m, uint32_t c, const float *z, uint32_t qlen, uint32_t extra)
{
    const ref_cluster *cl = &m->cl[c];
    uint32_t d = m->h.d_model, n = cl->end - cl->begin, w = n + extra;
    const float *zc = z;
    float *zp = NULL;
    if (cl->proj) {
        zp = malloc((size_t)qlen * cl->dim * 4);
        ref_linear_t(z, cl->proj, qlen, cl->dim, d, zp);
        zc = zp;
    }
    float *out = malloc((size_t)qlen * w * 4), *tmp = malloc((size_t)qlen * (n > extra ? n : extra) * 4);
    ref_linear(zc, cl->weight, cl->bias, qlen, n, cl->dim, 0, tmp);
    for (uint32_t i = 0; i < qlen; i++) memcpy(out + (size_t)i * w, tmp + (size_t)i * n, n * 4);
    if (extra) {
        /* the head: one logit per tail cluster, from the same projected z */
        ref_linear(zc, m->cluster_w, m->cluster_b, qlen, extra, m->h.d_embed, 0, tmp);
        for (uint32_t i = 0; i < qlen; i++) memcpy(out + (size_t)i * w + n, tmp + (size_t)i * extra, extra * 4);
    }
    free(tmp);
    free(zp);
    return out;
}

static void output(const ref_model *m, const float *z, uint32_t qlen, float *lp)
{
    const txlm_hparams *h = &m->h;
    uint32_t V = h->n_token, nc = txlm_n_clusters(h), n0 = m->cl[0].end;
    float *head = cluster_logits(m, 0, z, qlen, h->n_cutoffs);
    uint32_t head_n = n0 + h->n_cutoffs;
    ref_log_softmax(head, qlen, head_n, head);
    for (uint32_t i = 0; i < qlen; i++) memcpy(lp + (size_t)i * V, head + (size_t)i * head_n, n0 * 4);
    for (uint32_t c = 1; c < nc; c++) {
        const ref_cluster *cl = &m->cl[c];
        uint32_t n = cl->end - cl->begin;
        float *t = cluster_logits(m, c, z, qlen, 0);
        ref_log_softmax(t, qlen, n, t);
        for (uint32_t i = 0; i < qlen; i++) {
            float hl = head[(size_t)i * head_n + n0 + c - 1];
            for (uint32_t j = 0; j < n; j++) lp[(size_t)i * V + cl->begin + j] = hl + t[(size_t)i * n + j];
        }
        free(t);
    }
    free(head);
}

int ref_forward(ref_session *s, const int32_t *tokens, uint32_t qlen, float *logprobs, txlm_err *err)
{
    const ref_model *m = s->m;
    const txlm_hparams *h = &m->h;
    uint32_t d = h->d_model, mlen = s->mlen, klen = mlen + qlen;
    if (qlen == 0) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "reference: empty segment");
    for (uint32_t i = 0; i < qlen; i++)
        if (tokens[i] < 0 || (uint32_t)tokens[i] >= h->n_token)
            return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "reference: token %d at %u outside [0, %u)", tokens[i], i,
                             h->n_token);
    float *x = malloc((size_t)qlen * d * 4), *y = malloc((size_t)qlen * d * 4);
    float *cat = malloc((size_t)klen * d * 4);
    if (!x || !y || !cat) {
        free(x), free(y), free(cat);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "reference: out of memory");
    }
    embed(m, tokens, qlen, x);
    uint32_t keep = klen < s->mem_len ? klen : s->mem_len;
    for (uint32_t n = 0; n < h->n_layer; n++) {
        layer(s, &m->layers[n], s->mem[n], mlen, x, qlen, y);
        /* the next memory: the last mem_len rows of concat(memory, this layer's input) */
        memcpy(cat, s->mem[n], (size_t)mlen * d * 4);
        memcpy(cat + (size_t)mlen * d, x, (size_t)qlen * d * 4);
        memcpy(s->mem[n], cat + (size_t)(klen - keep) * d, (size_t)keep * d * 4);
        float *t = x;
        x = y;
        y = t;
    }
    s->mlen = keep;
    if (logprobs) output(m, x, qlen, logprobs);
    free(x), free(y), free(cat);
    return 0;
}
