/* The model's tokenizer: text <-> token ids, from the vocabulary stored in
 * the .txlm file (format/container/vocab.h says which kind and which flags). */
#ifndef TXLM_TOKENIZER_H
#define TXLM_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "errmsg.h"
#include "vocab.h"

typedef struct txlm_tokenizer txlm_tokenizer;

/* Builds the lookup tables; v must outlive the tokenizer. */
int txlm_tok_create(const txlm_vocab *v, txlm_tokenizer **out, txlm_err *err);
void txlm_tok_free(txlm_tokenizer *t);
/* text[0..len) -> *ids (malloc'd, *n entries). Word models: <eos> after each line. */
int txlm_tok_encode(txlm_tokenizer *t, const char *text, size_t len, int32_t **ids, size_t *n, txlm_err *err);
/* ids -> NUL-terminated malloc'd text. */
int txlm_tok_decode(txlm_tokenizer *t, const int32_t *ids, size_t n, char **text, txlm_err *err);
const txlm_vocab *txlm_tok_vocab(const txlm_tokenizer *t);
/* The id of symbol s[0..len) exactly as stored (no lower-casing), or -1. */
int32_t txlm_tok_find(const txlm_tokenizer *t, const char *s, size_t len);
/* Host bytes of the tokenizer's tables. */
size_t txlm_tok_host_bytes(const txlm_tokenizer *t);
/* Character models: the byte id (in range) stands for ('\n' for <eos>), or
 * -1 when its symbol is written as it is. */
int txlm_tok_char_byte(const txlm_tokenizer *t, int32_t id);

#endif
