/* Checks and look-ups shared by the vocabulary readers. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <txlm_status.h>

#include "sym_index.h"
#include "vocab_check.h"

const txlm_vocab_units txlm_vocab_lines = {"line", "lines", 1, ""}, txlm_vocab_ids = {"id", "ids", 0, ""},
                       txlm_vocab_idx2sym = {"id", "ids", 0, " in idx2sym"};

static const char *vocab_key(const void *ctx, uint32_t id, size_t *len)
{
    uint32_t l;
    const char *s = txlm_vocab_sym(ctx, id, &l);
    *len = l;
    return s;
}

int txlm_vocab_find_duplicate(const txlm_vocab *v, uint32_t *first, uint32_t *second)
{
    txlm_sym_index x;
    if (txlm_sym_index_init(&x, v->n, vocab_key, v)) return -1;
    int found = 0;
    for (uint32_t i = 0; i < v->n && !found; i++) {
        int64_t at = txlm_sym_index_add(&x, i);
        if (at >= 0) {
            *first = (uint32_t)at;
            *second = i;
            found = 1;
        }
    }
    txlm_sym_index_free(&x);
    return found;
}

int txlm_vocab_check_symbols(const txlm_vocab *v, const char *where, const txlm_vocab_units *u, int code, txlm_err *err)
{
    for (uint32_t i = 0; i < v->n; i++) {
        uint32_t len;
        const char *s = txlm_vocab_sym(v, i, &len), *nul = memchr(s, 0, len);
        if (nul && !(v->kind == TXLM_TOK_CHAR_BYTE && len == 1))
            return txlm_fail(err, code, "%s: %s %" PRIu32 "%s holds a NUL byte (byte %zu of the symbol \"%.*s\")", where, u->one,
                             i + u->first, u->in, (size_t)(nul - s), (int)(nul - s > 64 ? 64 : nul - s), s);
    }
    uint32_t a = 0, b = 0;
    int dup = txlm_vocab_find_duplicate(v, &a, &b);
    if (dup < 0) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory checking %" PRIu32 " symbols", where, v->n);
    if (!dup) return 0;
    uint32_t len;
    const char *s = txlm_vocab_sym(v, a, &len);
    return txlm_fail(err, code, "%s: symbol '%.*s' appears twice%s (%s %" PRIu32 " and %" PRIu32 ")", where,
                     (int)(len > 64 ? 64 : len), s, u->in, u->many, a + u->first, b + u->first);
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
