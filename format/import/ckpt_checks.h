/* Checks of a checkpoint's values before it is packed (ckpt_checks.c). */
#ifndef TXLM_CKPT_CHECKS_H
#define TXLM_CKPT_CHECKS_H

#include <stdint.h>
#include <stdio.h>

#include "checkpoint.h"
#include "errmsg.h"

/* Checks a checkpoint's inv_freq against the standard frequencies (within
 * its type's rounding) and sets *keep when its values are not the
 * engine's own (a 16-bit checkpoint's rounded ones): then they must be
 * stored (inv_freq.h). */
int txlm_inv_freq_check(const txlm_src_tensor *t, uint32_t d_model, int *keep, txlm_err *err);
/* For txlm-pack: one line per tensor of ck that holds non-finite values
 * (name, count, first index) to `report`, each line starting with `who`;
 * then, unless allow, an error of one line naming how many and the first
 * as its line does. */
int txlm_check_finite(const txlm_checkpoint *ck, int allow, FILE *report, const char *who, txlm_err *err);

#endif
