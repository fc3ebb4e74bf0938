/* Pieces shared by the torch.save readers (torch_zip.c, torch_legacy.c),
 * the state-dict walker (torch_tensors.c) and the pickled vocabulary
 * reader (vocab_pickle.c). */
#ifndef TXLM_TORCH_READ_H
#define TXLM_TORCH_READ_H

#include <stddef.h>
#include <stdint.h>

#include "checkpoint.h"
#include "errmsg.h"
#include "file_map.h"
#include "pickle.h"
#include "torch.h"
#include "zip.h"

/* The first pickle of a legacy torch.save file: protocol 2, LONG1 of the
 * magic number 0x1950a86a20f9469cfc6c. */
#define TXLM_TORCH_LEGACY_MAGIC "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19\x2e"
#define TXLM_TORCH_LEGACY_MAGIC_LEN 15u

/* Legacy file: checks the magic, protocol version and system info pickles,
 * then parses the saved object. *end is the byte after its pickle. */
int txlm_torch_legacy_object(const char *where, const uint8_t *data, uint64_t len, txlm_pickle **pk,
                             const txlm_pk_value **root, uint64_t *end, txlm_err *err);

/* Zip file: finds <archive>/data.pkl (checks its CRC and the byte order)
 * and parses it. *prefix / *prefix_len receive "<archive>/". */
int txlm_torch_zip_object(const char *where, const uint8_t *data, uint64_t len, txlm_zip *z, const char **prefix,
                          size_t *prefix_len, txlm_pickle **pk, const txlm_pk_value **root, txlm_err *err);

/* Bytes of the whole storage a reference names (a view's root storage):
 * at least numel * elem_size of them, checked by the callee. */
typedef int (*txlm_storage_fn)(void *user, const txlm_pk_storage *s, const uint8_t **data, txlm_err *err);

/* Owned memory of a torch checkpoint: the mapping and copies of
 * non-contiguous tensors. */
typedef struct txlm_torch_impl {
    txlm_file_map map;
    void **copies;
    uint32_t n_copies, cap_copies;
} txlm_torch_impl;

void txlm_torch_impl_free(void *impl);

/* An opened torch.save file (torch.h): its saved object and the way to
 * its storages; tensors taken from it go into ck, which owns the mapping. */
struct txlm_torch_obj {
    const char *path;
    txlm_checkpoint *ck;
    txlm_torch_impl *impl;
    txlm_pickle *pk;
    const txlm_pk_value *root;
    txlm_storage_fn fn;
    void *ctx;                   /* the reader's, freed by ctx_free */
    void (*ctx_free)(void *ctx);
    uint32_t cap;                /* ck->tensors allocated */
};

/* Fill o (zeroed, path set, ck and impl made by txlm_torch_load) from the
 * mapping in o->impl. */
int txlm_torch_zip_load(txlm_torch_obj *o, txlm_err *err);
int txlm_torch_legacy_load(txlm_torch_obj *o, txlm_err *err);
/* Adds every tensor of the state dict (the saved dict, or the dict under
 * "state_dict", "model_state_dict" or "model" in it) to o->ck. */
int txlm_torch_collect(txlm_torch_obj *o, txlm_err *err);

#endif
