/* A pickle reader for the subset that torch.save files and tokenizer
 * vocabularies use. It builds plain values and never calls or imports
 * anything: the few globals it knows (OrderedDict, Counter, torch storages,
 * _rebuild_tensor_v2 and _rebuild_parameter) are interpreted as data; any
 * other global becomes an inert record of its name, and what the pickle
 * builds from it (REDUCE, NEWOBJ, BUILD) a record of the class name, the
 * arguments and the state. Opcodes outside the subset are refused with
 * their byte offset. */
#ifndef TXLM_PICKLE_H
#define TXLM_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "errmsg.h"

typedef enum txlm_pk_kind {
    TXLM_PK_NONE,
    TXLM_PK_BOOL,
    TXLM_PK_INT,
    TXLM_PK_FLOAT,
    TXLM_PK_STR,     /* str, or a Python 2 byte string: bytes as stored */
    TXLM_PK_TUPLE,
    TXLM_PK_LIST,
    TXLM_PK_DICT,    /* dict, OrderedDict or Counter: items[2k] -> items[2k+1], in order */
    TXLM_PK_GLOBAL,  /* one of txlm_pk_global, before it is applied */
    TXLM_PK_STORAGE, /* a persistent storage reference */
    TXLM_PK_TENSOR,  /* _rebuild_tensor_v2(...) or _rebuild_parameter(...) */
    TXLM_PK_CLASS,   /* a global outside the allow-list: its name, never imported */
    TXLM_PK_OBJECT,  /* an inert record: a CLASS applied to arguments, and the state BUILD gave it */
} txlm_pk_kind;

typedef enum txlm_pk_global {
    TXLM_PKG_ORDERED_DICT,
    TXLM_PKG_COUNTER,
    TXLM_PKG_REBUILD_TENSOR_V2,
    TXLM_PKG_REBUILD_PARAMETER,
    /* storage types: every id from here on */
    TXLM_PKG_FLOAT_STORAGE,
    TXLM_PKG_HALF_STORAGE,
    TXLM_PKG_BFLOAT16_STORAGE,
    /* storages of other element types: located and skipped, never read
     * (optimizer steps, random-number states, a corpus' token ids) */
    TXLM_PKG_DOUBLE_STORAGE,
    TXLM_PKG_LONG_STORAGE,
    TXLM_PKG_INT_STORAGE,
    TXLM_PKG_SHORT_STORAGE,
    TXLM_PKG_CHAR_STORAGE,
    TXLM_PKG_BYTE_STORAGE,
    TXLM_PKG_BOOL_STORAGE,
} txlm_pk_global;

/* The dtype of a storage whose elements are not floats txlm reads. */
#define TXLM_PK_DT_OTHER 0xffffffffu

#define TXLM_PK_MAX_RANK 8

typedef struct txlm_pk_value txlm_pk_value;

typedef struct txlm_pk_storage {
    uint32_t dtype;        /* TXLM_DT_F32, _F16, _BF16 or TXLM_PK_DT_OTHER */
    const char *type_name; /* "FloatStorage", ... (static) */
    uint32_t elem_size;
    const char *key;       /* the storage key (points into the pickle bytes) */
    uint32_t key_len;
    uint64_t numel;        /* elements of the whole storage */
    /* Legacy files may reference a view of another storage: elements
     * [view_offset, view_offset + view_numel) of the storage `key`. */
    int is_view;
    const char *view_key;
    uint32_t view_key_len;
    uint64_t view_offset, view_numel;
} txlm_pk_storage;

typedef struct txlm_pk_tensor {
    const txlm_pk_value *storage; /* a TXLM_PK_STORAGE */
    uint64_t offset;              /* in elements */
    uint32_t rank;
    uint64_t dims[TXLM_PK_MAX_RANK];
    uint64_t strides[TXLM_PK_MAX_RANK];
} txlm_pk_tensor;

struct txlm_pk_value {
    uint32_t kind;
    uint32_t n;      /* TUPLE/LIST: items; DICT: 2 x pairs */
    uint64_t at;     /* byte offset (in the whole file) of the opcode that made it */
    union {
        int64_t i;   /* BOOL, INT */
        double f;
        struct {
            const char *s;
            uint32_t len;
        } str;
        struct {
            txlm_pk_value **items;
            uint32_t cap;
        } seq;
        uint32_t global;
        txlm_pk_storage storage;
        txlm_pk_tensor tensor;
        struct {
            const char *module, *name; /* point into the pickle bytes */
            uint32_t module_len, name_len;
        } cls;
        struct {
            const txlm_pk_value *cls;   /* a TXLM_PK_CLASS */
            const txlm_pk_value *args;  /* a tuple */
            const txlm_pk_value *state; /* what BUILD gave it, or NULL */
        } obj;
    } u;
};

typedef struct txlm_pickle txlm_pickle;

/* Parses one pickle at data[0 .. len) up to its STOP opcode. `base` is the
 * file offset of data[0] (for messages); `where` prefixes messages. *used
 * receives the bytes consumed. Values (and the strings they point to in
 * data) live until txlm_pickle_free. */
int txlm_pickle_parse(const char *where, const uint8_t *data, uint64_t len, uint64_t base, txlm_pickle **out,
                      const txlm_pk_value **root, uint64_t *used, txlm_err *err);
void txlm_pickle_free(txlm_pickle *p);
/* Calls fn on every value of `kind` the pickle made, reachable or not
 * (legacy files lay out every storage the pickle names); stops at the
 * first non-zero return and passes it on. */
int txlm_pickle_each(const txlm_pickle *p, uint32_t kind, int (*fn)(void *user, const txlm_pk_value *v), void *user);

/* Helpers for walking values. NULL when absent or of another kind. */
const txlm_pk_value *txlm_pk_dict_get(const txlm_pk_value *dict, const char *key);
int txlm_pk_str_is(const txlm_pk_value *v, const char *s);
const char *txlm_pk_kind_name(uint32_t kind);
/* 1 if v is a CLASS of that module and name, or an OBJECT record of one. */
int txlm_pk_class_is(const txlm_pk_value *v, const char *module, const char *name);
/* "module.Name" of a CLASS or OBJECT (printable, truncated to cap), else the kind's name. */
const char *txlm_pk_describe(const txlm_pk_value *v, char *buf, size_t cap);
/* An object record's attribute: its BUILD state's entry `name` (the state
 * is the instance __dict__, or a (dict, slots) pair). NULL when absent. */
const txlm_pk_value *txlm_pk_attr(const txlm_pk_value *obj, const char *name);
/* An object record's attribute dict (its BUILD state, or the dict of a
 * (dict, slots) pair); NULL when it has none. */
const txlm_pk_value *txlm_pk_state(const txlm_pk_value *obj);
/* The attribute dict of a training code's vocabulary: a Vocab record, or
 * the vocab attribute of a record holding one (the authors' cached
 * Corpus, cache.pt); v itself when it is a plain dict; else NULL. */
const txlm_pk_value *txlm_pk_vocab_attrs(const txlm_pk_value *v);

#endif
