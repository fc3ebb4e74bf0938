/* What the pickle reader makes of the names a pickle mentions (pickle.h).
 * A closed list of globals is reproduced as data (dicts, tensors,
 * storages); any other global is only a name, and calling or
 * instantiating it (REDUCE, NEWOBJ) makes an inert record of the name and
 * the arguments, to which BUILD attaches the state. Nothing is imported,
 * called or looked up: a record is read by whoever wants something from
 * it, and a file gets no say in what that is. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <txlm_status.h>

#include "dtype.h"
#include "pickle_vm.h"

typedef txlm_pk_vm vm;

static const struct {
    const char *module, *name;
    uint32_t id;
} allowed[] = {
    {"collections", "OrderedDict", TXLM_PKG_ORDERED_DICT},
    {"collections", "Counter", TXLM_PKG_COUNTER},
    {"torch._utils", "_rebuild_tensor_v2", TXLM_PKG_REBUILD_TENSOR_V2},
    {"torch._utils", "_rebuild_parameter", TXLM_PKG_REBUILD_PARAMETER},
    {"torch", "FloatStorage", TXLM_PKG_FLOAT_STORAGE},
    {"torch", "HalfStorage", TXLM_PKG_HALF_STORAGE},
    {"torch", "BFloat16Storage", TXLM_PKG_BFLOAT16_STORAGE},
    {"torch", "DoubleStorage", TXLM_PKG_DOUBLE_STORAGE},
    {"torch", "LongStorage", TXLM_PKG_LONG_STORAGE},
    {"torch", "IntStorage", TXLM_PKG_INT_STORAGE},
    {"torch", "ShortStorage", TXLM_PKG_SHORT_STORAGE},
    {"torch", "CharStorage", TXLM_PKG_CHAR_STORAGE},
    {"torch", "ByteStorage", TXLM_PKG_BYTE_STORAGE},
    {"torch", "BoolStorage", TXLM_PKG_BOOL_STORAGE},
    /* old saves from a GPU name the CUDA types; the bytes are the same */
    {"torch.cuda", "FloatStorage", TXLM_PKG_FLOAT_STORAGE},
    {"torch.cuda", "HalfStorage", TXLM_PKG_HALF_STORAGE},
    {"torch.cuda", "BFloat16Storage", TXLM_PKG_BFLOAT16_STORAGE},
    {"torch.cuda", "LongStorage", TXLM_PKG_LONG_STORAGE},
};

/* Element type and size of each storage id (from TXLM_PKG_FLOAT_STORAGE on). */
static const struct {
    uint32_t dtype, size;
    const char *name;
} storage_types[] = {
    {TXLM_DT_F32, 4, "torch.FloatStorage"},      {TXLM_DT_F16, 2, "torch.HalfStorage"},   {TXLM_DT_BF16, 2, "torch.BFloat16Storage"},
    {TXLM_PK_DT_OTHER, 8, "torch.DoubleStorage"}, {TXLM_PK_DT_OTHER, 8, "torch.LongStorage"}, {TXLM_PK_DT_OTHER, 4, "torch.IntStorage"},
    {TXLM_PK_DT_OTHER, 2, "torch.ShortStorage"}, {TXLM_PK_DT_OTHER, 1, "torch.CharStorage"}, {TXLM_PK_DT_OTHER, 1, "torch.ByteStorage"},
    {TXLM_PK_DT_OTHER, 1, "torch.BoolStorage"},
};

int txlm_pkvm_global(vm *m, const char *mod, size_t mod_len, const char *name, size_t name_len)
{
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
        if (strlen(allowed[i].module) == mod_len && !memcmp(allowed[i].module, mod, mod_len) &&
            strlen(allowed[i].name) == name_len && !memcmp(allowed[i].name, name, name_len)) {
            txlm_pk_value *v = txlm_pkvm_new(m, TXLM_PK_GLOBAL);
            if (v) v->u.global = allowed[i].id;
            return txlm_pkvm_push(m, v);
        }
    if (mod_len > UINT32_MAX || name_len > UINT32_MAX) return txlm_pkvm_fail(m, TXLM_ERR_LIMIT, "global name too long");
    txlm_pk_value *v = txlm_pkvm_new(m, TXLM_PK_CLASS);
    if (v) {
        v->u.cls.module = mod;
        v->u.cls.module_len = (uint32_t)mod_len;
        v->u.cls.name = name;
        v->u.cls.name_len = (uint32_t)name_len;
    }
    return txlm_pkvm_push(m, v);
}

static int uint_item(const txlm_pk_value *v, uint64_t *out)
{
    if (v->kind != TXLM_PK_INT || v->u.i < 0) return 0;
    *out = (uint64_t)v->u.i;
    return 1;
}

/* ('storage', <storage type>, key, location, numel[, view]). The location
 * (cpu, cuda:0, ...) does not matter: the bytes are in the file. */
static int storage_ref(vm *m, const txlm_pk_value *pid)
{
    txlm_pk_value **it = pid->u.seq.items;
    txlm_pk_value *v = txlm_pkvm_new(m, TXLM_PK_STORAGE);
    if (!v) return m->err->code;
    txlm_pk_storage *s = &v->u.storage;
    if (it[1]->kind != TXLM_PK_GLOBAL || it[1]->u.global < TXLM_PKG_FLOAT_STORAGE) {
        char what[320], cls[240];
        snprintf(what, sizeof what, "storage whose type is %s, not a torch storage type",
                 txlm_pk_describe(it[1], cls, sizeof cls));
        return txlm_pkvm_fail(m, TXLM_ERR_UNSUPPORTED, what);
    }
    uint32_t t = it[1]->u.global - TXLM_PKG_FLOAT_STORAGE;
    s->dtype = storage_types[t].dtype;
    s->elem_size = storage_types[t].size;
    s->type_name = storage_types[t].name;
    if (it[2]->kind != TXLM_PK_STR || it[3]->kind != TXLM_PK_STR || !uint_item(it[4], &s->numel))
        return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "storage reference with a key, location or size of the wrong type");
    s->key = it[2]->u.str.s;
    s->key_len = it[2]->u.str.len;
    if (pid->n == 6 && it[5]->kind != TXLM_PK_NONE) {
        const txlm_pk_value *w = it[5];
        if (w->kind != TXLM_PK_TUPLE || w->n != 3 || w->u.seq.items[0]->kind != TXLM_PK_STR ||
            !uint_item(w->u.seq.items[1], &s->view_offset) || !uint_item(w->u.seq.items[2], &s->view_numel))
            return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "storage view that is not (key, offset, size)");
        if (s->view_offset > s->numel || s->view_numel > s->numel - s->view_offset)
            return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "storage view beyond its storage");
        s->is_view = 1;
        s->view_key = w->u.seq.items[0]->u.str.s;
        s->view_key_len = w->u.seq.items[0]->u.str.len;
    }
    return txlm_pkvm_push(m, v);
}

/* Storages, and (legacy saves of whole modules) ('module', class, source
 * file, source text): the class stands for itself, its source is text
 * that is skipped. */
int txlm_pkvm_persid(vm *m)
{
    txlm_pk_value *pid = txlm_pkvm_pop(m, "BINPERSID");
    if (!pid) return m->err->code;
    if (pid->kind == TXLM_PK_TUPLE && pid->n == 4 && txlm_pk_str_is(pid->u.seq.items[0], "module")) {
        txlm_pk_value *cls = pid->u.seq.items[1];
        if (cls->kind != TXLM_PK_CLASS)
            return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "module persistent id that does not name a class");
        return txlm_pkvm_push(m, cls);
    }
    if (pid->kind != TXLM_PK_TUPLE || (pid->n != 5 && pid->n != 6) || !txlm_pk_str_is(pid->u.seq.items[0], "storage"))
        return txlm_pkvm_fail(m, TXLM_ERR_UNSUPPORTED,
                              "persistent id that is not a ('storage', type, key, location, size) tuple");
    return storage_ref(m, pid);
}

/* A value of the wrong kind where data was expected: a record or class
 * there is refused as such (unsupported), anything else is malformed. */
static int not_a(vm *m, const char *what, const txlm_pk_value *v, const char *expected)
{
    char msg[320], d[240];
    int rec = v->kind == TXLM_PK_OBJECT || v->kind == TXLM_PK_CLASS;
    if (rec) snprintf(msg, sizeof msg, "%s %s, not %s", what, txlm_pk_describe(v, d, sizeof d), expected);
    else snprintf(msg, sizeof msg, "%s not %s", what, expected);
    return txlm_pkvm_fail(m, rec ? TXLM_ERR_UNSUPPORTED : TXLM_ERR_FORMAT, msg);
}

static int rebuild_tensor(vm *m, const txlm_pk_value *args)
{
    if (args->n != 6 && args->n != 7)
        return txlm_pkvm_fail(m, TXLM_ERR_UNSUPPORTED, "_rebuild_tensor_v2 with other than 6 or 7 arguments");
    txlm_pk_value **a = args->u.seq.items;
    txlm_pk_value *v = txlm_pkvm_new(m, TXLM_PK_TENSOR);
    if (!v) return m->err->code;
    txlm_pk_tensor *t = &v->u.tensor;
    if (a[0]->kind != TXLM_PK_STORAGE) return not_a(m, "_rebuild_tensor_v2 of", a[0], "a storage");
    t->storage = a[0];
    if (!uint_item(a[1], &t->offset))
        return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "tensor with a negative or non-integer offset");
    if (a[2]->kind != TXLM_PK_TUPLE || a[3]->kind != TXLM_PK_TUPLE || a[2]->n != a[3]->n)
        return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "tensor whose size and stride are not tuples of the same length");
    if (a[2]->n > TXLM_PK_MAX_RANK) return txlm_pkvm_fail(m, TXLM_ERR_UNSUPPORTED, "tensor of rank above 8");
    t->rank = a[2]->n;
    for (uint32_t i = 0; i < t->rank; i++)
        if (!uint_item(a[2]->u.seq.items[i], &t->dims[i]) || !uint_item(a[3]->u.seq.items[i], &t->strides[i]))
            return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "tensor size or stride that is not a non-negative integer");
    if (a[4]->kind != TXLM_PK_BOOL && a[4]->kind != TXLM_PK_INT)
        return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "tensor whose requires_grad is not a bool");
    if (a[5]->kind != TXLM_PK_DICT) return not_a(m, "tensor whose backward hooks are", a[5], "a dict");
    if (args->n == 7 && a[6]->kind != TXLM_PK_NONE && a[6]->kind != TXLM_PK_DICT)
        return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "tensor whose metadata is not a dict");
    return txlm_pkvm_push(m, v);
}

/* _rebuild_parameter(data, requires_grad, backward_hooks): a Parameter is
 * its tensor, as a value of its own so that a module tree can tell one
 * Parameter referenced twice (a tie) from two that happen to share bytes. */
static int rebuild_parameter(vm *m, const txlm_pk_value *args)
{
    if (args->n != 3) return txlm_pkvm_fail(m, TXLM_ERR_UNSUPPORTED, "_rebuild_parameter with other than 3 arguments");
    const txlm_pk_value *data = args->u.seq.items[0];
    if (data->kind != TXLM_PK_TENSOR) return not_a(m, "_rebuild_parameter whose data is", data, "a tensor");
    txlm_pk_value *v = txlm_pkvm_new(m, TXLM_PK_TENSOR);
    if (!v) return m->err->code;
    v->u.tensor = data->u.tensor;
    return txlm_pkvm_push(m, v);
}

/* OrderedDict() / Counter() / either of (dict) or, for OrderedDict, of a
 * list of (key, value) pairs. */
static int new_dict(vm *m, const txlm_pk_value *args)
{
    txlm_pk_value *d = txlm_pkvm_new(m, TXLM_PK_DICT);
    if (!d) return m->err->code;
    if (args->n == 1 && args->u.seq.items[0]->kind == TXLM_PK_DICT) {
        const txlm_pk_value *src = args->u.seq.items[0];
        for (uint32_t i = 0; i < src->n; i++) {
            int rc = txlm_pkvm_append(m, d, src->u.seq.items[i]);
            if (rc) return rc;
        }
    } else if (args->n == 1 && args->u.seq.items[0]->kind == TXLM_PK_LIST) {
        const txlm_pk_value *src = args->u.seq.items[0];
        for (uint32_t i = 0; i < src->n; i++) {
            const txlm_pk_value *pr = src->u.seq.items[i];
            if ((pr->kind != TXLM_PK_LIST && pr->kind != TXLM_PK_TUPLE) || pr->n != 2)
                return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "dict built from a list of items that are not pairs");
            int rc = txlm_pkvm_append(m, d, pr->u.seq.items[0]);
            if (!rc) rc = txlm_pkvm_append(m, d, pr->u.seq.items[1]);
            if (rc) return rc;
        }
    } else if (args->n != 0) {
        return txlm_pkvm_fail(m, TXLM_ERR_UNSUPPORTED, "OrderedDict/Counter built from something other than a dict");
    }
    return txlm_pkvm_push(m, d);
}

static int new_record(vm *m, const txlm_pk_value *cls, const txlm_pk_value *args)
{
    txlm_pk_value *v = txlm_pkvm_new(m, TXLM_PK_OBJECT);
    if (!v) return m->err->code;
    v->u.obj.cls = cls;
    v->u.obj.args = args;
    return txlm_pkvm_push(m, v);
}

/* Applies fn to args: an allowed global is reproduced as data, any other
 * class becomes a record. `op` names the opcode in messages. */
static int apply(vm *m, const txlm_pk_value *fn, const txlm_pk_value *args, const char *op)
{
    char what[200];
    if (args->kind != TXLM_PK_TUPLE) {
        snprintf(what, sizeof what, "%s whose arguments are not a tuple", op);
        return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, what);
    }
    if (fn->kind == TXLM_PK_CLASS) return new_record(m, fn, args);
    if (fn->kind != TXLM_PK_GLOBAL) {
        char d[128];
        snprintf(what, sizeof what, "%s of %s", op, txlm_pk_describe(fn, d, sizeof d));
        return txlm_pkvm_fail(m, TXLM_ERR_UNSUPPORTED, what);
    }
    switch (fn->u.global) {
    case TXLM_PKG_ORDERED_DICT:
    case TXLM_PKG_COUNTER: return new_dict(m, args);
    case TXLM_PKG_REBUILD_TENSOR_V2: return rebuild_tensor(m, args);
    case TXLM_PKG_REBUILD_PARAMETER: return rebuild_parameter(m, args);
    default:
        snprintf(what, sizeof what, "%s of a storage type (storages come only by persistent id)", op);
        return txlm_pkvm_fail(m, TXLM_ERR_UNSUPPORTED, what);
    }
}

int txlm_pkvm_reduce(vm *m)
{
    txlm_pk_value *args = txlm_pkvm_pop(m, "REDUCE"), *fn = args ? txlm_pkvm_pop(m, "REDUCE") : NULL;
    return fn ? apply(m, fn, args, "REDUCE") : m->err->code;
}

/* cls.__new__(cls, *args), as protocol 2 pickles an instance. */
int txlm_pkvm_newobj(vm *m)
{
    txlm_pk_value *args = txlm_pkvm_pop(m, "NEWOBJ"), *cls = args ? txlm_pkvm_pop(m, "NEWOBJ") : NULL;
    return cls ? apply(m, cls, args, "NEWOBJ") : m->err->code;
}

/* BUILD sets instance attributes: a record keeps the state as given (the
 * last BUILD wins); on an OrderedDict it is the state dict's _metadata,
 * which carries nothing the packer needs. */
int txlm_pkvm_build(vm *m)
{
    txlm_pk_value *state = txlm_pkvm_pop(m, "BUILD");
    txlm_pk_value *obj = state ? txlm_pkvm_top(m, "BUILD") : NULL;
    if (!obj) return m->err->code;
    if (obj->kind == TXLM_PK_OBJECT) {
        obj->u.obj.state = state;
        return 0;
    }
    if (obj->kind != TXLM_PK_DICT) {
        char what[64];
        snprintf(what, sizeof what, "BUILD on a %s", txlm_pk_kind_name(obj->kind));
        return txlm_pkvm_fail(m, TXLM_ERR_UNSUPPORTED, what);
    }
    return 0;
}

static int name_is(const char *s, uint32_t n, const char *want)
{
    return strlen(want) == n && !memcmp(s, want, n);
}

int txlm_pk_class_is(const txlm_pk_value *v, const char *module, const char *name)
{
    if (v && v->kind == TXLM_PK_OBJECT) v = v->u.obj.cls;
    return v && v->kind == TXLM_PK_CLASS && name_is(v->u.cls.module, v->u.cls.module_len, module) &&
           name_is(v->u.cls.name, v->u.cls.name_len, name);
}

const char *txlm_pk_describe(const txlm_pk_value *v, char *buf, size_t cap)
{
    if (!cap) return "";
    const txlm_pk_value *c = v && v->kind == TXLM_PK_OBJECT ? v->u.obj.cls : v;
    if (!c || c->kind != TXLM_PK_CLASS) {
        snprintf(buf, cap, "a %s", v ? txlm_pk_kind_name(v->kind) : "nothing");
        return buf;
    }
    char name[160];
    size_t k = 0;
    uint32_t total = c->u.cls.module_len + 1 + c->u.cls.name_len;
    for (uint32_t i = 0; i < total && k + 1 < sizeof name; i++) {
        char ch = i < c->u.cls.module_len ? c->u.cls.module[i]
                  : i == c->u.cls.module_len ? '.'
                                             : c->u.cls.name[i - c->u.cls.module_len - 1];
        name[k++] = (ch >= 0x20 && ch < 0x7f) ? ch : '?';
    }
    name[k] = 0;
    snprintf(buf, cap, "%sglobal '%s' at byte %" PRIu64 " (not allowed here: nothing in the file is run)",
             v->kind == TXLM_PK_OBJECT ? "an object of " : "", name, c->at);
    return buf;
}

const txlm_pk_value *txlm_pk_state(const txlm_pk_value *obj)
{
    if (!obj || obj->kind != TXLM_PK_OBJECT || !obj->u.obj.state) return NULL;
    const txlm_pk_value *st = obj->u.obj.state;
    if (st->kind == TXLM_PK_TUPLE && st->n == 2) st = st->u.seq.items[0];
    return st->kind == TXLM_PK_DICT ? st : NULL;
}

const txlm_pk_value *txlm_pk_attr(const txlm_pk_value *obj, const char *name)
{
    return txlm_pk_dict_get(txlm_pk_state(obj), name);
}

const txlm_pk_value *txlm_pk_vocab_attrs(const txlm_pk_value *v)
{
    if (v && v->kind == TXLM_PK_DICT) return v;
    const txlm_pk_value *inner = txlm_pk_attr(v, "vocab");
    if (inner && inner->kind == TXLM_PK_OBJECT) v = inner;
    return txlm_pk_attr(v, "idx2sym") ? txlm_pk_state(v) : NULL;
}
