/* Open addressing with linear probing over a power-of-two table kept at
 * most 4/5 full; each slot keeps 32 bits of the string's XXH3 hash, so a
 * probe compares bytes only when the tags agree. */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "sym_index.h"

int txlm_sym_index_init(txlm_sym_index *x, uint32_t capacity, txlm_sym_key_fn key, const void *ctx)
{
    uint64_t slots = 8;
    while (slots < (uint64_t)capacity + capacity / 4 + 1) slots *= 2;
    x->slot = calloc(slots, sizeof *x->slot);
    x->mask = slots - 1;
    x->key = key;
    x->ctx = ctx;
    return x->slot ? 0 : -1;
}

/* The slot holding s, or the empty slot where it would go. */
static uint64_t probe(const txlm_sym_index *x, const char *s, size_t len, uint64_t h)
{
    uint64_t tag = h >> 32;
    for (uint64_t i = h & x->mask;; i = (i + 1) & x->mask) {
        uint64_t e = x->slot[i];
        if (!e) return i;
        if (e >> 32 != tag) continue;
        size_t kl;
        const char *k = x->key(x->ctx, (uint32_t)(e & 0xFFFFFFFFu) - 1, &kl);
        if (kl == len && !memcmp(k, s, len)) return i;
    }
}

int64_t txlm_sym_index_add(txlm_sym_index *x, uint32_t id)
{
    size_t len;
    const char *s = x->key(x->ctx, id, &len);
    uint64_t h = XXH3_64bits(s, len), i = probe(x, s, len, h);
    if (x->slot[i]) return (int64_t)(x->slot[i] & 0xFFFFFFFFu) - 1;
    x->slot[i] = (h >> 32) << 32 | ((uint64_t)id + 1);
    return -1;
}

int64_t txlm_sym_index_find(const txlm_sym_index *x, const char *s, size_t len)
{
    uint64_t e = x->slot[probe(x, s, len, XXH3_64bits(s, len))];
    return e ? (int64_t)(e & 0xFFFFFFFFu) - 1 : -1;
}

void txlm_sym_index_free(txlm_sym_index *x)
{
    free(x->slot);
    x->slot = NULL;
}
