/* Loading a .txlm onto the device: verify the file, upload every tensor,
 * then bind the canonical names (docs/tensors.md) to the model's structs,
 * checking each shape against the hyper-parameters. */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "model_load.h"
#include "model_pad.h"
#include "quantize.h"
#include "tensor_table.h"
#include "txlm_file.h"
#include "txlm_layout.h"

typedef struct loader {
    txlm_model *m;
    const txlm_file *f;
    txlm_err *err;
} loader;

/* The uploaded tensor of kind id, number i, which must have the table's
 * shape (a tied one is the tensor it is tied to). NULL if absent and optional. */
static const txlm_gpu_tensor *get(loader *L, txlm_tt_id id, uint32_t i, int optional)
{
    txlm_tt_slot s;
    if (txlm_tt_slot_of(&L->m->h, id, i, &s)) {
        txlm_fail(L->err, TXLM_ERR_FORMAT, "internal: no tensor %d.%u for these hyper-parameters", (int)id, i);
        return NULL;
    }
    if (s.tied) return get(L, s.tie_id, s.tie_index, optional);
    const char *name = s.name;
    const txlm_tensor_info *t = txlm_file_find(L->f, name);
    if (!t) {
        if (!optional) txlm_fail(L->err, TXLM_ERR_FORMAT, "model has no tensor '%s'", name);
        return NULL;
    }
    int ok = t->rank == s.rank && t->dims[0] == s.dims[0] && (s.rank == 1 || t->dims[1] == s.dims[1]);
    if (ok && s.f32_only && t->dtype != TXLM_DT_F32) {
        const txlm_dtype_info *di = txlm_dtype_get(t->dtype);
        txlm_fail(L->err, TXLM_ERR_UNSUPPORTED, "tensor '%s' is %s; it must be f32", name, di ? di->name : "?");
        return NULL;
    }
    if (!ok) {
        char got[96] = "";
        for (uint32_t k = 0; k < t->rank && k < 4; k++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%llu", k ? ", " : "", (unsigned long long)t->dims[k]);
        if (s.rank == 2)
            txlm_fail(L->err, TXLM_ERR_FORMAT, "tensor '%s' has shape [%s], expected [%llu, %llu]", name, got,
                      (unsigned long long)s.dims[0], (unsigned long long)s.dims[1]);
        else
            txlm_fail(L->err, TXLM_ERR_FORMAT, "tensor '%s' has shape [%s], expected [%llu]", name, got,
                      (unsigned long long)s.dims[0]);
        return NULL;
    }
    for (uint32_t k = 0; k < L->m->n_tensors; k++)
        if (txlm_file_tensor(L->f, k) == t) return &L->m->tensors[k];
    txlm_fail(L->err, TXLM_ERR_FORMAT, "internal: tensor '%s' not uploaded", name);
    return NULL;
}

#define NEED(ptr, id, i)                                   \
    do {                                                   \
        if (!((ptr) = get(L, id, i, 0))) return L->err->code; \
    } while (0)

static int bind_layers(loader *L)
{
    const txlm_hparams *h = &L->m->h;
    L->m->layers = calloc(h->n_layer, sizeof *L->m->layers);
    if (!L->m->layers) return txlm_fail(L->err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    for (uint32_t n = 0; n < h->n_layer; n++) {
        txlm_layer *ly = &L->m->layers[n];
        NEED(ly->qkv, TXLM_TT_QKV, n);
        NEED(ly->r_net, TXLM_TT_R_NET, n);
        NEED(ly->o_net, TXLM_TT_O_NET, n);
        NEED(ly->attn_ln_g, TXLM_TT_ATTN_LN_W, n);
        NEED(ly->attn_ln_b, TXLM_TT_ATTN_LN_B, n);
        NEED(ly->r_w_bias, TXLM_TT_R_W_BIAS, n);
        NEED(ly->r_r_bias, TXLM_TT_R_R_BIAS, n);
        NEED(ly->ff_w1, TXLM_TT_FF_W1, n);
        NEED(ly->ff_b1, TXLM_TT_FF_B1, n);
        NEED(ly->ff_w2, TXLM_TT_FF_W2, n);
        NEED(ly->ff_b2, TXLM_TT_FF_B2, n);
        NEED(ly->ff_ln_g, TXLM_TT_FF_LN_W, n);
        NEED(ly->ff_ln_b, TXLM_TT_FF_LN_B, n);
    }
    return 0;
}

/* Adaptive embedding and softmax; get() resolves tie_weight / tie_projs. */
static int bind_clusters(loader *L)
{
    txlm_model *m = L->m;
    const txlm_hparams *h = &m->h;
    uint32_t nc = txlm_n_clusters(h);
    int div1 = h->div_val == 1;

    m->n_emb_parts = div1 ? 1 : nc;
    for (uint32_t c = 0; c < m->n_emb_parts; c++) {
        txlm_emb_part *e = &m->emb[c];
        e->id_lo = (int32_t)(div1 ? 0 : txlm_cluster_begin(h, c));
        e->id_hi = (int32_t)(div1 ? h->n_token : txlm_cluster_end(h, c));
        NEED(e->table, TXLM_TT_EMB_TABLE, c);
        if (c < txlm_tt_count(h, TXLM_TT_EMB_PROJ)) NEED(e->proj, TXLM_TT_EMB_PROJ, c);
    }

    m->n_clusters = nc;
    for (uint32_t c = 0; c < nc; c++) {
        txlm_out_cluster *o = &m->out[c];
        o->begin = txlm_cluster_begin(h, c);
        o->end = txlm_cluster_end(h, c);
        o->dim = txlm_cluster_dim(h, c);
        uint32_t t = div1 ? 0 : c;          /* which out_layers tensor holds this cluster */
        o->row0 = div1 ? o->begin : 0;
        NEED(o->weight, TXLM_TT_OUT_WEIGHT, t);
        NEED(o->bias, TXLM_TT_OUT_BIAS, t);
        if (c < txlm_tt_count(h, TXLM_TT_OUT_PROJ)) NEED(o->proj, TXLM_TT_OUT_PROJ, c);
    }
    if (txlm_tt_count(h, TXLM_TT_CLUSTER_W)) {
        NEED(m->cluster_w, TXLM_TT_CLUSTER_W, 0);
        NEED(m->cluster_b, TXLM_TT_CLUSTER_B, 0);
    }
    return 0;
}

/* The output projections are used as z · P (P [d_model, dim]), which the
 * matrix kernels only read row by row; a transposed f32 copy turns it into
 * an ordinary Linear weight, so the fast tiled and single-row kernels run
 * it (exact: quantised P is dequantised, not re-quantised). */
static int transpose_projections(loader *L)
{
    txlm_model *m = L->m;
    for (uint32_t c = 0; c < m->n_clusters; c++) {
        txlm_out_cluster *o = &m->out[c];
        if (!o->proj) continue;
        for (uint32_t k = 0; k < c && !o->proj_t; k++)
            if (m->out[k].proj == o->proj) o->proj_t = m->out[k].proj_t;
        if (o->proj_t) continue;
        const txlm_tensor_info *t = txlm_file_tensor(L->f, (uint32_t)(o->proj - m->tensors));
        uint32_t rows = o->proj->rows, cols = o->proj->cols;
        float *src = malloc((size_t)rows * cols * sizeof *src), *dst = malloc((size_t)rows * cols * sizeof *dst);
        if (!src || !dst) {
            free(src), free(dst);
            return txlm_fail(L->err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
        }
        txlm_dequantize(t->dtype, txlm_file_data(L->f, t), (uint64_t)rows * cols, src);
        for (uint32_t r = 0; r < rows; r++)
            for (uint32_t k = 0; k < cols; k++) dst[(size_t)k * rows + r] = src[(size_t)r * cols + k];
        int rc = txlm_tensor_alloc(&m->ctx->vk, cols, rows, TXLM_DT_F32, TXLM_BUF_DEVICE, &m->proj_t[c], L->err);
        if (!rc) rc = txlm_tensor_write(&m->ctx->vk, &m->proj_t[c], dst, L->err);
        free(src), free(dst);
        if (rc) return rc;
        o->proj_t = &m->proj_t[c];
    }
    return 0;
}

/* A checkpoint's 16-bit-rounded frequencies, when the file keeps them
 * (format/container/inv_freq.h): the sinusoids are computed on the host from them. */
static int read_inv_freq(txlm_model *m, const txlm_file *f, txlm_err *err)
{
    txlm_tt_slot s;
    txlm_tt_slot_of(&m->h, TXLM_TT_INV_FREQ, 0, &s);
    const txlm_tensor_info *t = txlm_file_find(f, s.name);
    if (!t) return 0;
    uint32_t half = (uint32_t)s.dims[0];
    if (t->rank != 1 || t->dims[0] != half || t->dtype != TXLM_DT_F32)
        return txlm_fail(err, TXLM_ERR_FORMAT, "tensor '%s' must be f32 [%u]", s.name, half);
    if (!(m->inv_freq = malloc(half * sizeof *m->inv_freq))) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    memcpy(m->inv_freq, txlm_file_data(f, t), half * sizeof *m->inv_freq);
    for (uint32_t k = 0; k < half; k++)
        if (!(m->inv_freq[k] > 0.0f && m->inv_freq[k] <= 1.0f))
            return txlm_fail(err, TXLM_ERR_FORMAT, "tensor '%s'[%u] = %g is not a frequency in (0, 1]", s.name, k,
                             (double)m->inv_freq[k]);
    return 0;
}

/* Pre-norm layers project LN(0) = the LayerNorm's bias for a zero row of
 * memory (HF's zero-memory start, zero_memory.c): W_k b and W_v b, once. */
static int zero_row_kv(txlm_model *m, const txlm_file *f, txlm_err *err)
{
    const txlm_hparams *h = &m->h;
    if (!h->pre_lnorm) return 0;
    uint64_t hd = (uint64_t)h->n_head * h->d_head, d = h->d_model;
    m->kv0 = calloc(h->n_layer * 2 * hd, sizeof *m->kv0);
    float *w = malloc(3 * hd * d * sizeof *w);
    int rc = m->kv0 && w ? 0 : txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    for (uint32_t n = 0; n < h->n_layer && !rc; n++) {
        txlm_tt_slot ws, bs;
        txlm_tt_slot_of(h, TXLM_TT_QKV, n, &ws);
        txlm_tt_slot_of(h, TXLM_TT_ATTN_LN_B, n, &bs);
        const txlm_tensor_info *wt = txlm_file_find(f, ws.name), *bt = txlm_file_find(f, bs.name);
        if (!wt || !bt) return free(w), txlm_fail(err, TXLM_ERR_FORMAT, "layer %u: no qkv_net or layer_norm", n);
        txlm_dequantize(wt->dtype, txlm_file_data(f, wt), 3 * hd * d, w);
        const uint8_t *b = txlm_file_data(f, bt);
        for (uint64_t r = 0; r < 2 * hd; r++) {
            double acc = 0;
            for (uint64_t k = 0; k < d; k++) acc += (double)w[(hd + r) * d + k] * txlm_rdf32(b + 4 * k);
            m->kv0[n * 2 * hd + r] = (float)acc;
        }
    }
    free(w);
    return rc;
}

static int copy_vocab(txlm_model *m, const txlm_vocab *v, txlm_err *err)
{
    m->vocab = *v;
    m->vocab_offsets = malloc(((size_t)v->n + 1) * sizeof *m->vocab_offsets);
    m->vocab_blob = malloc(v->blob_size ? v->blob_size : 1);
    if (!m->vocab_offsets || !m->vocab_blob) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    memcpy(m->vocab_offsets, v->offsets, ((size_t)v->n + 1) * sizeof *m->vocab_offsets);
    memcpy(m->vocab_blob, v->blob, v->blob_size);
    m->vocab.offsets = m->vocab_offsets;
    m->vocab.blob = m->vocab_blob;
    return 0;
}

/* Refuses, before anything is allocated, a model that cannot fit: larger
 * than the device's heaps together or than what the context's budget has
 * left. Without this a huge model fails only after uploading most of it. */
static int check_fits(txlm_model *m, const txlm_file *f, txlm_err *err)
{
    const txlm_vk *vk = &m->ctx->vk;
    uint64_t need = 0;
    for (uint32_t i = 0; i < txlm_file_tensor_count(f); i++) {
        const txlm_tensor_info *t = txlm_file_tensor(f, i);
        if (t->rank < 1 || t->rank > 2)
            return txlm_fail(err, TXLM_ERR_FORMAT, "tensor '%s' has rank %u; the model uses only 1-D and 2-D tensors",
                             t->name, t->rank);
        if (t->dims[0] > UINT32_MAX || t->dims[t->rank - 1] > UINT32_MAX)
            return txlm_fail(err, TXLM_ERR_LIMIT, "tensor '%s' has a dimension above 2^32 - 1", t->name);
        /* Each buffer is rounded up to 16 bytes; nbytes <= 2^43 (file caps), so the sum cannot wrap. */
        uint64_t bytes = t->nbytes;
        txlm_pad pad[2];
        txlm_pad_of(&m->h, &m->dev, t->name, pad);
        if (pad[0].n || pad[1].n) { /* widened f32 or f16 */
            uint64_t rows = t->rank == 1 ? 1 : t->dims[0], cols = t->dims[t->rank - 1];
            if (pad[0].n) rows = rows / pad[0].n * pad[0].to;
            if (pad[1].n) cols = cols / pad[1].n * pad[1].to;
            bytes = rows * cols * (t->dtype == TXLM_DT_F16 ? 2 : 4);
        }
        need += (bytes + 15) & ~(uint64_t)15;
    }
    uint64_t heaps = txlm_vk_heap_bytes(vk);
    if (need > heaps)
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "the weights need %llu bytes of device memory; the device's heaps hold %llu",
                         (unsigned long long)need, (unsigned long long)heaps);
    uint64_t used = __atomic_load_n(&vk->memory_used, __ATOMIC_RELAXED);
    if (vk->memory_budget && (used > vk->memory_budget || need > vk->memory_budget - used))
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY,
                         "the weights need %llu bytes of device memory; the context's budget of %llu has %llu left",
                         (unsigned long long)need, (unsigned long long)vk->memory_budget,
                         (unsigned long long)(used > vk->memory_budget ? 0 : vk->memory_budget - used));
    return 0;
}

static int upload_all(txlm_model *m, const txlm_file *f, const txlm_load_progress *pr, txlm_err *err)
{
    int rc = check_fits(m, f, err);
    if (rc) return rc;
    uint64_t total = 0, done = 0;
    for (uint32_t i = 0; i < txlm_file_tensor_count(f); i++) total += txlm_file_tensor(f, i)->nbytes;
    m->n_tensors = txlm_file_tensor_count(f);
    m->tensors = calloc(m->n_tensors ? m->n_tensors : 1, sizeof *m->tensors);
    if (!m->tensors) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    for (uint32_t i = 0; i < m->n_tensors; i++) {
        const txlm_tensor_info *t = txlm_file_tensor(f, i);
        txlm_pad pad[2];
        txlm_pad_of(&m->h, &m->dev, t->name, pad);
        rc = txlm_tensor_upload(&m->ctx->vk, f, t, pad, &m->tensors[i], err);
        if (rc) return rc;
        done += t->nbytes;
        if (pr && pr->fn && pr->fn(pr->user, total ? (double)done / (double)total : 1.0))
            return txlm_fail(err, TXLM_ERR_CANCELLED, "loading cancelled after %u of %u tensors", i + 1, m->n_tensors);
    }
    return 0;
}

int txlm_model_open(txlm_context *ctx, const char *path, unsigned open_flags, const txlm_load_progress *progress,
                    txlm_model **out, txlm_err *err)
{
    *out = NULL;
    txlm_file *f = NULL;
    int rc = txlm_file_open(path, open_flags, &f, err);
    if (rc) return rc;
    txlm_model *m = calloc(1, sizeof *m);
    if (!m) {
        txlm_file_close(f);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    m->ctx = ctx;
    m->h = *txlm_file_hparams(f);
    txlm_dims_choose(&m->h, f, m->ctx->vk.debug->no_pad, &m->dev);
    /* What a saved session state is bound to: the same weights, by hash. */
    XXH3_state_t *hs = XXH3_createState();
    if (hs) {
        XXH3_64bits_reset(hs);
        XXH3_64bits_update(hs, &m->h, sizeof m->h);
        for (uint32_t i = 0; i < txlm_file_tensor_count(f); i++) {
            const txlm_tensor_info *t = txlm_file_tensor(f, i);
            XXH3_64bits_update(hs, t->name, strlen(t->name));
            XXH3_64bits_update(hs, &t->hash, sizeof t->hash);
        }
        m->id = XXH3_64bits_digest(hs);
        XXH3_freeState(hs);
    }
    loader L = {m, f, err};
    pthread_mutex_init(&m->tok_lock, NULL);
    rc = copy_vocab(m, txlm_file_vocab(f), err);
    if (!rc) rc = upload_all(m, f, progress, err);
    if (!rc) rc = bind_layers(&L);
    if (!rc) rc = bind_clusters(&L);
    if (!rc) rc = transpose_projections(&L);
    if (!rc) rc = read_inv_freq(m, f, err);
    if (!rc) rc = zero_row_kv(m, f, err);
    txlm_file_close(f);
    if (rc) {
        txlm_model_close(m);
        return txlm_fail_prefix(err, "%s: ", path);
    }
    *out = m;
    return 0;
}

void txlm_model_close(txlm_model *m)
{
    if (!m) return;
    for (uint32_t i = 0; i < m->n_tensors; i++) txlm_tensor_free(&m->ctx->vk, &m->tensors[i]);
    for (uint32_t c = 0; c < TXLM_MAX_CLUSTERS; c++) txlm_tensor_free(&m->ctx->vk, &m->proj_t[c]);
    free(m->tensors);
    free(m->layers);
    free(m->inv_freq);
    free(m->kv0);
    free(m->vocab_offsets);
    free(m->vocab_blob);
    if (m->tok) m->tok_free(m->tok);
    pthread_mutex_destroy(&m->tok_lock);
    free(m);
}
