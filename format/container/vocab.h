/* The vocabulary as plain data: symbol i is blob[offsets[i] .. offsets[i+1]). */
#ifndef TXLM_VOCAB_H
#define TXLM_VOCAB_H

#include <stdint.h>

typedef enum txlm_tokenizer_kind {
    TXLM_TOK_WORD = 0,       /* whitespace-separated words, <eos> at line ends */
    TXLM_TOK_CHAR_BYTE = 1,  /* enwik8 style: one symbol per byte */
    TXLM_TOK_CHAR_TEXT8 = 2, /* text8 style: one symbol per character, '_' for space */
} txlm_tokenizer_kind;

enum {
    TXLM_VOCAB_LOWER_CASE = 1u << 0,  /* lower-case input before lookup */
    TXLM_VOCAB_WT103_NORM = 1u << 1,  /* Moses-style wt103 normalisation of raw text */
    TXLM_VOCAB_LINE_START_EOS = 1u << 2, /* word mode: <eos> (lm1b's <S>) begins every line as well as ending it */
};

typedef struct txlm_vocab {
    uint32_t n;              /* number of symbols (== n_token) */
    uint32_t kind;           /* txlm_tokenizer_kind */
    uint32_t flags;          /* TXLM_VOCAB_* */
    int32_t eos_id;          /* -1 when absent */
    int32_t unk_id;          /* -1 when absent */
    const uint32_t *offsets; /* n + 1 entries, ascending, offsets[n] == blob_size */
    const char *blob;        /* UTF-8 symbols, not NUL-separated */
    uint32_t blob_size;
} txlm_vocab;

/* Symbol i as pointer + length. */
static inline const char *txlm_vocab_sym(const txlm_vocab *v, uint32_t i, uint32_t *len)
{
    *len = v->offsets[i + 1] - v->offsets[i];
    return v->blob + v->offsets[i];
}

#endif
