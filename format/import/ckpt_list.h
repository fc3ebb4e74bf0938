/* txlm-pack --list: every tensor of a source with its dtype, shape and
 * first values, one line each. */
#ifndef TXLM_CKPT_LIST_H
#define TXLM_CKPT_LIST_H

#include <stdio.h>

#include "checkpoint.h"
#include "tf_bundle.h"

/* NAME<TAB>DTYPE<TAB>[d0, d1, ...]<TAB>first values (at most 4). */
void txlm_checkpoint_print(const txlm_checkpoint *ck, FILE *out);
/* Every entry of a bundle; float tensors are read (their CRCs checked)
 * for their first values, others listed as "not read". */
int txlm_tf_bundle_print(const txlm_tf_bundle *b, FILE *out, txlm_err *err);

#endif
