/* Reading and writing .txlm model files (specified in docs/format.md). */
#ifndef TXLM_FILE_H
#define TXLM_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "errmsg.h"
#include "hparams.h"
#include "vocab.h"

#define TXLM_MAX_RANK 8
#define TXLM_MAX_NAME 96   /* bytes of a tensor name including the NUL */

typedef struct txlm_tensor_info {
    char name[TXLM_MAX_NAME];
    uint32_t dtype;        /* txlm_dtype */
    uint32_t rank;
    uint64_t dims[TXLM_MAX_RANK]; /* row-major, PyTorch order */
    uint64_t n_elems;
    uint64_t offset;       /* absolute file offset of the data */
    uint64_t nbytes;
    uint64_t hash;         /* XXH3-64 of the data */
} txlm_tensor_info;

/* ---- reading ---------------------------------------------------------- */

typedef struct txlm_file txlm_file;

enum {
    TXLM_OPEN_NO_VERIFY = 1u << 0, /* skip per-tensor hashes (header/directory checksums are always checked) */
};

/* Maps the file read-only and validates everything before returning. */
int txlm_file_open(const char *path, unsigned flags, txlm_file **out, txlm_err *err);
/* Same, over a caller-owned buffer that must outlive the txlm_file (used by tests and fuzzers). */
int txlm_file_open_memory(const void *data, size_t size, unsigned flags, txlm_file **out, txlm_err *err);
void txlm_file_close(txlm_file *f);

const txlm_hparams *txlm_file_hparams(const txlm_file *f);
const txlm_vocab *txlm_file_vocab(const txlm_file *f);
uint32_t txlm_file_version_minor(const txlm_file *f);
uint64_t txlm_file_size(const txlm_file *f);
uint32_t txlm_file_tensor_count(const txlm_file *f);
const txlm_tensor_info *txlm_file_tensor(const txlm_file *f, uint32_t i);
/* NULL when there is no tensor of that name. */
const txlm_tensor_info *txlm_file_find(const txlm_file *f, const char *name);
const void *txlm_file_data(const txlm_file *f, const txlm_tensor_info *t);

/* ---- writing ---------------------------------------------------------- */

typedef struct txlm_writer txlm_writer;

/* Writes to a temporary file in path's directory (atomic_write.h) that
 * txlm_writer_finish renames onto path. */
int txlm_writer_open(const char *path, txlm_writer **out, txlm_err *err);
int txlm_writer_set_hparams(txlm_writer *w, const txlm_hparams *h, txlm_err *err);
/* The vocabulary is copied. */
int txlm_writer_set_vocab(txlm_writer *w, const txlm_vocab *v, txlm_err *err);
/* `data` is NOT copied: it must stay valid until finish/abort. nbytes must
 * equal the size computed from dtype and dims. Tensors are written in the
 * order they are added. */
int txlm_writer_add_tensor(txlm_writer *w, const char *name, txlm_dtype dtype, uint32_t rank,
                           const uint64_t *dims, const void *data, uint64_t nbytes, txlm_err *err);
/* Optional: called with (bytes written, total) while tensor data is written. */
void txlm_writer_set_progress(txlm_writer *w, void (*cb)(void *user, uint64_t done, uint64_t total), void *user);
/* Lays out, writes, fsyncs and renames. Frees w in all cases; on error
 * the temporary file is removed and path is as it was. */
int txlm_writer_finish(txlm_writer *w, txlm_err *err);
/* Drops everything, removes the temporary file, frees w. */
void txlm_writer_abort(txlm_writer *w);

/* Bytes of a tensor of this dtype and shape; 0 with err set on overflow,
 * an unknown dtype, or a last dimension that is not a multiple of the block size. */
uint64_t txlm_tensor_nbytes(uint32_t dtype, uint32_t rank, const uint64_t *dims, txlm_err *err);

#endif
