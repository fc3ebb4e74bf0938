/* Packs a checkpoint folder (config.json, model.safetensors, vocab.txt)
 * into a .txlm file, for tests that run a golden case's model. */
#ifndef REF_PACK_H
#define REF_PACK_H

#include "errmsg.h"

int ref_pack_dir(const char *dir, const char *out, txlm_err *err);

#endif
