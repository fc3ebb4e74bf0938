/* txlm-pack --list: every tensor of a source with its dtype, shape and
 * first values, one line each. */
#ifndef TXLM_CKPT_LIST_H
#define TXLM_CKPT_LIST_H

#include <stdint.h>
#include <stdio.h>

#include "checkpoint.h"

#define TXLM_LIST_VALUES 4u /* the first values a line shows */

/* NAME<TAB>DTYPE<TAB>[d0, d1, ...]<TAB>first values. */
void txlm_checkpoint_print(const txlm_checkpoint *ck, FILE *out);
/* A line's start, up to its values: for a source that lists tensors of its own types. */
void txlm_list_head(FILE *out, const char *name, const char *dtype, uint32_t rank, const uint64_t *dims);

#endif
