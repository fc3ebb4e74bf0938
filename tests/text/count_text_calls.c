/* Loaded into txlm with LD_PRELOAD by test_generate_scaling: counts the
 * text work the command asks of the library (bytes tokenized, token ids
 * detokenized, bytes given back), so that the test checks how that work
 * grows with the prompt by counting it, not by timing it. The counts go
 * to the file named by TXLM_TEST_COUNTS when the process exits. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "txlm.h"

static unsigned long long bytes_in, ids_in, bytes_out;

typedef txlm_status (*tokenize_fn)(txlm_model *, const char *, size_t, int32_t **, size_t *);
typedef txlm_status (*detokenize_fn)(txlm_model *, const int32_t *, size_t, char **);
typedef txlm_status (*push_fn)(txlm_detokenizer *, int32_t, const char **, size_t *);
typedef txlm_status (*flush_fn)(txlm_detokenizer *, const char **, size_t *);

/* the library's own function of that name, found once */
#define REAL(name, type)                                                                                                 \
    static type real;                                                                                                    \
    if (!real) real = (type)dlsym(RTLD_NEXT, name)

txlm_status txlm_tokenize(txlm_model *m, const char *text, size_t len, int32_t **ids, size_t *n)
{
    REAL("txlm_tokenize", tokenize_fn);
    bytes_in += len;
    return real(m, text, len, ids, n);
}

txlm_status txlm_detokenize(txlm_model *m, const int32_t *ids, size_t n, char **text)
{
    REAL("txlm_detokenize", detokenize_fn);
    ids_in += n;
    txlm_status s = real(m, ids, n, text);
    if (s == TXLM_OK && *text) bytes_out += strlen(*text);
    return s;
}

txlm_status txlm_detokenizer_push(txlm_detokenizer *d, int32_t id, const char **piece, size_t *len)
{
    REAL("txlm_detokenizer_push", push_fn);
    ids_in++;
    txlm_status s = real(d, id, piece, len);
    if (s == TXLM_OK) bytes_out += *len;
    return s;
}

txlm_status txlm_detokenizer_flush(txlm_detokenizer *d, const char **piece, size_t *len)
{
    REAL("txlm_detokenizer_flush", flush_fn);
    txlm_status s = real(d, piece, len);
    if (s == TXLM_OK) bytes_out += *len;
    return s;
}

__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("TXLM_TEST_COUNTS");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (!f) return;
    fprintf(f, "%llu %llu %llu\n", bytes_in, ids_in, bytes_out);
    fclose(f);
}
