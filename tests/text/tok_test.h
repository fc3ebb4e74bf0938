/* What the host-only tokenizer tests share: a failure count with its
 * CHECK, and vocabularies built in memory from a list of symbols. */
#ifndef TXLM_TEST_TOK_TEST_H
#define TXLM_TEST_TOK_TEST_H

#include <stdio.h>
#include <string.h>

#include "vocab.h"

static int failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            failures++;                                                              \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

typedef struct vocab_store {
    txlm_vocab v;
    uint32_t off[400];
    char blob[4096];
} vocab_store;

/* n symbols (<eos> and <unk> found by name) of the given kind and flags. */
static inline void make_vocab(vocab_store *s, const char *const *sym, uint32_t n, uint32_t kind, uint32_t flags)
{
    memset(s, 0, sizeof *s);
    uint32_t at = 0;
    int32_t eos = -1, unk = -1;
    for (uint32_t i = 0; i < n; i++) {
        size_t l = strlen(sym[i]);
        s->off[i] = at;
        memcpy(s->blob + at, sym[i], l);
        at += (uint32_t)l;
        if (!strcmp(sym[i], "<eos>")) eos = (int32_t)i;
        if (!strcmp(sym[i], "<unk>")) unk = (int32_t)i;
    }
    s->off[n] = at;
    s->v = (txlm_vocab){.n = n, .kind = kind, .flags = flags, .eos_id = eos, .unk_id = unk,
                        .offsets = s->off, .blob = s->blob, .blob_size = at};
}

#endif
