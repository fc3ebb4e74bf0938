/* tf/model.py's variables onto the authors' PyTorch names. Shapes come
 * first (hyper-parameters from the tables and kernels), then every tensor
 * is taken against them, its shape checked, its CRC verified. */
#include "tf_layout.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm_status.h>


#define P "transformer/"

typedef struct layout {
    txlm_tf_bundle *b;
    txlm_hparams *h;
    txlm_checkpoint *ck;
    uint32_t cap;
    uint8_t *used;          /* per bundle entry */
    void **owned;           /* converted or transposed copies */
    uint32_t n_owned, cap_owned;
    int emb_proj[TXLM_MAX_CLUSTERS]; /* the embedding has its own proj_W (else the identity) */
    txlm_err *err;
} layout;

typedef struct owned_set {
    txlm_tf_bundle *b;
    void **p;
    uint32_t n;
} owned_set;

static void free_owned(void *impl)
{
    owned_set *o = impl;
    if (!o) return;
    for (uint32_t i = 0; i < o->n; i++) free(o->p[i]);
    free(o->p);
    txlm_tf_bundle_free(o->b);
    free(o);
}

static const txlm_tf_tensor *find(const layout *L, const char *fmt, ...) TXLM_PRINTF(2, 3);
static const txlm_tf_tensor *find(const layout *L, const char *fmt, ...)
{
    char name[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    return txlm_tf_bundle_find(L->b, name);
}

static void shape_str(char *out, size_t cap, uint32_t rank, const uint64_t *dims)
{
    size_t n = (size_t)snprintf(out, cap, "[");
    for (uint32_t i = 0; i < rank && n < cap; i++) n += (size_t)snprintf(out + n, cap - n, "%s%" PRIu64, i ? ", " : "", dims[i]);
    if (n < cap) snprintf(out + n, cap - n, "]");
}

static int keep(layout *L, void *p)
{
    if (L->n_owned == L->cap_owned) {
        uint32_t cap = L->cap_owned ? L->cap_owned * 2 : 64;
        void **q = realloc(L->owned, cap * sizeof *q);
        if (!q) return free(p), txlm_fail(L->err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
        L->owned = q;
        L->cap_owned = cap;
    }
    L->owned[L->n_owned++] = p;
    return 0;
}

static float elem(const uint8_t *d, uint32_t dtype, uint64_t i) { return (float)txlm_tf_elem(d, dtype, i); }

static int add_tensor(layout *L, const char *name, uint32_t dtype, uint32_t rank, const uint64_t *dims, const void *data)
{
    if (L->ck->n_tensors == L->cap) {
        uint32_t cap = L->cap ? L->cap * 2 : 64;
        txlm_src_tensor *t = realloc(L->ck->tensors, cap * sizeof *t);
        if (!t) return txlm_fail(L->err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
        L->ck->tensors = t;
        L->cap = cap;
    }
    txlm_src_tensor *t = &L->ck->tensors[L->ck->n_tensors];
    memset(t, 0, sizeof *t);
    if (!(t->name = strdup(name))) return txlm_fail(L->err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    L->ck->n_tensors++;
    t->dtype = dtype;
    t->rank = rank;
    t->n_elems = 1;
    for (uint32_t i = 0; i < rank; i++) t->n_elems *= (t->dims[i] = dims[i]);
    t->data = data;
    t->nbytes = t->n_elems * (dtype == TXLM_DT_F32 ? 4 : 2);
    return 0;
}

/* Checks a variable's dtype and shape, and reads its bytes (CRC checked). */
static int check(layout *L, const txlm_tf_tensor *t, uint32_t rank, const uint64_t *dims, const uint8_t **data)
{
    const char *ip = txlm_tf_bundle_index_path(L->b);
    char buf[32], got[128], want[128];
    if (!txlm_tf_float_size(t->dtype))
        return txlm_fail(L->err, TXLM_ERR_UNSUPPORTED, "%s: entry '%s' (byte %" PRIu64 " of the block at byte %" PRIu64
                         "): dtype %s, where a float type is needed", ip, t->name, t->in_block, t->block_at,
                         txlm_tf_dtype_name(t->dtype, buf, sizeof buf));
    int same = t->rank == rank;
    for (uint32_t i = 0; same && i < rank; i++) same = t->dims[i] == dims[i];
    if (!same) {
        shape_str(got, sizeof got, t->rank, t->dims);
        shape_str(want, sizeof want, rank, dims);
        return txlm_fail(L->err, TXLM_ERR_FORMAT, "%s: entry '%s' (byte %" PRIu64 " of the block at byte %" PRIu64
                         "): shape %s, where the layout of the other variables needs %s", ip, t->name, t->in_block,
                         t->block_at, got, want);
    }
    L->used[t - txlm_tf_bundle_at(L->b, 0)] = 1;
    return txlm_tf_bundle_data(L->b, t, data, L->err);
}

static int missing(layout *L, const char *name, uint32_t rank, const uint64_t *dims)
{
    char want[128];
    shape_str(want, sizeof want, rank, dims);
    return txlm_fail(L->err, TXLM_ERR_FORMAT, "%s: no entry '%s' (shape %s), which this layout needs",
                     txlm_tf_bundle_index_path(L->b), name, want);
}

/* Variable `tf` as `name` of rank 1 or 2, transposed when `tr` (TensorFlow
 * keeps a dense kernel [in, out]). In place when the bytes can be. */
static int take(layout *L, const char *tf, const char *name, uint32_t rank, uint64_t d0, uint64_t d1, int tr)
{
    uint64_t dims[2] = {d0, d1}, tfdims[2] = {tr ? d1 : d0, tr ? d0 : d1};
    const txlm_tf_tensor *t = txlm_tf_bundle_find(L->b, tf);
    const uint8_t *d;
    if (!t) return missing(L, tf, rank, tfdims);
    int rc = check(L, t, rank, tfdims, &d);
    if (rc) return rc;
    if (!tr && t->dtype != TXLM_TF_DOUBLE)
        return add_tensor(L, name, t->dtype == TXLM_TF_FLOAT ? TXLM_DT_F32 : t->dtype == TXLM_TF_HALF ? TXLM_DT_F16 : TXLM_DT_BF16,
                          rank, dims, d);
    uint64_t n = t->n_elems;
    float *f = malloc(n ? n * sizeof *f : 1);
    if (!f || keep(L, f)) return txlm_fail(L->err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", tf);
    for (uint64_t i = 0; i < n; i++) {
        /* out[r][c] = in[c][r]: r over d0 (PyTorch's out), c over d1 */
        uint64_t src = tr ? (i % d1) * d0 + i / d1 : i;
        f[i] = elem(d, t->dtype, src);
    }
    return add_tensor(L, name, TXLM_DT_F32, rank, dims, f);
}

/* An identity projection, where the TensorFlow code uses none (proj_same_dim false). */
static int identity(layout *L, const char *name, uint64_t d)
{
    float *f = calloc(d ? d * d : 1, sizeof *f);
    if (!f || keep(L, f)) return txlm_fail(L->err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    for (uint64_t i = 0; i < d; i++) f[i * d + i] = 1.0f;
    uint64_t dims[2] = {d, d};
    return add_tensor(L, name, TXLM_DT_F32, 2, dims, f);
}

static int layer(layout *L, uint32_t n)
{
    const txlm_hparams *h = L->h;
    uint64_t d = h->d_model, hd = (uint64_t)h->n_head * h->d_head, di = h->d_inner;
    char tf[128], pt[128];
    static const struct { const char *tf, *pt; int rank, kind, tr; } v[] = {
        /* kind: 0 [d, 3hd], 1 [d, hd], 2 [hd, d], 3 [d], 4 [d, di], 5 [di], 6 [di, d] in TensorFlow's order */
        {"rel_attn/qkv/kernel", "dec_attn.qkv_net.weight", 2, 0, 1},
        {"rel_attn/r/kernel", "dec_attn.r_net.weight", 2, 1, 1},
        {"rel_attn/o/kernel", "dec_attn.o_net.weight", 2, 2, 1},
        {"rel_attn/LayerNorm/gamma", "dec_attn.layer_norm.weight", 1, 3, 0},
        {"rel_attn/LayerNorm/beta", "dec_attn.layer_norm.bias", 1, 3, 0},
        {"ff/layer_1/kernel", "pos_ff.CoreNet.0.weight", 2, 4, 1},
        {"ff/layer_1/bias", "pos_ff.CoreNet.0.bias", 1, 5, 0},
        {"ff/layer_2/kernel", "pos_ff.CoreNet.3.weight", 2, 6, 1},
        {"ff/layer_2/bias", "pos_ff.CoreNet.3.bias", 1, 3, 0},
        {"ff/LayerNorm/gamma", "pos_ff.layer_norm.weight", 1, 3, 0},
        {"ff/LayerNorm/beta", "pos_ff.layer_norm.bias", 1, 3, 0},
    };
    const uint64_t shapes[7][2] = {{3 * hd, d}, {hd, d}, {d, hd}, {d, 0}, {di, d}, {di, 0}, {d, di}};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        snprintf(tf, sizeof tf, P "layer_%u/%s", n, v[i].tf);
        snprintf(pt, sizeof pt, "layers.%u.%s", n, v[i].pt);
        int rc = take(L, tf, pt, (uint32_t)v[i].rank, shapes[v[i].kind][0], shapes[v[i].kind][1], v[i].tr);
        if (rc) return rc;
    }
    return 0;
}

/* r_w_bias / r_r_bias: [n_layer, H, dh] untied (each layer's slice), or
 * one shared [H, dh] pair. */
static int r_biases(layout *L)
{
    const txlm_hparams *h = L->h;
    static const char *const which[] = {"r_w_bias", "r_r_bias"};
    for (int k = 0; k < 2; k++) {
        char tf[64], pt[96];
        snprintf(tf, sizeof tf, P "%s", which[k]);
        if (!h->untie_r) {
            int rc = take(L, tf, which[k], 2, h->n_head, h->d_head, 0);
            if (rc) return rc;
            continue;
        }
        uint64_t dims[3] = {h->n_layer, h->n_head, h->d_head}, per[2] = {h->n_head, h->d_head};
        const txlm_tf_tensor *t = txlm_tf_bundle_find(L->b, tf);
        const uint8_t *d;
        if (!t) return missing(L, tf, 3, dims);
        int rc = check(L, t, 3, dims, &d);
        if (rc) return rc;
        uint64_t n = per[0] * per[1];
        float *f = malloc(n * h->n_layer * sizeof *f);
        if (!f || keep(L, f)) return txlm_fail(L->err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
        for (uint64_t i = 0; i < n * h->n_layer; i++) f[i] = elem(d, t->dtype, i);
        for (uint32_t l = 0; l < h->n_layer && !rc; l++) {
            snprintf(pt, sizeof pt, "layers.%u.dec_attn.%s", l, which[k]);
            rc = add_tensor(L, pt, TXLM_DT_F32, 2, per, f + n * l);
        }
        if (rc) return rc;
    }
    return 0;
}

static const txlm_tf_tensor *need(layout *L, const char *name, uint32_t rank)
{
    const txlm_tf_tensor *t = txlm_tf_bundle_find(L->b, name);
    if (!t) {
        txlm_fail(L->err, TXLM_ERR_FORMAT, "%s: no entry '%s': not the authors' TensorFlow Transformer-XL (tf/model.py)",
                  txlm_tf_bundle_index_path(L->b), name);
        return NULL;
    }
    if (t->rank != rank) {
        txlm_fail(L->err, TXLM_ERR_FORMAT, "%s: entry '%s' (byte %" PRIu64 " of the block at byte %" PRIu64
                  ") has %u dimensions, where tf/model.py makes %u", txlm_tf_bundle_index_path(L->b), name, t->in_block,
                  t->block_at, t->rank, rank);
        return NULL;
    }
    return t;
}

/* The clusters of the adaptive input: their sizes give the cutoffs and
 * n_token, their widths d_embed and div_val. */
static int infer_clusters(layout *L)
{
    txlm_hparams *h = L->h;
    const char *ip = txlm_tf_bundle_index_path(L->b);
    const txlm_tf_tensor *t = txlm_tf_bundle_find(L->b, P "adaptive_embed/lookup_table");
    uint64_t total = 0;
    if (t) { /* div_val 1: one table; the softmax's biases give the clusters */
        if (!(t = need(L, P "adaptive_embed/lookup_table", 2))) return L->err->code;
        h->div_val = 1;
        h->d_embed = (uint32_t)t->dims[1];
        L->emb_proj[0] = find(L, P "adaptive_embed/proj_W") != NULL;
        for (uint32_t c = 0; (t = find(L, P "adaptive_softmax/cutoff_%u/b", c)); c++) {
            if (c > TXLM_MAX_CUTOFFS) return txlm_fail(L->err, TXLM_ERR_UNSUPPORTED, "%s: more than 16 clusters", ip);
            if (c) h->cutoffs[c - 1] = (uint32_t)total;
            h->n_cutoffs = c;
            total += t->dims[0];
        }
        h->n_token = (uint32_t)find(L, P "adaptive_embed/lookup_table")->dims[0];
        if (total && total != h->n_token)
            return txlm_fail(L->err, TXLM_ERR_FORMAT, "%s: the softmax clusters' biases hold %" PRIu64
                             " tokens, the embedding table %u", ip, total, h->n_token);
        return 0;
    }
    uint32_t nc = 0;
    uint64_t width[TXLM_MAX_CLUSTERS];
    for (; (t = find(L, P "adaptive_embed/cutoff_%u/lookup_table", nc)); nc++) {
        if (nc == TXLM_MAX_CLUSTERS) return txlm_fail(L->err, TXLM_ERR_UNSUPPORTED, "%s: more than 16 clusters", ip);
        if (t->rank != 2 || !t->dims[0] || total + t->dims[0] > UINT32_MAX)
            return txlm_fail(L->err, TXLM_ERR_FORMAT, "%s: entry '%s' is not a table of rows", ip, t->name);
        if (nc) h->cutoffs[nc - 1] = (uint32_t)total;
        total += t->dims[0];
        width[nc] = t->dims[1];
        L->emb_proj[nc] = find(L, P "adaptive_embed/cutoff_%u/proj_W", nc) != NULL;
    }
    if (nc < 2)
        return txlm_fail(L->err, TXLM_ERR_FORMAT, "%s: %s", ip, nc ? "one adaptive-input cluster, which tf/model.py cannot run"
                         : "no entry 'transformer/adaptive_embed/lookup_table' or '.../cutoff_0/lookup_table': not the authors' "
                           "TensorFlow Transformer-XL (tf/model.py)");
    h->n_cutoffs = nc - 1;
    h->n_token = (uint32_t)total;
    h->d_embed = (uint32_t)width[0];
    h->div_val = width[1] && width[0] % width[1] == 0 ? (uint32_t)(width[0] / width[1]) : 0;
    for (uint32_t c = 0; c < nc; c++)
        if (h->div_val < 2 || txlm_cluster_dim(h, c) != width[c])
            return txlm_fail(L->err, TXLM_ERR_FORMAT, "%s: cluster %u's table is %" PRIu64 " wide, not d_embed %u / div_val^%u"
                             " as the first two tables give", ip, c, width[c], h->d_embed, c);
    return 0;
}

/* Which output projections are the embedding's: tf/model.py uses the
 * embedding's proj_W where tie_projs (proj_share_all_but_first) says, none
 * where proj_same_dim is false and the widths agree, else its own proj. */
static void infer_ties(layout *L)
{
    txlm_hparams *h = L->h;
    memset(h->tie_projs, 0, sizeof h->tie_projs);
    for (uint32_t c = 0; c < txlm_n_clusters(h); c++) {
        int own = find(L, P "adaptive_softmax/cutoff_%u/proj", c) != NULL;
        if (h->div_val == 1 && h->d_embed == h->d_model) continue; /* no projections at all */
        /* div_val 1 without clusters: the code always uses the embedding's */
        h->tie_projs[c] = h->div_val == 1 && h->n_cutoffs == 0 ? 1 : !own;
    }
}

static int infer(layout *L)
{
    txlm_hparams *h = L->h;
    memset(h, 0, sizeof *h);
    const txlm_tf_tensor *qkv = need(L, P "layer_0/rel_attn/qkv/kernel", 2), *rw, *ff;
    if (!qkv || !(ff = need(L, P "layer_0/ff/layer_1/kernel", 2))) return L->err->code;
    while (find(L, P "layer_%u/rel_attn/qkv/kernel", h->n_layer)) h->n_layer++;
    rw = txlm_tf_bundle_find(L->b, P "r_w_bias");
    if (!rw || !(rw = need(L, P "r_w_bias", rw->rank == 3 ? 3 : 2))) return L->err->code;
    h->untie_r = rw->rank == 3;
    h->n_head = (uint32_t)rw->dims[rw->rank - 2];
    h->d_head = (uint32_t)rw->dims[rw->rank - 1];
    h->d_model = (uint32_t)qkv->dims[0];
    h->d_inner = (uint32_t)ff->dims[1];
    int rc = infer_clusters(L);
    if (rc) return rc;
    h->tie_weight = 1; /* tf/model.py's softmax always reads the embedding tables */
    h->layer_norm_epsilon = 1e-12f; /* tf.contrib.layers.layer_norm */
    infer_ties(L);
    return 0;
}

static int embedding(layout *L)
{
    const txlm_hparams *h = L->h;
    char tf[96], pt[96];
    uint64_t d = h->d_model;
    if (h->div_val == 1) {
        int rc = take(L, P "adaptive_embed/lookup_table", "word_emb.emb_layers.0.weight", 2, h->n_token, h->d_embed, 0);
        if (!rc && h->d_embed != h->d_model) rc = take(L, P "adaptive_embed/proj_W", "word_emb.emb_projs.0", 2, d, h->d_embed, 1);
        return rc;
    }
    for (uint32_t c = 0; c < txlm_n_clusters(h); c++) {
        uint64_t n = txlm_cluster_end(h, c) - txlm_cluster_begin(h, c), dc = txlm_cluster_dim(h, c);
        snprintf(tf, sizeof tf, P "adaptive_embed/cutoff_%u/lookup_table", c);
        snprintf(pt, sizeof pt, "word_emb.emb_layers.%u.weight", c);
        int rc = take(L, tf, pt, 2, n, dc, 0);
        snprintf(tf, sizeof tf, P "adaptive_embed/cutoff_%u/proj_W", c);
        snprintf(pt, sizeof pt, "word_emb.emb_projs.%u", c);
        if (!rc && L->emb_proj[c]) rc = take(L, tf, pt, 2, d, dc, 1);
        else if (!rc && dc != d)
            rc = txlm_fail(L->err, TXLM_ERR_FORMAT, "%s: no entry '%s', which a cluster %" PRIu64 " wide needs to reach d_model %"
                           PRIu64, txlm_tf_bundle_index_path(L->b), tf, dc, d);
        else if (!rc) rc = identity(L, pt, d);
        if (rc) return rc;
    }
    return 0;
}

/* div_val 1 with clusters: the one output bias of the file is the
 * clusters' biases end to end. */
static int joined_biases(layout *L)
{
    const txlm_hparams *h = L->h;
    float *f = malloc((uint64_t)h->n_token * sizeof *f);
    if (!f || keep(L, f)) return txlm_fail(L->err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    for (uint32_t c = 0; c < txlm_n_clusters(h); c++) {
        uint64_t b0 = txlm_cluster_begin(h, c), n = txlm_cluster_end(h, c) - b0;
        const txlm_tf_tensor *t = find(L, P "adaptive_softmax/cutoff_%u/b", c);
        const uint8_t *d;
        int rc = check(L, t, 1, &n, &d);
        if (rc) return rc;
        for (uint64_t i = 0; i < n; i++) f[b0 + i] = elem(d, t->dtype, i);
    }
    uint64_t dims[1] = {h->n_token};
    return add_tensor(L, "crit.out_layers.0.bias", TXLM_DT_F32, 1, dims, f);
}

static int softmax(layout *L)
{
    const txlm_hparams *h = L->h;
    char tf[96], pt[96];
    int rc = 0;
    if (h->n_cutoffs == 0) rc = take(L, P "adaptive_softmax/bias", "crit.out_layers.0.bias", 1, h->n_token, 0, 0);
    else if (h->div_val == 1) rc = joined_biases(L);
    int has_proj = h->div_val > 1 || h->d_embed != h->d_model;
    for (uint32_t c = 0; !rc && c < txlm_n_clusters(h); c++) {
        uint64_t n = txlm_cluster_end(h, c) - txlm_cluster_begin(h, c), dc = txlm_cluster_dim(h, c);
        snprintf(tf, sizeof tf, P "adaptive_softmax/cutoff_%u/b", c);
        snprintf(pt, sizeof pt, "crit.out_layers.%u.bias", c);
        if (h->div_val > 1) rc = take(L, tf, pt, 1, n, 0, 0);
        snprintf(tf, sizeof tf, P "adaptive_softmax/cutoff_%u/proj", c);
        snprintf(pt, sizeof pt, "crit.out_projs.%u", c);
        if (!rc && has_proj && !h->tie_projs[c]) rc = take(L, tf, pt, 2, h->d_model, dc, 1);
    }
    if (!rc && h->n_cutoffs)
        rc = take(L, P "adaptive_softmax/cutoff_0/cluster_W", "crit.cluster_weight", 2, h->n_cutoffs, h->d_embed, 0);
    if (!rc && h->n_cutoffs) rc = take(L, P "adaptive_softmax/cutoff_0/cluster_b", "crit.cluster_bias", 1, h->n_cutoffs, 0, 0);
    return rc;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

/* What is left must be training state (optimizer slots, step counters,
 * not read); a model variable nothing took means the layout is not one
 * this reader knows, and packing it would drop weights. */
static int leftovers(layout *L, uint32_t *skipped)
{
    *skipped = 0;
    for (uint32_t i = 0; i < txlm_tf_bundle_count(L->b); i++) {
        const txlm_tf_tensor *t = txlm_tf_bundle_at(L->b, i);
        if (L->used[i]) continue;
        if (strncmp(t->name, P, strlen(P)) || ends_with(t->name, "/Adam") || ends_with(t->name, "/Adam_1")) {
            (*skipped)++;
            continue;
        }
        return txlm_fail(L->err, TXLM_ERR_FORMAT, "%s: entry '%s' (byte %" PRIu64 " of the block at byte %" PRIu64
                         ") is no part of tf/model.py's Transformer-XL with the shapes of the others",
                         txlm_tf_bundle_index_path(L->b), t->name, t->in_block, t->block_at);
    }
    return 0;
}

int txlm_tf_layout(txlm_tf_bundle *b, txlm_hparams *h, txlm_checkpoint **out, uint32_t *skipped, txlm_err *err)
{
    *out = NULL;
    txlm_err local = {0, ""};
    layout L = {b, h, NULL, 0, NULL, NULL, 0, 0, {0}, err ? err : &local};
    owned_set *o = calloc(1, sizeof *o);
    L.ck = calloc(1, sizeof *L.ck);
    L.used = calloc(txlm_tf_bundle_count(b) + 1, 1);
    int rc = o && L.ck && L.used ? infer(&L) : txlm_fail(L.err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    if (!rc) rc = embedding(&L);
    for (uint32_t n = 0; !rc && n < h->n_layer; n++) rc = layer(&L, n);
    if (!rc) rc = r_biases(&L);
    if (!rc) rc = softmax(&L);
    if (!rc) rc = leftovers(&L, skipped);
    free(L.used);
    if (o) {
        o->b = b;
        o->p = L.owned;
        o->n = L.n_owned;
    } else {
        for (uint32_t i = 0; i < L.n_owned; i++) free(L.owned[i]);
        free(L.owned);
        txlm_tf_bundle_free(b);
    }
    if (L.ck) {
        L.ck->format = "tensorflow-bundle";
        L.ck->impl = o;
        L.ck->free_impl = free_owned;
    } else {
        free_owned(o);
    }
    if (rc) {
        txlm_checkpoint_free(L.ck);
        return rc;
    }
    *out = L.ck;
    return 0;
}
