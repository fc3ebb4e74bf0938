/* A hash index of byte strings to ids, filled once and then only read:
 * a lookup writes nothing, so any number of threads may look up at once
 * (stb_ds maps write each lookup's result into the shared table). The
 * strings stay where they are; the index asks for them by id. */
#ifndef TXLM_SYM_INDEX_H
#define TXLM_SYM_INDEX_H

#include <stddef.h>
#include <stdint.h>

/* The bytes of entry `id` (not NUL-terminated). */
typedef const char *(*txlm_sym_key_fn)(const void *ctx, uint32_t id, size_t *len);

typedef struct txlm_sym_index {
    uint64_t *slot; /* high 32 bits: hash tag; low 32 bits: id + 1 (0: empty) */
    uint64_t mask;  /* slots - 1 */
    txlm_sym_key_fn key;
    const void *ctx;
} txlm_sym_index;

/* Room for `capacity` entries; -1 when out of memory. */
int txlm_sym_index_init(txlm_sym_index *x, uint32_t capacity, txlm_sym_key_fn key, const void *ctx);
/* Adds entry id (at most `capacity` adds). Returns -1 when added, or the
 * id of the entry already holding the same bytes (then id is not added). */
int64_t txlm_sym_index_add(txlm_sym_index *x, uint32_t id);
/* The id holding s[0..len), or -1. Reads only. */
int64_t txlm_sym_index_find(const txlm_sym_index *x, const char *s, size_t len);
void txlm_sym_index_free(txlm_sym_index *x);

#endif
