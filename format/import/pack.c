/* The packer: checkpoint tensors -> canonical .txlm tensors. Every tensor
 * of the checkpoint must be accounted for (used, a tied copy equal to its
 * source, or a known buffer), so a config that does not match the weights
 * is refused instead of producing a model that computes garbage. */
#include "pack.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stb/stb_ds.h>
#include <txlm_status.h>

#include "cluster_order.h"
#include "ckpt_checks.h"
#include "inv_freq.h"
#include "nonfinite.h"
#include "pack_names.h"
#include "quantize.h"
#include "txlm_file.h"

typedef struct key_entry {
    char *key;
    uint32_t value; /* tensor index in the checkpoint */
} key_entry;

typedef struct packer {
    const txlm_hparams *h;
    const txlm_checkpoint *ck;
    key_entry *index;   /* stb_ds string map: name without TXLM_HF_PREFIX -> tensor */
    uint8_t *used;      /* per checkpoint tensor */
    float **converted;  /* per checkpoint tensor: its f32 copy when the source is not f32 */
    void **stored;      /* per canonical tensor: its bytes when stored in another dtype */
    uint32_t dtype;     /* requested dtype for large matrices */
    int prefixed;       /* the checkpoint uses HF names: say so in messages */
    int reverse;        /* the tail-cluster rows are in reverse order (cluster_order.h) */
    txlm_err *err;
    int allow_nonfinite; /* txlm_pack_options.allow_nonfinite */
} packer;

/* The name a checkpoint following this one's convention would use. */
static void display_name(const packer *p, const char *key, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s", p->prefixed ? txlm_hf_prefix_of(key) : "", key);
}

static int build_index(packer *p)
{
    sh_new_strdup(p->index);
    for (uint32_t i = 0; i < p->ck->n_tensors; i++) {
        const char *name = p->ck->tensors[i].name;
        const char *key = txlm_hf_strip(name);
        if (key != name) p->prefixed = 1;
        ptrdiff_t at = shgeti(p->index, key);
        if (at >= 0)
            return txlm_fail(p->err, TXLM_ERR_FORMAT, "checkpoint has both '%s' and '%s' (the same tensor twice)",
                             p->ck->tensors[p->index[at].value].name, name);
        shput(p->index, key, i);
    }
    return 0;
}

static const txlm_src_tensor *lookup(packer *p, const char *key, uint32_t *idx)
{
    ptrdiff_t at = shgeti(p->index, key);
    if (at < 0) return NULL;
    *idx = p->index[at].value;
    return &p->ck->tensors[*idx];
}

static void shape_str(char *out, size_t cap, uint32_t rank, const uint64_t *dims)
{
    size_t n = (size_t)snprintf(out, cap, "[");
    for (uint32_t i = 0; i < rank && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%" PRIu64, i ? ", " : "", dims[i]);
    if (n < cap) snprintf(out + n, cap - n, "]");
}

static int check_shape(const packer *p, const txlm_src_tensor *t, const txlm_tt_slot *want)
{
    int same = t->rank == want->rank;
    for (uint32_t i = 0; same && i < want->rank; i++) same = t->dims[i] == want->dims[i];
    if (same) return 0;
    char got[128], exp[64];
    shape_str(got, sizeof got, t->rank, t->dims);
    shape_str(exp, sizeof exp, want->rank, want->dims);
    return txlm_fail(p->err, TXLM_ERR_FORMAT, "tensor '%s': shape %s, expected %s for %s", t->name, got, exp, want->name);
}

/* f32 data for tensor idx: the mapped bytes themselves, or a converted copy
 * made once and shared by every user (shared r biases). `as_floats` asks
 * for memory that may be read as float (mapped data can be unaligned). */
static int f32_data(packer *p, uint32_t idx, int as_floats, const void **out)
{
    const txlm_src_tensor *t = &p->ck->tensors[idx];
    if (t->dtype == TXLM_DT_F32 && (!as_floats || (uintptr_t)t->data % sizeof(float) == 0)) {
        *out = t->data;
        return 0;
    }
    if (!p->converted[idx]) {
        float *buf = malloc(t->n_elems ? t->n_elems * sizeof *buf : 1);
        if (!buf)
            return txlm_fail(p->err, TXLM_ERR_OUT_OF_MEMORY, "tensor '%s': out of memory converting %" PRIu64 " elements",
                             t->name, t->n_elems);
        for (uint64_t i = 0; i < t->n_elems; i++) buf[i] = txlm_src_get_f32(t, i);
        p->converted[idx] = buf;
    }
    *out = p->converted[idx];
    return 0;
}

static int convert(packer *p, uint32_t i, const txlm_tt_slot *want, uint32_t dtype, const void *f32, uint64_t nbytes)
{
    uint64_t n = want->dims[0] * want->dims[1];
    void *buf = malloc(nbytes ? nbytes : 1);
    if (!buf)
        return txlm_fail(p->err, TXLM_ERR_OUT_OF_MEMORY, "tensor '%s': out of memory for %" PRIu64 " bytes", want->name,
                         nbytes);
    if (dtype == TXLM_DT_F16) txlm_quantize_f16(f32, n, buf);
    else if (dtype == TXLM_DT_Q8_0) txlm_quantize_q8_0(f32, n, buf);
    else txlm_quantize_q4_0(f32, n, buf);
    p->stored[i] = buf;
    /* f16 (and the block scales, f16 too) hold magnitudes up to 65504:
     * finite weights past that would be stored as infinities */
    txlm_nonfinite nf;
    if (!p->allow_nonfinite && !txlm_nonfinite_scan(dtype, buf, n, &nf) && nf.count &&
        txlm_first_nonfinite((const float *)f32, n) == n) {
        const txlm_dtype_info *di = txlm_dtype_get(dtype);
        uint64_t blk = dtype == TXLM_DT_F16 ? 1 : 32; /* a q8_0/q4_0 block counts whole */
        float big = 0;
        for (uint64_t k = nf.first; k < nf.first + blk && k < n; k++) big = fmaxf(big, fabsf(((const float *)f32)[k]));
        return txlm_fail(p->err, TXLM_ERR_NONFINITE,
                         "tensor '%s': %" PRIu64 " of %" PRIu64 " values become infinite stored as %s, the first at element "
                         "%" PRIu64 " (magnitude %g; f16%s holds up to 65504): pack it as f32, or --allow-nonfinite",
                         want->name, nf.count, n, di ? di->name : "?", nf.first, (double)big,
                         dtype == TXLM_DT_F16 ? "" : ", the type of the block scales,");
    }
    return 0;
}

static int add_tensors(packer *p, txlm_writer *w, const txlm_pack_name *names, uint32_t n_names)
{
    p->stored = calloc(n_names ? n_names : 1, sizeof *p->stored);
    if (!p->stored) return txlm_fail(p->err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    for (uint32_t i = 0; i < n_names; i++) {
        const txlm_tt_slot *want = &names[i].t;
        uint32_t idx;
        const txlm_src_tensor *t = lookup(p, names[i].src, &idx);
        if (!t) {
            char shown[TXLM_MAX_NAME + 16], exp[64];
            display_name(p, names[i].src, shown, sizeof shown);
            shape_str(exp, sizeof exp, want->rank, want->dims);
            return txlm_fail(p->err, TXLM_ERR_FORMAT, "checkpoint lacks tensor '%s' (expected shape %s)", shown, exp);
        }
        if (t->dtype != TXLM_DT_F32 && t->dtype != TXLM_DT_F16 && t->dtype != TXLM_DT_BF16)
            return txlm_fail(p->err, TXLM_ERR_UNSUPPORTED, "tensor '%s': dtype %" PRIu32 " cannot be converted to f32", t->name,
                             t->dtype);
        int rc = check_shape(p, t, want);
        uint32_t dtype = p->dtype != TXLM_PACK_DTYPE_KEEP ? txlm_tt_stored_dtype(want, p->dtype)
                         : t->dtype == TXLM_DT_F16 ? txlm_tt_stored_dtype(want, TXLM_DT_F16) : TXLM_DT_F32;
        const void *data = NULL;
        if (!rc) rc = f32_data(p, idx, dtype != TXLM_DT_F32, &data);
        if (rc) return rc;
        p->used[idx] = 1;
        uint64_t nbytes = t->n_elems * 4;
        if (p->reverse && (want->id == TXLM_TT_CLUSTER_W || want->id == TXLM_TT_CLUSTER_B)) {
            /* f32 always: the row copy is what gets written */
            p->stored[i] = txlm_cluster_rows_reversed(data, want->dims[0], want->rank > 1 ? want->dims[1] : 1);
            if (!p->stored[i]) return txlm_fail(p->err, TXLM_ERR_OUT_OF_MEMORY, "tensor '%s': out of memory", want->name);
            data = p->stored[i];
        }
        if (dtype != TXLM_DT_F32) {
            nbytes = txlm_tensor_nbytes(dtype, want->rank, want->dims, p->err);
            if (!nbytes) return p->err ? p->err->code : TXLM_ERR_FORMAT;
            rc = convert(p, i, want, dtype, data, nbytes);
            if (rc) return rc;
            data = p->stored[i];
            /* The f32 copy (of a 16-bit or unaligned source) has served: only
             * the stored bytes are written, so peak memory stays near one
             * checkpoint plus the smaller output. */
            free(p->converted[idx]);
            p->converted[idx] = NULL;
        }
        rc = txlm_writer_add_tensor(w, want->name, (txlm_dtype)dtype, want->rank, want->dims, data, nbytes, p->err);
        if (rc) {
            txlm_fail_prefix(p->err, "tensor '%s': ", want->name);
            return rc;
        }
    }
    return 0;
}

static int values_equal(const txlm_src_tensor *a, const txlm_src_tensor *b, uint64_t *at)
{
    for (uint64_t i = 0; i < a->n_elems; i++) {
        float x = txlm_src_get_f32(a, i), y = txlm_src_get_f32(b, i);
        if (x != y && !(isnan(x) && isnan(y))) {
            *at = i;
            return 0;
        }
    }
    return 1;
}

/* A checkpoint may carry tied tensors under both names (torch.save does);
 * the copy is dropped, but only after checking it is one. */
static int check_tie(packer *p, uint32_t idx, const txlm_pack_tie *tie)
{
    const txlm_src_tensor *t = &p->ck->tensors[idx];
    uint32_t sidx;
    const txlm_src_tensor *s = lookup(p, tie->target, &sidx);
    if (!s) return 0; /* its absence is reported as a missing tensor */
    int same = t->rank == s->rank;
    for (uint32_t i = 0; same && i < t->rank; i++) same = t->dims[i] == s->dims[i];
    uint64_t at = 0;
    if (!same || !values_equal(t, s, &at))
        return txlm_fail(p->err, TXLM_ERR_FORMAT,
                         "tensor '%s' should be tied to '%s' (tie_weight/tie_projs in the config) but differs %s%" PRIu64,
                         t->name, s->name, same ? "at element " : "in shape", same ? at : 0);
    return 0;
}

/* A 16-bit inv_freq whose rounded values its code computes with is stored
 * (inv_freq.h); it goes last, after the output layer. */
static int keep_inv_freq(packer *p, txlm_writer *w, uint32_t idx)
{
    int keep = 0;
    int rc = txlm_inv_freq_check(&p->ck->tensors[idx], p->h->d_model, &keep, p->err);
    const void *data = NULL;
    if (rc || !keep) return rc;
    if ((rc = f32_data(p, idx, 1, &data))) return rc;
    uint64_t dims[1] = {p->h->d_model / 2};
    rc = txlm_writer_add_tensor(w, TXLM_INV_FREQ_NAME, TXLM_DT_F32, 1, dims, data, dims[0] * 4, p->err);
    return rc ? txlm_fail_prefix(p->err, "tensor '%s': ", TXLM_INV_FREQ_NAME) : 0;
}

/* Everything not consumed by add_tensors must be a tied copy or a buffer. */
static int check_leftovers(packer *p, txlm_writer *w, const txlm_pack_tie *ties, uint32_t n_ties)
{
    for (uint32_t i = 0; i < p->ck->n_tensors; i++) {
        if (p->used[i]) continue;
        const txlm_src_tensor *t = &p->ck->tensors[i];
        const char *key = txlm_hf_strip(t->name);
        int rc = -1;
        for (uint32_t k = 0; k < n_ties && rc < 0; k++)
            if (strcmp(key, ties[k].src) == 0) rc = check_tie(p, i, &ties[k]);
        if (rc < 0 && strcmp(key, TXLM_INV_FREQ_NAME) == 0) rc = keep_inv_freq(p, w, i);
        if (rc < 0)
            return txlm_fail(p->err, TXLM_ERR_FORMAT,
                             "checkpoint tensor '%s' is not part of a Transformer-XL LM with this config", t->name);
        if (rc) return rc;
    }
    return 0;
}

static int pack(packer *p, const txlm_vocab *v, const txlm_pack_options *opt, const char *out_path)
{
    txlm_pack_name *names = NULL;
    txlm_pack_tie *ties = NULL;
    uint32_t n_names = 0, n_ties = 0;
    int rc = txlm_pack_names(p->h, &names, &n_names, &ties, &n_ties, p->err);
    if (rc) return rc;
    rc = build_index(p);
    txlm_writer *w = NULL;
    if (!rc) rc = txlm_writer_open(out_path, &w, p->err);
    if (!rc) rc = txlm_writer_set_hparams(w, p->h, p->err);
    if (!rc) rc = txlm_writer_set_vocab(w, v, p->err);
    if (!rc) rc = add_tensors(p, w, names, n_names);
    if (!rc) rc = check_leftovers(p, w, ties, n_ties);
    if (w) {
        if (rc) {
            txlm_writer_abort(w);
        } else {
            if (opt && opt->progress) txlm_writer_set_progress(w, opt->progress, opt->user);
            rc = txlm_writer_finish(w, p->err);
        }
    }
    if (p->stored)
        for (uint32_t i = 0; i < n_names; i++) free(p->stored[i]);
    free(p->stored);
    free(names);
    free(ties);
    return rc;
}

int txlm_pack_write(const txlm_hparams *h, const txlm_vocab *v, const txlm_checkpoint *ck,
                    const txlm_pack_options *opt, const char *out_path, txlm_err *err)
{
    char why[256];
    if (txlm_hparams_validate(h, why, sizeof why) != 0) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "hyper-parameters: %s", why);
    uint32_t dtype = opt ? opt->dtype : TXLM_DT_F32;
    if (dtype != TXLM_DT_F32 && dtype != TXLM_DT_F16 && dtype != TXLM_DT_Q8_0 && dtype != TXLM_DT_Q4_0 &&
        dtype != TXLM_PACK_DTYPE_KEEP) {
        const txlm_dtype_info *di = txlm_dtype_get(dtype);
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "output dtype %s is not supported (f32, f16, q8_0, q4_0)",
                         di ? di->name : "(unknown)");
    }
    if (v->n != h->n_token)
        return txlm_fail(err, TXLM_ERR_FORMAT, "vocabulary has %" PRIu32 " symbols but the config says n_token = %" PRIu32, v->n,
                         h->n_token);

    packer p = {h, ck, NULL, NULL, NULL, NULL, dtype, 0, opt && opt->cluster_order == TXLM_CLUSTERS_REVERSE, err,
                opt && opt->allow_nonfinite};
    size_t n = ck->n_tensors ? ck->n_tensors : 1;
    p.used = calloc(n, 1);
    p.converted = calloc(n, sizeof *p.converted);
    int rc = p.used && p.converted ? pack(&p, v, opt, out_path) : txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    /* The writer reads tensor data only in finish, so copies live until here. */
    if (p.converted)
        for (uint32_t i = 0; i < ck->n_tensors; i++) free(p.converted[i]);
    free(p.converted);
    free(p.used);
    shfree(p.index);
    return rc;
}
