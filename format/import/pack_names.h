/* Which tensors a .txlm holds for given hyper-parameters (docs/tensors.md),
 * and which checkpoint tensors are tied copies of others. */
#ifndef TXLM_PACK_NAMES_H
#define TXLM_PACK_NAMES_H

#include <stdint.h>

#include "errmsg.h"
#include "hparams.h"
#include "txlm_file.h"

typedef struct txlm_pack_name {
    char name[TXLM_MAX_NAME]; /* canonical name in the .txlm */
    char src[TXLM_MAX_NAME];  /* checkpoint name without "transformer." (differs for shared r biases) */
    uint32_t rank;            /* 1 or 2 */
    uint64_t dims[2];
} txlm_pack_name;

typedef struct txlm_pack_tie {
    char src[TXLM_MAX_NAME];    /* a checkpoint name, without "transformer.", that is a tied copy */
    char target[TXLM_MAX_NAME]; /* the canonical tensor it must equal */
} txlm_pack_tie;

/* Fills *names (malloc'd, file order: embedding, layers, crit) and *ties
 * (malloc'd). h must be valid (txlm_hparams_validate). */
int txlm_pack_names(const txlm_hparams *h, txlm_pack_name **names, uint32_t *n_names, txlm_pack_tie **ties,
                    uint32_t *n_ties, txlm_err *err);

#endif
