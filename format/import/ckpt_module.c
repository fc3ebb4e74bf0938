/* Whole modules saved with torch.save(model), as the authors' train.py
 * saves model.pt (kimiyoung/transformer-xl, pytorch/train.py). The pickle
 * is a tree of inert records (pickle.h): each module's state holds
 * _parameters, _buffers and _modules, and its own attributes. Parameters
 * are taken by their module path, exactly the names state_dict() would
 * give; hyper-parameters come from the attributes (ckpt_source.h); a tie
 * is one Parameter referenced from two modules, so ties are told by
 * identity (the same pickled object, or the same storage bytes), never
 * assumed. An empty projection slot is None. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm_status.h>

#include "ckpt_list.h"
#include "ckpt_source.h"
#include "torch_read.h"

#define MAX_DEPTH 32
#define MAX_PARAMS 65536

typedef struct seen {
    char name[96];
    const txlm_pk_value *v;
} seen;

typedef struct walker {
    txlm_torch_obj *o;
    seen *list;
    uint32_t n;
    txlm_err *err;
} walker;

int txlm_module_is(const txlm_pk_value *root)
{
    return root && root->kind == TXLM_PK_OBJECT && txlm_pk_attr(root, "_modules") && txlm_pk_attr(root, "_parameters");
}

static int add(walker *w, const char *name, const txlm_pk_value *v)
{
    if (w->n == MAX_PARAMS) return txlm_fail(w->err, TXLM_ERR_LIMIT, "%s: more than %d parameters", w->o->path, MAX_PARAMS);
    if (strlen(name) >= sizeof w->list[0].name)
        return txlm_fail(w->err, TXLM_ERR_FORMAT, "%s: parameter name '%.60s...' is too long", w->o->path, name);
    if (w->n % 256 == 0) {
        seen *n = realloc(w->list, (w->n + 256) * sizeof *n);
        if (!n) return txlm_fail(w->err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", w->o->path);
        w->list = n;
    }
    snprintf(w->list[w->n].name, sizeof w->list[0].name, "%s", name);
    w->list[w->n++].v = v;
    return txlm_torch_add(w->o, name, v, w->err);
}

/* Each entry of a module's _parameters or _buffers dict: None is an empty slot. */
static int take_dict(walker *w, const txlm_pk_value *d, const char *prefix, const char *what)
{
    if (!d) return 0;
    if (d->kind != TXLM_PK_DICT)
        return txlm_fail(w->err, TXLM_ERR_FORMAT, "%s: module '%s' has a %s that is not a dict", w->o->path, prefix, what);
    for (uint32_t i = 0; i + 1 < d->n; i += 2) {
        const txlm_pk_value *k = d->u.seq.items[i], *v = d->u.seq.items[i + 1];
        char name[160];
        if (k->kind != TXLM_PK_STR || k->u.str.len > 64 || memchr(k->u.str.s, 0, k->u.str.len))
            return txlm_fail(w->err, TXLM_ERR_FORMAT, "%s: module '%s' has a %s entry without a name", w->o->path, prefix, what);
        snprintf(name, sizeof name, "%s%.*s", prefix, (int)k->u.str.len, k->u.str.s);
        if (v->kind == TXLM_PK_NONE) continue;
        int rc = add(w, name, v);
        if (rc) return rc;
    }
    return 0;
}

static int walk(walker *w, const txlm_pk_value *m, const char *prefix, int depth)
{
    char d[240];
    if (depth > MAX_DEPTH)
        return txlm_fail(w->err, TXLM_ERR_FORMAT, "%s: modules nested deeper than %d at '%s' (a cycle?)", w->o->path,
                         MAX_DEPTH, prefix);
    if (!txlm_module_is(m))
        return txlm_fail(w->err, TXLM_ERR_FORMAT, "%s: '%s' is %s, not a module", w->o->path, prefix,
                         txlm_pk_describe(m, d, sizeof d));
    int rc = take_dict(w, txlm_pk_attr(m, "_parameters"), prefix, "_parameters");
    if (!rc) rc = take_dict(w, txlm_pk_attr(m, "_buffers"), prefix, "_buffers");
    const txlm_pk_value *mods = txlm_pk_attr(m, "_modules");
    if (!rc && mods->kind != TXLM_PK_DICT)
        return txlm_fail(w->err, TXLM_ERR_FORMAT, "%s: module '%s' has _modules that are not a dict", w->o->path, prefix);
    for (uint32_t i = 0; !rc && i + 1 < mods->n; i += 2) {
        const txlm_pk_value *k = mods->u.seq.items[i], *v = mods->u.seq.items[i + 1];
        char sub[160];
        if (k->kind != TXLM_PK_STR || k->u.str.len > 64 || memchr(k->u.str.s, 0, k->u.str.len))
            return txlm_fail(w->err, TXLM_ERR_FORMAT, "%s: module '%s' has a submodule without a name", w->o->path, prefix);
        if (v->kind == TXLM_PK_NONE) continue;
        int n = snprintf(sub, sizeof sub, "%s%.*s.", prefix, (int)k->u.str.len, k->u.str.s);
        if (n < 0 || (size_t)n >= sizeof sub)
            return txlm_fail(w->err, TXLM_ERR_FORMAT, "%s: module path '%s...' is too long", w->o->path, prefix);
        rc = walk(w, v, sub, depth + 1);
    }
    return rc;
}

static const txlm_pk_value *find(const walker *w, const char *name)
{
    for (uint32_t i = 0; i < w->n; i++)
        if (!strcmp(w->list[i].name, name)) return w->list[i].v;
    return NULL;
}

/* One Parameter object, or two views of the same bytes. */
static int same_param(const txlm_pk_value *a, const txlm_pk_value *b)
{
    if (!a || !b) return 0;
    if (a == b) return 1;
    const txlm_pk_tensor *x = &a->u.tensor, *y = &b->u.tensor;
    const txlm_pk_storage *s = &x->storage->u.storage, *t = &y->storage->u.storage;
    return s->key_len == t->key_len && !memcmp(s->key, t->key, s->key_len) && x->offset == y->offset &&
           x->rank == y->rank && !memcmp(x->dims, y->dims, x->rank * sizeof x->dims[0]);
}

/* tie_weight, tie_projs and untie_r from what the modules share. */
static void ties(const walker *w, txlm_hparams *h)
{
    char a[96], b[96];
    h->untie_r = find(w, "r_w_bias") == NULL;
    snprintf(a, sizeof a, "crit.out_layers.0.weight");
    h->tie_weight = same_param(find(w, a), find(w, "word_emb.emb_layers.0.weight"));
    for (uint32_t c = 0; c <= h->n_cutoffs; c++) {
        snprintf(a, sizeof a, "crit.out_projs.%u", c);
        snprintf(b, sizeof b, "word_emb.emb_projs.%u", h->div_val == 1 ? 0 : c);
        h->tie_projs[c] = (uint8_t)same_param(find(w, a), find(w, b));
    }
}

typedef struct attrs {
    const txlm_pk_value *model, *crit, *ff;
} attrs;

/* The model's attributes, cutoffs and div_val from the criterion, d_inner
 * and pre_lnorm from the first layer's feed-forward. */
static const txlm_pk_value *attr_of(void *user, const char *key)
{
    const attrs *a = user;
    if (!strcmp(key, "cutoffs") || !strcmp(key, "div_val")) return txlm_pk_attr(a->crit, key);
    if (!strcmp(key, "d_inner") || !strcmp(key, "pre_lnorm")) return txlm_pk_attr(a->ff, key);
    return txlm_pk_attr(a->model, key);
}

static const txlm_pk_value *submodule(const txlm_pk_value *m, const char *name)
{
    return txlm_pk_dict_get(txlm_pk_attr(m, "_modules"), name);
}

int txlm_module_read(txlm_torch_obj *o, txlm_source *out, txlm_err *err)
{
    memset(out, 0, sizeof *out);
    const txlm_pk_value *root = txlm_torch_root(o);
    walker w = {o, NULL, 0, err};
    int rc = walk(&w, root, "", 0);
    const txlm_pk_value *layers = rc ? NULL : submodule(root, "layers"), *layer0 = submodule(layers, "0");
    attrs a = {root, submodule(root, "crit"), submodule(layer0, "pos_ff")};
    if (!rc && (!a.crit || !a.ff))
        rc = txlm_fail(err, TXLM_ERR_FORMAT, "%s: the saved module has no crit or layers.0.pos_ff: not a MemTransformerLM",
                       o->path);
    char where[600];
    snprintf(where, sizeof where, "%s: the saved model", o->path);
    if (!rc) rc = txlm_pk_hparams(where, attr_of, &a, 0, &out->h, err);
    if (!rc) ties(&w, &out->h);
    char cls[240];
    txlm_pk_describe(root, cls, sizeof cls);
    out->order = TXLM_CLUSTERS_REVERSE;
    snprintf(out->why, sizeof out->why, "the authors' PyTorch code reads tail cluster i at head column -i");
    snprintf(out->what, sizeof out->what, "a whole module saved by torch.save(model), as the authors' PyTorch train.py does");
    if (!rc && !txlm_pk_class_is(root, "mem_transformer", "MemTransformerLM"))
        snprintf(out->what, sizeof out->what, "a whole module (%.80s) in the authors' PyTorch layout", cls + 13);
    free(w.list);
    if (!rc) out->ck = txlm_torch_take(o);
    return rc;
}

static int sniff(txlm_probe *p) { return txlm_module_is(txlm_probe_torch_root(p)); }

/* The vocabulary is the corpus cache's (--vocab cache.pt) or a vocabulary file's. */
static int open_module(txlm_probe *p, const txlm_source_options *opt, txlm_source *out, txlm_err *err)
{
    int rc = txlm_source_refuse(opt, p->path, 1, 1, 0, err);
    if (!rc && !opt->vocab)
        rc = txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: a whole saved model holds no vocabulary: give --vocab "
                       "(the corpus cache.pt the training code saved, or a vocabulary file)", p->path);
    txlm_torch_obj *o = txlm_probe_take_torch(p);
    if (!rc) rc = txlm_module_read(o, out, err);
    txlm_torch_free(o);
    if (!rc) rc = txlm_source_input(out, p->path, err);
    if (!rc) rc = txlm_source_vocab(out, opt->vocab, err);
    return rc;
}

/* Its tensors, with no vocabulary needed. */
static int list_module(txlm_probe *p, FILE *out, txlm_err *err)
{
    txlm_source s;
    memset(&s, 0, sizeof s);
    txlm_torch_obj *o = txlm_probe_take_torch(p);
    int rc = txlm_module_read(o, &s, err);
    txlm_torch_free(o);
    if (!rc) txlm_checkpoint_print(s.ck, out);
    txlm_source_free(&s);
    return rc;
}

const txlm_source_kind txlm_source_module = {
    "module", "the authors' whole saved model (model.pt, with --vocab cache.pt)", sniff, open_module, list_module,
};
