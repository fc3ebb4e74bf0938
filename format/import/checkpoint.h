/* Checkpoints as txlm-pack reads them: a flat list of named tensors from
 * safetensors or torch.save files, detected by content. */
#ifndef TXLM_CHECKPOINT_H
#define TXLM_CHECKPOINT_H

#include <stdint.h>

#include "dtype.h"
#include "errmsg.h"

typedef struct txlm_src_tensor {
    char *name;         /* exactly as stored in the checkpoint */
    uint32_t dtype;     /* TXLM_DT_F32, TXLM_DT_F16 or TXLM_DT_BF16 */
    uint32_t rank;
    uint64_t dims[8];
    uint64_t n_elems;
    const void *data;   /* contiguous little-endian elements, n_elems of them */
    uint64_t nbytes;
} txlm_src_tensor;

typedef struct txlm_checkpoint {
    txlm_src_tensor *tensors;
    uint32_t n_tensors;
    const char *format;  /* "safetensors", "torch-zip", "torch-legacy" */
    void *impl;          /* mappings and owned buffers, freed by txlm_checkpoint_free */
    /* Set by the reader that filled impl; txlm_checkpoint_free calls it on
     * impl (NULL: free(impl)), then frees every name and the tensors array,
     * all of which must come from malloc. */
    void (*free_impl)(void *impl);
} txlm_checkpoint;

/* Opens a checkpoint, choosing the reader from the file's first bytes. */
int txlm_checkpoint_open(const char *path, txlm_checkpoint **out, txlm_err *err);
int txlm_safetensors_open(const char *path, txlm_checkpoint **out, txlm_err *err);
/* Parses a safetensors image held in memory (must outlive the checkpoint). */
int txlm_safetensors_open_memory(const void *data, uint64_t size, txlm_checkpoint **out, txlm_err *err);
void txlm_checkpoint_free(txlm_checkpoint *c);
/* NULL when absent. */
const txlm_src_tensor *txlm_checkpoint_find(const txlm_checkpoint *c, const char *name);
/* 1 when some tensor's name starts with prefix. */
int txlm_checkpoint_has_prefix(const txlm_checkpoint *c, const char *prefix);

/* Reads element i of a source tensor as float (F32/F16/BF16). */
float txlm_src_get_f32(const txlm_src_tensor *t, uint64_t i);

#endif
