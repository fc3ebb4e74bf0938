/* Widening a model's weights for the device layout (model_pad.c). */
#ifndef TXLM_MODEL_PAD_H
#define TXLM_MODEL_PAD_H

#include "model.h"

/* The widths the model runs at: h's, or rounded up where the file's
 * tensors allow (no_pad, the context's debug option: never). */
void txlm_dims_choose(const txlm_hparams *h, const txlm_file *f, int no_pad, txlm_dims *dv);
/* How the tensor called name is widened from h's widths to dv's: by what
 * each of its dimensions is in the tensor table's terms (a tensor the
 * table does not give h: not at all). */
void txlm_pad_of(const txlm_hparams *h, const txlm_dims *dv, const char *name, txlm_pad out[2]);

#endif
