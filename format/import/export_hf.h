/* Writing a model as a HuggingFace-style checkpoint folder, so that other
 * implementations (PyTorch) can load exactly the weights txlm runs. */
#ifndef TXLM_EXPORT_HF_H
#define TXLM_EXPORT_HF_H

#include "checkpoint.h"
#include "errmsg.h"
#include "hparams.h"
#include "vocab.h"

/* Writes ck's tensors (names as they are) to st_path as safetensors, and
 * config.json (TransfoXLConfig keys) and vocab.txt into the same folder.
 * The folder is created if only its last level is missing. Each file goes
 * to "<file>.tmp" first; the three are renamed into place only once all
 * are written, and nothing is left behind on failure. */
int txlm_export_hf(const txlm_hparams *h, const txlm_vocab *v, const txlm_checkpoint *ck, const char *st_path,
                   txlm_err *err);

#endif
