/* Hyper-parameters from pickled Python values (ckpt_source.h): ints may
 * be bools and bools ints, as argparse and the training codes leave them;
 * None is "not set". */
#include <inttypes.h>
#include <string.h>

#include <txlm_status.h>

#include "ckpt_source.h"

typedef struct rd {
    const char *where;
    txlm_pk_getter get;
    void *user;
    txlm_err *err;
} rd;

static int get_int(rd *r, const char *key, int64_t def, int64_t lo, int64_t hi, int64_t *out, int required)
{
    const txlm_pk_value *v = r->get(r->user, key);
    *out = def;
    if (!v || v->kind == TXLM_PK_NONE) {
        if (required) return txlm_fail(r->err, TXLM_ERR_FORMAT, "%s: hyper-parameter '%s' is missing", r->where, key);
        return 0;
    }
    if (v->kind != TXLM_PK_INT && v->kind != TXLM_PK_BOOL) {
        char d[240];
        return txlm_fail(r->err, TXLM_ERR_FORMAT, "%s: hyper-parameter '%s' is %s, not an integer", r->where, key,
                         txlm_pk_describe(v, d, sizeof d));
    }
    if (v->u.i < lo || v->u.i > hi)
        return txlm_fail(r->err, TXLM_ERR_FORMAT, "%s: hyper-parameter '%s' = %" PRId64 " is out of range [%" PRId64
                         ", %" PRId64 "]", r->where, key, v->u.i, lo, hi);
    *out = v->u.i;
    return 0;
}

static int get_u32(rd *r, const char *key, uint32_t def, uint32_t *out, int required)
{
    int64_t v;
    int rc = get_int(r, key, def, 0, UINT32_MAX, &v, required);
    *out = (uint32_t)v;
    return rc;
}

static int get_bool(rd *r, const char *key, uint8_t def, uint8_t *out)
{
    int64_t v;
    int rc = get_int(r, key, def, 0, 1, &v, 0);
    *out = (uint8_t)v;
    return rc;
}

/* A list of at most cap ints (or bools); *n receives the count. */
static int get_list(rd *r, const char *key, uint32_t cap, int64_t *vals, uint32_t *n)
{
    const txlm_pk_value *v = r->get(r->user, key);
    *n = 0;
    if (!v || v->kind == TXLM_PK_NONE) return 0;
    if (v->kind != TXLM_PK_LIST && v->kind != TXLM_PK_TUPLE) {
        char d[240];
        return txlm_fail(r->err, TXLM_ERR_FORMAT, "%s: hyper-parameter '%s' is %s, not a list", r->where, key,
                         txlm_pk_describe(v, d, sizeof d));
    }
    if (v->n > cap)
        return txlm_fail(r->err, TXLM_ERR_UNSUPPORTED, "%s: hyper-parameter '%s' has %" PRIu32 " entries, at most %" PRIu32,
                         r->where, key, v->n, cap);
    for (uint32_t i = 0; i < v->n; i++) {
        const txlm_pk_value *e = v->u.seq.items[i];
        if ((e->kind != TXLM_PK_INT && e->kind != TXLM_PK_BOOL) || e->u.i < 0 || e->u.i > UINT32_MAX)
            return txlm_fail(r->err, TXLM_ERR_FORMAT, "%s: hyper-parameter '%s'[%" PRIu32 "] is not a non-negative integer",
                             r->where, key, i);
        vals[i] = e->u.i;
    }
    *n = v->n;
    return 0;
}

static int cutoffs_and_ties(rd *r, int ties, txlm_hparams *h)
{
    int64_t vals[TXLM_MAX_CLUSTERS];
    uint32_t n = 0;
    int rc = get_list(r, "cutoffs", TXLM_MAX_CLUSTERS, vals, &n);
    if (rc) return rc;
    /* the criterion and the embedding keep n_token at the end */
    if (n && vals[n - 1] == h->n_token) n--;
    if (n > TXLM_MAX_CUTOFFS)
        return txlm_fail(r->err, TXLM_ERR_UNSUPPORTED, "%s: %" PRIu32 " cutoffs, at most %d", r->where, n, TXLM_MAX_CUTOFFS);
    h->n_cutoffs = n;
    for (uint32_t i = 0; i < n; i++) h->cutoffs[i] = (uint32_t)vals[i];
    if (!ties) return 0;
    if ((rc = get_bool(r, "tie_weight", 1, &h->tie_weight))) return rc;
    if ((rc = get_list(r, "tie_projs", TXLM_MAX_CLUSTERS, vals, &n))) return rc;
    for (uint32_t i = 0; i < n && i <= h->n_cutoffs; i++) {
        if (vals[i] > 1)
            return txlm_fail(r->err, TXLM_ERR_FORMAT, "%s: tie_projs[%" PRIu32 "] is not a bool", r->where, i);
        h->tie_projs[i] = (uint8_t)vals[i];
    }
    return 0;
}

int txlm_pk_hparams(const char *where, txlm_pk_getter get, void *user, int ties, txlm_hparams *h, txlm_err *err)
{
    rd r = {where, get, user, err};
    int64_t v = 0;
    memset(h, 0, sizeof *h);
    int rc = get_u32(&r, "n_token", 0, &h->n_token, 1);
    if (!rc) rc = get_u32(&r, "n_layer", 0, &h->n_layer, 1);
    if (!rc) rc = get_u32(&r, "n_head", 0, &h->n_head, 1);
    if (!rc) rc = get_u32(&r, "d_model", 0, &h->d_model, 1);
    if (!rc) rc = get_u32(&r, "d_head", 0, &h->d_head, 1);
    if (!rc) rc = get_u32(&r, "d_inner", 0, &h->d_inner, 1);
    if (!rc) rc = get_int(&r, "d_embed", h->d_model, -1, UINT32_MAX, &v, 0);
    h->d_embed = v > 0 ? (uint32_t)v : h->d_model; /* NVIDIA's -1: d_model */
    if (!rc) rc = get_u32(&r, "div_val", 1, &h->div_val, 0);
    if (!rc) rc = get_bool(&r, "pre_lnorm", 0, &h->pre_lnorm);
    if (!rc) rc = get_u32(&r, "tgt_len", 0, &h->tgt_len, 0);
    if (!rc) rc = get_u32(&r, "ext_len", 0, &h->ext_len, 0);
    if (!rc) rc = get_u32(&r, "mem_len", 0, &h->mem_len, 0);
    if (!rc) rc = get_bool(&r, "same_length", 0, &h->same_length);
    if (!rc) rc = get_u32(&r, "attn_type", 0, &h->attn_type, 0);
    if (!rc) rc = get_int(&r, "clamp_len", -1, INT32_MIN, INT32_MAX, &v, 0);
    h->clamp_len = (int32_t)v;
    if (!rc) rc = get_int(&r, "sample_softmax", -1, INT32_MIN, INT32_MAX, &v, 0);
    if (!rc && v > 0)
        rc = txlm_fail(err, TXLM_ERR_UNSUPPORTED, "%s: sample_softmax %" PRId64 " is not supported", where, v);
    if (!rc) rc = cutoffs_and_ties(&r, ties, h);
    h->layer_norm_epsilon = 1e-5f; /* nn.LayerNorm's default, which both codes use */
    return rc;
}
