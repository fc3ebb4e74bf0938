/* The pickle reader's machine, shared by the stack machine (pickle.c) and
 * the meaning it gives to globals, persistent ids, REDUCE, NEWOBJ and
 * BUILD (pickle_object.c). Internal to the two. */
#ifndef TXLM_PICKLE_VM_H
#define TXLM_PICKLE_VM_H

#include <stddef.h>
#include <stdint.h>

#include "pickle.h"

typedef struct txlm_pk_vm {
    const char *where;
    const uint8_t *data;
    uint64_t len, pos, base;
    uint64_t at; /* file offset of the current opcode */
    txlm_pickle *pk;
    txlm_pk_value **stack;
    uint64_t sp, scap;
    uint64_t *marks;
    uint64_t nm, mcap;
    txlm_pk_value **memo;
    uint64_t memo_cap, memo_count;
    uint64_t n_ops;
    txlm_err *err;
} txlm_pk_vm;

/* A one-line failure "<where>: pickle <what> at byte <at>". */
int txlm_pkvm_fail(txlm_pk_vm *m, int code, const char *what);
txlm_pk_value *txlm_pkvm_new(txlm_pk_vm *m, uint32_t kind);
int txlm_pkvm_push(txlm_pk_vm *m, txlm_pk_value *v);
/* NULL (with the error set) on an empty stack or at a mark. */
txlm_pk_value *txlm_pkvm_pop(txlm_pk_vm *m, const char *op);
txlm_pk_value *txlm_pkvm_top(txlm_pk_vm *m, const char *op);
int txlm_pkvm_append(txlm_pk_vm *m, txlm_pk_value *seq, txlm_pk_value *v);

/* pickle_object.c: opcodes whose meaning depends on what they name. */
int txlm_pkvm_global(txlm_pk_vm *m, const char *mod, size_t mod_len, const char *name, size_t name_len);
int txlm_pkvm_persid(txlm_pk_vm *m);
int txlm_pkvm_reduce(txlm_pk_vm *m);
int txlm_pkvm_newobj(txlm_pk_vm *m);
int txlm_pkvm_build(txlm_pk_vm *m);

#endif
