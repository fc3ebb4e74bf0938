/* The authors' TensorFlow variable layout (kimiyoung/transformer-xl
 * tf/model.py, as tf/train_gpu.py builds it) read from a bundle: the
 * hyper-parameters the shapes imply, and every weight under the authors'
 * PyTorch names (docs/tensors.md), transposed from TensorFlow's
 * [in, out] kernels where PyTorch stores [out, in]. */
#ifndef TXLM_TF_LAYOUT_H
#define TXLM_TF_LAYOUT_H

#include "checkpoint.h"
#include "hparams.h"
#include "tf_bundle.h"

/* Takes the bundle: the checkpoint owns it from then on (it is freed with
 * the checkpoint, or here on failure). h gets the shapes' hyper-parameters
 * (lengths left 0: the bundle has none); *skipped counts the entries that
 * are not the model's (optimizer slots, global_step) and were not read. */
int txlm_tf_layout(txlm_tf_bundle *b, txlm_hparams *h, txlm_checkpoint **out, uint32_t *skipped, txlm_err *err);

#endif
