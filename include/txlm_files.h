/*
 * txlm_files: a .txlm model file read without a device (what `txlm info`
 * prints), and the file handling every txlm tool shares: inputs that
 * cannot block, outputs written atomically. Included by txlm.h; errors as
 * there (a txlm_status, the message from txlm_last_error()).
 */
#ifndef TXLM_FILES_H
#define TXLM_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "txlm_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- model files, read without a device ------------------------------ */

typedef struct txlm_model_file txlm_model_file;

#define TXLM_FILE_MAX_CUTOFFS 15

/* The hyper-parameters and vocabulary a .txlm file holds (docs/format.md). */
typedef struct txlm_model_file_info {
    uint32_t version_minor;  /* the file is format 1.version_minor */
    uint64_t size;           /* bytes */
    uint32_t n_token, d_model, d_embed, n_head, d_head, d_inner, n_layer;
    uint32_t div_val, n_cutoffs;
    uint32_t cutoffs[TXLM_FILE_MAX_CUTOFFS];
    uint8_t tie_projs[TXLM_FILE_MAX_CUTOFFS + 1]; /* one per cluster (n_cutoffs + 1) */
    int tie_weight, pre_lnorm, untie_r, same_length;
    int32_t clamp_len;
    uint32_t mem_len, tgt_len;
    float layer_norm_epsilon;
    uint32_t vocab_size;
    const char *tokenizer;   /* "word", "char-byte" or "char-text8" */
    int lower_case, wt103;   /* the word tokenizer's options */
    int32_t eos_id, unk_id;  /* -1 when the vocabulary has none */
    uint32_t n_tensors;
    /* (appended after the fields above; the file's 1.1 and 1.2 fields) */
    uint32_t same_length_rule; /* 0: the authors' and HF's same_length bound, 1: NVIDIA's (one key more) */
    int zero_memory;         /* 1: a session starts from mem_len rows of zeros unless its options say otherwise */
    int line_start_eos;      /* the word tokenizer's <eos> also opens every line (lm1b's <S> words <S>) */
} txlm_model_file_info;

typedef struct txlm_model_file_tensor {
    const char *name;        /* valid while the file is open */
    const char *dtype;       /* "f32", "f16", "bf16", "q8_0", "q4_0" */
    uint32_t dtype_id;       /* the format's dtype code (docs/format.md) */
    uint32_t rank;
    uint64_t dims[8];        /* row-major, PyTorch order; rank of them used */
    uint64_t n_elems, nbytes;
} txlm_model_file_tensor;

/* NaN and infinity in one tensor's stored values. */
typedef struct txlm_model_file_nonfinite {
    uint64_t count;          /* elements that are NaN or infinite (q8_0, q4_0: the elements of blocks whose scale is) */
    uint64_t first;          /* the first of them, when count > 0 */
    const char *value;       /* its value: "nan", "inf" or "-inf" */
} txlm_model_file_nonfinite;

/* Opens and checks a .txlm file (per-tensor hashes unless no_verify); no
 * device is needed. On failure *out is NULL. */
TXLM_API txlm_status txlm_model_file_open(const char *path, int no_verify, txlm_model_file **out);
/* NULL is ignored. */
TXLM_API void txlm_model_file_close(txlm_model_file *f);
TXLM_API void txlm_model_file_get_info(const txlm_model_file *f, txlm_model_file_info *out);
/* Tensor i (< n_tensors), in file order. */
TXLM_API txlm_status txlm_model_file_get_tensor(const txlm_model_file *f, uint32_t i, txlm_model_file_tensor *out);
/* Reads every value of tensor i. */
TXLM_API txlm_status txlm_model_file_scan_tensor(const txlm_model_file *f, uint32_t i, txlm_model_file_nonfinite *out);

/* ---- files ------------------------------------------------------------ */

/* Opens path for reading ("rb"), refusing what is not a regular file (a
 * FIFO, a device, a socket, a directory: it could block or never end). */
TXLM_API txlm_status txlm_input_open(const char *path, FILE **out);
/* Writes n files (NULL paths skipped), each through a temporary that
 * nothing planted in its directory can redirect, synced and renamed onto
 * the output; all are written in full before the first replaces anything,
 * so a failure leaves every old output as it was. */
TXLM_API txlm_status txlm_write_files(int n, const char *const *paths, const void *const *data, const size_t *sizes);

/* One output written in steps, its temporary file created at once: a path
 * that cannot be written (no such directory, a directory as the output)
 * fails at txlm_output_open, before the work that makes its data. The
 * temporary is the same as txlm_write_files' and nothing is replaced
 * before txlm_output_commit. Each handle is used by one thread at a time. */
typedef struct txlm_output txlm_output;
TXLM_API txlm_status txlm_output_open(const char *path, txlm_output **out);
/* Appends n bytes. */
TXLM_API txlm_status txlm_output_write(txlm_output *o, const void *data, size_t n);
/* Syncs the data and renames it onto the path; o is freed either way (on
 * failure the path is as it was). */
TXLM_API txlm_status txlm_output_commit(txlm_output *o);
/* Drops the temporary (the path is as it was) and frees o; NULL is ignored. */
TXLM_API void txlm_output_abort(txlm_output *o);
/* 1 when a and b are one file: the same device and inode, through symbolic
 * and hard links, or, where neither exists yet, the same name in the same
 * directory however spelt ("x", "./x"); else 0. What a program checks so
 * that an output never replaces one of its inputs or another output. */
TXLM_API int txlm_same_file(const char *a, const char *b);

#ifdef __cplusplus
}
#endif

#endif
