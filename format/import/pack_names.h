/* Which tensors a .txlm holds for given hyper-parameters, as a checkpoint
 * must supply them (the tensor table, tensor_table.h), and which checkpoint
 * tensors are tied copies of others. */
#ifndef TXLM_PACK_NAMES_H
#define TXLM_PACK_NAMES_H

#include <stdint.h>

#include "errmsg.h"
#include "hparams.h"
#include "tensor_table.h"

typedef struct txlm_pack_name {
    txlm_tt_slot t;           /* the tensor in the .txlm (name, shape, dtype rule) */
    char src[TXLM_MAX_NAME];  /* checkpoint name without TXLM_HF_PREFIX (differs for shared r biases) */
} txlm_pack_name;

typedef struct txlm_pack_tie {
    char src[TXLM_MAX_NAME];    /* a checkpoint name, without TXLM_HF_PREFIX, that is a tied copy */
    char target[TXLM_MAX_NAME]; /* the checkpoint tensor it must equal */
} txlm_pack_tie;

/* Fills *names (malloc'd, file order) and *ties (malloc'd). h must be
 * valid (txlm_hparams_validate). */
int txlm_pack_names(const txlm_hparams *h, txlm_pack_name **names, uint32_t *n_names, txlm_pack_tie **ties,
                    uint32_t *n_ties, txlm_err *err);

#endif
