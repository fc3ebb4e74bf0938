/* Helpers shared by the import tests: checks, temporary files and a
 * safetensors image builder. */
#ifndef TXLM_TEST_IMPORT_UTIL_H
#define TXLM_TEST_IMPORT_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "errmsg.h"

extern int test_failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            test_failures++;                                                         \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

/* rc must be `code` and err->msg must contain every given substring. */
#define EXPECT_ERR(rc, err, code, ...) expect_err_at(__FILE__, __LINE__, (rc), (err), (code), __VA_ARGS__, (const char *)0)
void expect_err_at(const char *file, int line, int rc, const txlm_err *err, int code, ...);
#define EXPECT_OK(rc, err) expect_ok_at(__FILE__, __LINE__, (rc), (err))
void expect_ok_at(const char *file, int line, int rc, const txlm_err *err);

/* A fresh directory under $TMPDIR (or /tmp), removed by tmp_cleanup. */
const char *tmp_dir(void);
void tmp_cleanup(void);
/* dir/name, in one of 4 static buffers reused in turn: copy it to keep
 * it across other calls. */
const char *dir_path(const char *dir, const char *name);
/* dir_path(tmp_dir(), name). */
const char *tmp_path(const char *name);
void write_file(const char *path, const void *data, size_t len);
char *read_file(const char *path, size_t *len); /* NULL on failure */
int file_exists(const char *path);
/* 1 when both files read and hold the same bytes. */
int same_bytes(const char *a, const char *b);
/* Runs `exe` with args (NULL-terminated, up to 30); *out and *err receive
 * what it printed (never NULL). Returns its exit status. */
int run_exe(const char *exe, const char *const *args, char **out, char **err);
/* `txlm logprobs -m MODEL --tokens T --segments S -o FILE [flag value]`
 * (flag may be NULL) run, its float32 output read back (NULL on failure). */
float *run_logprobs(const char *txlm, const char *model, const char *tokens, const char *segments, const char *flag,
                    const char *value, size_t *len);
/* The largest |a[i] - b[i]|; NaN anywhere makes it NaN (never "close"). */
double max_abs_diff(const float *a, const float *b, size_t n);

/* ---- safetensors images ---- */
typedef struct st_entry {
    char name[128];
    char dtype[16];   /* "F32", "F16", "BF16", anything else for error tests */
    int rank;
    uint64_t dims[10];
    const void *data; /* element bytes, len of them */
    uint64_t len;
} st_entry;

typedef struct st_image {
    st_entry *e;
    int n, cap;
    char *extra_json; /* appended inside the top-level object when not NULL */
} st_image;

st_entry *st_add(st_image *im, const char *name, const char *dtype, int rank, const uint64_t *dims, const void *data,
                 uint64_t len);
st_entry *st_find(st_image *im, const char *name);
void st_remove(st_image *im, const char *name);
/* Serialises with data laid out in order; *size receives the byte count. */
uint8_t *st_serialize(const st_image *im, uint64_t *size);
void st_free(st_image *im);

#endif
