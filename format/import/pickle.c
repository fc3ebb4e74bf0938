/* The pickle subset reader (pickle.h). A stack machine over plain values:
 * every opcode is checked against the bytes left, every pop against the
 * stack and the current mark, every memo index against what was stored.
 * Nothing is imported or called; globals are a closed list of names whose
 * meaning is reproduced here as data. */
#include "pickle.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm_status.h>

#include "dtype.h"
#include "pickle_vm.h"

#define CHUNK_VALUES 4096
#define GLOBAL_LINE_CAP 256

typedef struct chunk {
    struct chunk *next;
    uint32_t used;
    txlm_pk_value v[CHUNK_VALUES];
} chunk;

struct txlm_pickle {
    chunk *chunks;
};

typedef txlm_pk_vm vm;

static const struct {
    uint8_t op;
    const char *name;
} op_names[] = {
    {'(', "MARK"}, {'.', "STOP"}, {'0', "POP"}, {'1', "POP_MARK"}, {'2', "DUP"}, {'F', "FLOAT"}, {'I', "INT"},
    {'J', "BININT"}, {'K', "BININT1"}, {'L', "LONG"}, {'M', "BININT2"}, {'N', "NONE"}, {'P', "PERSID"},
    {'Q', "BINPERSID"}, {'R', "REDUCE"}, {'S', "STRING"}, {'T', "BINSTRING"}, {'U', "SHORT_BINSTRING"},
    {'V', "UNICODE"}, {'X', "BINUNICODE"}, {'a', "APPEND"}, {'b', "BUILD"}, {'c', "GLOBAL"}, {'d', "DICT"},
    {'}', "EMPTY_DICT"}, {'e', "APPENDS"}, {'g', "GET"}, {'h', "BINGET"}, {'i', "INST"}, {'j', "LONG_BINGET"},
    {'l', "LIST"}, {']', "EMPTY_LIST"}, {'o', "OBJ"}, {'p', "PUT"}, {'q', "BINPUT"}, {'r', "LONG_BINPUT"},
    {'s', "SETITEM"}, {'t', "TUPLE"}, {')', "EMPTY_TUPLE"}, {'u', "SETITEMS"}, {'G', "BINFLOAT"},
    {0x80, "PROTO"}, {0x81, "NEWOBJ"}, {0x82, "EXT1"}, {0x83, "EXT2"}, {0x84, "EXT4"}, {0x85, "TUPLE1"},
    {0x86, "TUPLE2"}, {0x87, "TUPLE3"}, {0x88, "NEWTRUE"}, {0x89, "NEWFALSE"}, {0x8a, "LONG1"}, {0x8b, "LONG4"},
    {'B', "BINBYTES"}, {'C', "SHORT_BINBYTES"}, {0x8c, "SHORT_BINUNICODE"}, {0x8d, "BINUNICODE8"},
    {0x8e, "BINBYTES8"}, {0x8f, "EMPTY_SET"}, {0x90, "ADDITEMS"}, {0x91, "FROZENSET"}, {0x92, "NEWOBJ_EX"},
    {0x93, "STACK_GLOBAL"}, {0x94, "MEMOIZE"}, {0x95, "FRAME"}, {0x96, "BYTEARRAY8"}, {0x97, "NEXT_BUFFER"},
    {0x98, "READONLY_BUFFER"},
};

static const char *op_name(uint8_t op)
{
    for (size_t i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
        if (op_names[i].op == op) return op_names[i].name;
    return "unknown";
}

const char *txlm_pk_kind_name(uint32_t kind)
{
    static const char *names[] = {"None", "bool", "int", "float", "str", "tuple", "list", "dict", "global", "storage",
                                  "tensor", "class", "object record"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

int txlm_pkvm_fail(vm *m, int code, const char *what)
{
    return txlm_fail(m->err, code, "%s: pickle %s at byte %" PRIu64, m->where, what, m->at);
}

txlm_pk_value *txlm_pkvm_new(vm *m, uint32_t kind)
{
    chunk *c = m->pk->chunks;
    if (!c || c->used == CHUNK_VALUES) {
        c = malloc(sizeof *c);
        if (!c) {
            txlm_fail(m->err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory reading the pickle", m->where);
            return NULL;
        }
        c->used = 0;
        c->next = m->pk->chunks;
        m->pk->chunks = c;
    }
    txlm_pk_value *v = &c->v[c->used++];
    memset(v, 0, sizeof *v);
    v->kind = kind;
    v->at = m->at;
    return v;
}

static int grow(void **buf, uint64_t *cap, uint64_t need, size_t elem)
{
    if (need <= *cap) return 0;
    uint64_t n = *cap ? *cap : 16;
    while (n < need) n *= 2;
    void *nb = realloc(*buf, n * elem);
    if (!nb) return -1;
    *buf = nb;
    *cap = n;
    return 0;
}

int txlm_pkvm_push(vm *m, txlm_pk_value *v)
{
    if (!v) return m->err ? m->err->code : TXLM_ERR_OUT_OF_MEMORY;
    if (grow((void **)&m->stack, &m->scap, m->sp + 1, sizeof *m->stack))
        return txlm_fail(m->err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory reading the pickle", m->where);
    m->stack[m->sp++] = v;
    return 0;
}

/* The stack floor: values below the innermost mark belong to an outer
 * construction and may not be popped by a plain pop. */
static uint64_t floor_of(const vm *m) { return m->nm ? m->marks[m->nm - 1] : 0; }

txlm_pk_value *txlm_pkvm_pop(vm *m, const char *op)
{
    if (m->sp <= floor_of(m)) {
        char what[64];
        snprintf(what, sizeof what, "%s on an empty stack", op);
        txlm_pkvm_fail(m, TXLM_ERR_FORMAT, what);
        return NULL;
    }
    return m->stack[--m->sp];
}

txlm_pk_value *txlm_pkvm_top(vm *m, const char *op)
{
    txlm_pk_value *v = txlm_pkvm_pop(m, op);
    if (v) m->sp++;
    return v;
}

static int pop_mark(vm *m, const char *op, uint64_t *mark)
{
    if (!m->nm) {
        char what[64];
        snprintf(what, sizeof what, "%s without a MARK", op);
        return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, what);
    }
    *mark = m->marks[--m->nm];
    return 0;
}

static int need(vm *m, uint64_t n)
{
    if (n > m->len - m->pos)
        return txlm_fail(m->err, TXLM_ERR_FORMAT, "%s: pickle opcode at byte %" PRIu64 " needs %" PRIu64
                                                  " bytes, only %" PRIu64 " left (truncated)",
                         m->where, m->at, n, m->len - m->pos);
    return 0;
}

static uint64_t rd_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* An opcode's little-endian argument of n bytes. */
static int arg(vm *m, int n, uint64_t *a)
{
    int rc = need(m, (uint64_t)n);
    if (rc) return rc;
    *a = rd_le(m->data + m->pos, n);
    m->pos += (uint64_t)n;
    return 0;
}

int txlm_pkvm_append(vm *m, txlm_pk_value *seq, txlm_pk_value *v)
{
    if (seq->n == UINT32_MAX) return txlm_pkvm_fail(m, TXLM_ERR_LIMIT, "container too large");
    uint64_t cap = seq->u.seq.cap;
    if (grow((void **)&seq->u.seq.items, &cap, (uint64_t)seq->n + 1, sizeof *seq->u.seq.items))
        return txlm_fail(m->err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory reading the pickle", m->where);
    seq->u.seq.cap = (uint32_t)(cap > UINT32_MAX ? UINT32_MAX : cap);
    seq->u.seq.items[seq->n++] = v;
    return 0;
}

/* stack[from .. sp) appended to container c and dropped from the stack; a
 * dict takes them as key, value pairs, so their number must be even. */
static int move_items(vm *m, txlm_pk_value *c, uint64_t from, const char *op)
{
    if (c->kind == TXLM_PK_DICT && (m->sp - from) % 2) {
        char what[96];
        snprintf(what, sizeof what, "%s with an odd number of keys and values", op);
        return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, what);
    }
    for (uint64_t i = from; i < m->sp; i++) {
        int rc = txlm_pkvm_append(m, c, m->stack[i]);
        if (rc) return rc;
    }
    m->sp = from;
    return 0;
}

/* A new container holding stack[from .. sp), which is then dropped. */
static int collect(vm *m, uint32_t kind, uint64_t from)
{
    txlm_pk_value *c = txlm_pkvm_new(m, kind);
    if (!c) return m->err->code;
    int rc = move_items(m, c, from, "DICT");
    return rc ? rc : txlm_pkvm_push(m, c);
}

static int add_items(vm *m, txlm_pk_value *target, uint32_t kind, uint64_t from, const char *op)
{
    if (target->kind != kind) {
        char what[96];
        snprintf(what, sizeof what, "%s on a %s", op, txlm_pk_kind_name(target->kind));
        return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, what);
    }
    return move_items(m, target, from, op);
}

static int push_int(vm *m, int64_t i)
{
    txlm_pk_value *v = txlm_pkvm_new(m, TXLM_PK_INT);
    if (v) v->u.i = i;
    return txlm_pkvm_push(m, v);
}

static int push_str(vm *m, uint64_t len_bytes, int len_signed)
{
    int rc = need(m, (uint64_t)len_bytes);
    if (rc) return rc;
    uint64_t n = rd_le(m->data + m->pos, (int)len_bytes);
    if (len_signed && (n & 0x80000000u)) return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "string with a negative length");
    m->pos += len_bytes;
    if ((rc = need(m, n))) return rc;
    if (n > UINT32_MAX) return txlm_pkvm_fail(m, TXLM_ERR_LIMIT, "string longer than 4 GiB");
    txlm_pk_value *v = txlm_pkvm_new(m, TXLM_PK_STR);
    if (v) {
        v->u.str.s = (const char *)m->data + m->pos;
        v->u.str.len = (uint32_t)n;
    }
    m->pos += n;
    return txlm_pkvm_push(m, v);
}

/* LONG1/LONG4: little-endian two's complement of n bytes. */
static int push_long(vm *m, uint64_t n)
{
    int rc = need(m, n);
    if (rc) return rc;
    if (n > 8) return txlm_pkvm_fail(m, TXLM_ERR_UNSUPPORTED, "integer wider than 64 bits");
    uint64_t u = n ? rd_le(m->data + m->pos, (int)n) : 0;
    if (n && n < 8 && (m->data[m->pos + n - 1] & 0x80)) u |= ~0ull << (8 * n);
    m->pos += n;
    return push_int(m, (int64_t)u);
}

static int memo_put(vm *m, uint64_t idx)
{
    /* A pickler numbers memo entries consecutively, so an index beyond the
     * opcodes seen so far is corrupt (and would size a huge table). */
    if (idx > m->n_ops) return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "memo index larger than the pickle");
    txlm_pk_value *v = txlm_pkvm_top(m, "PUT");
    if (!v) return m->err->code;
    uint64_t old = m->memo_cap;
    if (grow((void **)&m->memo, &m->memo_cap, idx + 1, sizeof *m->memo))
        return txlm_fail(m->err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory reading the pickle", m->where);
    if (m->memo_cap > old) memset(m->memo + old, 0, (m->memo_cap - old) * sizeof *m->memo);
    if (!m->memo[idx]) m->memo_count++;
    m->memo[idx] = v;
    return 0;
}

static int memo_get(vm *m, uint64_t idx)
{
    if (idx >= m->memo_cap || !m->memo[idx]) {
        char what[64];
        snprintf(what, sizeof what, "GET of memo entry %" PRIu64 " that was never stored", idx);
        return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, what);
    }
    return txlm_pkvm_push(m, m->memo[idx]);
}

static int read_line(vm *m, const char **s, size_t *n)
{
    uint64_t left = m->len - m->pos;
    if (left > GLOBAL_LINE_CAP) left = GLOBAL_LINE_CAP;
    const uint8_t *nl = memchr(m->data + m->pos, '\n', left);
    if (!nl) return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "GLOBAL name without its line feed");
    *s = (const char *)m->data + m->pos;
    *n = (size_t)(nl - (m->data + m->pos));
    m->pos += *n + 1;
    return 0;
}

static int op_global(vm *m)
{
    const char *mod = NULL, *name = NULL;
    size_t ml = 0, nl = 0;
    int rc = read_line(m, &mod, &ml);
    if (!rc) rc = read_line(m, &name, &nl);
    return rc ? rc : txlm_pkvm_global(m, mod, ml, name, nl);
}

static int op_stack_global(vm *m)
{
    txlm_pk_value *name = txlm_pkvm_pop(m, "STACK_GLOBAL"), *mod = name ? txlm_pkvm_pop(m, "STACK_GLOBAL") : NULL;
    if (!mod) return m->err->code;
    if (mod->kind != TXLM_PK_STR || name->kind != TXLM_PK_STR)
        return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "STACK_GLOBAL of something other than two strings");
    return txlm_pkvm_global(m, mod->u.str.s, mod->u.str.len, name->u.str.s, name->u.str.len);
}

static int tuple_n(vm *m, uint64_t n)
{
    if (m->sp - floor_of(m) < n) return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "TUPLE1/2/3 on a short stack");
    return collect(m, TXLM_PK_TUPLE, m->sp - n);
}

static int step(vm *m, uint8_t op, int *stop)
{
    uint64_t mark = 0, a = 0;
    int rc;
    txlm_pk_value *v, *k, *t;
    switch (op) {
    case 0x80: /* PROTO */
        if ((rc = arg(m, 1, &a))) return rc;
        if (a < 2 || a > 5) {
            char what[64];
            snprintf(what, sizeof what, "protocol %u (only 2 to 5 are read)", (unsigned)a);
            return txlm_pkvm_fail(m, TXLM_ERR_UNSUPPORTED, what);
        }
        return 0;
    case 0x95: /* FRAME: only a read-ahead hint */
        if ((rc = arg(m, 8, &a))) return rc;
        if (a > m->len - m->pos) return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "FRAME longer than the data");
        return 0;
    case '.':
        if (m->sp != 1 || m->nm) return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "STOP with other than one value on the stack");
        *stop = 1;
        return 0;
    case '(':
        if (grow((void **)&m->marks, &m->mcap, m->nm + 1, sizeof *m->marks))
            return txlm_fail(m->err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory reading the pickle", m->where);
        m->marks[m->nm++] = m->sp;
        return 0;
    case '0': return txlm_pkvm_pop(m, "POP") ? 0 : m->err->code;
    case '1':
        if ((rc = pop_mark(m, "POP_MARK", &mark))) return rc;
        m->sp = mark;
        return 0;
    case '2': return (v = txlm_pkvm_top(m, "DUP")) ? txlm_pkvm_push(m, v) : m->err->code;
    case 'N': return txlm_pkvm_push(m, txlm_pkvm_new(m, TXLM_PK_NONE));
    case 0x88:
    case 0x89:
        if ((v = txlm_pkvm_new(m, TXLM_PK_BOOL))) v->u.i = op == 0x88;
        return txlm_pkvm_push(m, v);
    case 'J': return (rc = arg(m, 4, &a)) ? rc : push_int(m, (int32_t)(uint32_t)a);
    case 'K': return (rc = arg(m, 1, &a)) ? rc : push_int(m, (int64_t)a);
    case 'M': return (rc = arg(m, 2, &a)) ? rc : push_int(m, (int64_t)a);
    case 0x8a: return (rc = arg(m, 1, &a)) ? rc : push_long(m, a);
    case 0x8b:
        if ((rc = arg(m, 4, &a))) return rc;
        if (a & 0x80000000u) return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "LONG4 with a negative length");
        return push_long(m, a);
    case 'G': {
        if ((rc = need(m, 8))) return rc;
        uint64_t u = 0;
        for (int i = 0; i < 8; i++) u = u << 8 | m->data[m->pos + i]; /* big-endian */
        m->pos += 8;
        if ((v = txlm_pkvm_new(m, TXLM_PK_FLOAT))) memcpy(&v->u.f, &u, 8);
        return txlm_pkvm_push(m, v);
    }
    case 'X': return push_str(m, 4, 0);
    case 0x8c: return push_str(m, 1, 0);
    case 0x8d: return push_str(m, 8, 0);
    case 'T': return push_str(m, 4, 1);
    case 'U': return push_str(m, 1, 0);
    case ')': return txlm_pkvm_push(m, txlm_pkvm_new(m, TXLM_PK_TUPLE));
    case ']': return txlm_pkvm_push(m, txlm_pkvm_new(m, TXLM_PK_LIST));
    case '}': return txlm_pkvm_push(m, txlm_pkvm_new(m, TXLM_PK_DICT));
    case 0x85: return tuple_n(m, 1);
    case 0x86: return tuple_n(m, 2);
    case 0x87: return tuple_n(m, 3);
    case 't':
    case 'l':
    case 'd':
        if ((rc = pop_mark(m, op_name(op), &mark))) return rc;
        return collect(m, op == 't' ? TXLM_PK_TUPLE : op == 'l' ? TXLM_PK_LIST : TXLM_PK_DICT, mark);
    case 'a':
        if (!(v = txlm_pkvm_pop(m, "APPEND")) || !(t = txlm_pkvm_top(m, "APPEND"))) return m->err->code;
        if (t->kind != TXLM_PK_LIST) return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "APPEND to something other than a list");
        return txlm_pkvm_append(m, t, v);
    case 's':
        if (!(v = txlm_pkvm_pop(m, "SETITEM")) || !(k = txlm_pkvm_pop(m, "SETITEM")) || !(t = txlm_pkvm_top(m, "SETITEM"))) return m->err->code;
        if (t->kind != TXLM_PK_DICT) return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, "SETITEM on something other than a dict");
        if ((rc = txlm_pkvm_append(m, t, k))) return rc;
        return txlm_pkvm_append(m, t, v);
    case 'e':
    case 'u':
        if ((rc = pop_mark(m, op_name(op), &mark))) return rc;
        if (mark == floor_of(m) || mark == 0) return txlm_pkvm_fail(m, TXLM_ERR_FORMAT, op == 'e' ? "APPENDS without a list" : "SETITEMS without a dict");
        return add_items(m, m->stack[mark - 1], op == 'e' ? TXLM_PK_LIST : TXLM_PK_DICT, mark, op_name(op));
    case 'q': return (rc = arg(m, 1, &a)) ? rc : memo_put(m, a);
    case 'r': return (rc = arg(m, 4, &a)) ? rc : memo_put(m, a);
    case 0x94: return memo_put(m, m->memo_count); /* numbered as the unpickler counts: len(memo) */
    case 'h': return (rc = arg(m, 1, &a)) ? rc : memo_get(m, a);
    case 'j': return (rc = arg(m, 4, &a)) ? rc : memo_get(m, a);
    case 'c': return op_global(m);
    case 0x93: return op_stack_global(m);
    case 'R': return txlm_pkvm_reduce(m);
    case 'b': return txlm_pkvm_build(m);
    case 'Q': return txlm_pkvm_persid(m);
    case 0x81: return txlm_pkvm_newobj(m);
    default: {
        char what[96];
        if (op >= 0x20 && op < 0x7f)
            snprintf(what, sizeof what, "opcode %s ('%c', 0x%02x) is outside the supported subset", op_name(op), op, op);
        else
            snprintf(what, sizeof what, "opcode %s (0x%02x) is outside the supported subset", op_name(op), op);
        return txlm_pkvm_fail(m, TXLM_ERR_UNSUPPORTED, what);
    }
    }
}

void txlm_pickle_free(txlm_pickle *p)
{
    if (!p) return;
    for (chunk *c = p->chunks, *next; c; c = next) {
        next = c->next;
        for (uint32_t i = 0; i < c->used; i++) {
            uint32_t k = c->v[i].kind;
            if (k == TXLM_PK_TUPLE || k == TXLM_PK_LIST || k == TXLM_PK_DICT) free(c->v[i].u.seq.items);
        }
        free(c);
    }
    free(p);
}

int txlm_pickle_parse(const char *where, const uint8_t *data, uint64_t len, uint64_t base, txlm_pickle **out,
                      const txlm_pk_value **root, uint64_t *used, txlm_err *err)
{
    *out = NULL;
    *root = NULL;
    vm m;
    memset(&m, 0, sizeof m);
    m.where = where;
    m.data = data;
    m.len = len;
    m.base = base;
    m.err = err;
    m.pk = calloc(1, sizeof *m.pk);
    if (!m.pk) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
    int rc = 0, stop = 0;
    if (len == 0 || data[0] != 0x80)
        rc = txlm_fail(err, TXLM_ERR_FORMAT, "%s: no pickle at byte %" PRIu64 " (expected a PROTO opcode)", where, base);
    while (!rc && !stop) {
        m.at = base + m.pos;
        if (m.pos >= len) {
            rc = txlm_fail(err, TXLM_ERR_FORMAT, "%s: pickle ends at byte %" PRIu64 " without STOP (truncated)", where,
                           base + len);
            break;
        }
        m.n_ops++;
        rc = step(&m, data[m.pos++], &stop);
    }
    if (!rc) {
        *root = m.stack[0];
        *out = m.pk;
        if (used) *used = m.pos;
    } else {
        txlm_pickle_free(m.pk);
    }
    free(m.stack);
    free(m.marks);
    free(m.memo);
    return rc;
}

int txlm_pickle_each(const txlm_pickle *p, uint32_t kind, int (*fn)(void *user, const txlm_pk_value *v), void *user)
{
    for (const chunk *c = p->chunks; c; c = c->next)
        for (uint32_t i = 0; i < c->used; i++)
            if (c->v[i].kind == kind) {
                int rc = fn(user, &c->v[i]);
                if (rc) return rc;
            }
    return 0;
}

int txlm_pk_str_is(const txlm_pk_value *v, const char *s)
{
    size_t n = strlen(s);
    return v && v->kind == TXLM_PK_STR && v->u.str.len == n && memcmp(v->u.str.s, s, n) == 0;
}

const txlm_pk_value *txlm_pk_dict_get(const txlm_pk_value *dict, const char *key)
{
    if (!dict || dict->kind != TXLM_PK_DICT) return NULL;
    const txlm_pk_value *found = NULL;
    /* The last assignment wins, as in Python. */
    for (uint32_t i = 0; i + 1 < dict->n; i += 2)
        if (txlm_pk_str_is(dict->u.seq.items[i], key)) found = dict->u.seq.items[i + 1];
    return found;
}
