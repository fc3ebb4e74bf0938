/* Shared fixtures of the format tests: a small synthetic model with random
 * weights, writing it, reading files back, temporary directories. */
#ifndef FMT_COMMON_H
#define FMT_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "txlm_file.h"

#define FMT_MAX_TENSORS 16

typedef struct fmt_tensor {
    char name[TXLM_MAX_NAME];
    uint32_t dtype, rank;
    uint64_t dims[TXLM_MAX_RANK];
    uint8_t *data;
    uint64_t nbytes;
} fmt_tensor;

typedef struct fmt_model {
    txlm_hparams hp;
    txlm_vocab vocab;
    uint32_t *offsets;
    char *blob;
    int n_tensors;
    fmt_tensor t[FMT_MAX_TENSORS];
} fmt_model;

/* kind: TXLM_TOK_WORD (300 words, some non-ASCII, two clusters) or
 * TXLM_TOK_CHAR_BYTE (256 single bytes, plain softmax). */
void fmt_model_build(fmt_model *m, uint32_t seed, uint32_t kind);
void fmt_model_free(fmt_model *m);
int fmt_model_write(const fmt_model *m, const char *path, txlm_err *err);

/* Whole file into a malloc'ed buffer; NULL on failure. */
uint8_t *fmt_read_all(const char *path, size_t *len);
int fmt_write_all(const char *path, const void *data, size_t len);
int fmt_exists(const char *path);
/* A fresh directory under $TMPDIR or /tmp; removed (one level) by fmt_rmdir. */
char *fmt_mkdtemp(void);
void fmt_rmdir(char *dir);

uint32_t fmt_rand(uint32_t *state);

/* Recomputes the checksums after an edit, per docs/format.md (offsets
 * spelled out independently of the implementation): each section's that
 * carries one when `sections` is set, then the header's. len is the file's
 * size; sections whose range lies outside it are left alone. */
void fmt_fix_checksums(uint8_t *b, size_t len, int sections);

/* Test bookkeeping: CHECK records a failure and goes on. */
extern int fmt_failures;
#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fmt_failures++;                                                               \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);      \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fputc('\n', stderr);                                                          \
        }                                                                                 \
    } while (0)

#endif
