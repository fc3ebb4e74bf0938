/* Checks and look-ups shared by the vocabulary readers. */
#include <stdlib.h>
#include <string.h>

#include "pack.h"

typedef struct sym_ref {
    const char *s;
    uint32_t len, id;
} sym_ref;

static int cmp_sym(const void *a, const void *b)
{
    const sym_ref *x = a, *y = b;
    uint32_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->s, y->s, n);
    if (c) return c;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int txlm_vocab_find_duplicate(const txlm_vocab *v, uint32_t *first, uint32_t *second)
{
    sym_ref *r = malloc((size_t)(v->n ? v->n : 1) * sizeof *r);
    if (!r) return -1;
    for (uint32_t i = 0; i < v->n; i++) {
        r[i].s = txlm_vocab_sym(v, i, &r[i].len);
        r[i].id = i;
    }
    qsort(r, v->n, sizeof *r, cmp_sym);
    int found = 0;
    for (uint32_t i = 1; i < v->n && !found; i++)
        if (r[i].len == r[i - 1].len && memcmp(r[i].s, r[i - 1].s, r[i].len) == 0) {
            *first = r[i - 1].id;
            *second = r[i].id;
            found = 1;
        }
    free(r);
    return found;
}

int32_t txlm_vocab_find_sym(const txlm_vocab *v, const char *s)
{
    size_t n = strlen(s);
    for (uint32_t i = 0; i < v->n; i++) {
        uint32_t len;
        const char *p = txlm_vocab_sym(v, i, &len);
        if (len == n && memcmp(p, s, n) == 0) return (int32_t)i;
    }
    return -1;
}
