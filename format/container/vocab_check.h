/* The symbol rules every vocabulary source and the .txlm reader apply. */
#ifndef TXLM_VOCAB_CHECK_H
#define TXLM_VOCAB_CHECK_H

#include "errmsg.h"
#include "vocab.h"

/* How a source names its entries in messages: "line"/"lines" counted
 * from 1 (vocab.txt), "id"/"ids" from 0 (model files; pickled tokenizer
 * vocabularies, "in idx2sym"). */
typedef struct txlm_vocab_units {
    const char *one, *many;
    uint32_t first;
    const char *in; /* the list they are in, or "" */
} txlm_vocab_units;
extern const txlm_vocab_units txlm_vocab_lines, txlm_vocab_ids, txlm_vocab_idx2sym;

/* No NUL byte in a symbol (but the one-byte symbol of byte 0 in a byte
 * vocabulary) and no symbol twice: either lets one entry hide another
 * from the tokenizer, which looks symbols up as strings and keeps the
 * first of equal ones. A failure names the entries; `code` is its status
 * (out of memory aside). */
int txlm_vocab_check_symbols(const txlm_vocab *v, const char *where, const txlm_vocab_units *u, int code, txlm_err *err);

/* 1 and the two ids (first < second) when a symbol appears twice, 0 when
 * all are distinct, -1 when out of memory. */
int txlm_vocab_find_duplicate(const txlm_vocab *v, uint32_t *first, uint32_t *second);
/* The id of symbol s, or -1. */
int32_t txlm_vocab_find_sym(const txlm_vocab *v, const char *s);

#endif
