/* Packs a checkpoint folder (config.json, model.safetensors, vocab.txt)
 * into a .txlm file, for tests that run a golden case's model; or a
 * synthetic model of a config (txlm-pack --synthetic's generator) in a
 * dtype, for tests that run the engine on shapes of their own. */
#ifndef REF_PACK_H
#define REF_PACK_H

#include "errmsg.h"

#include <stdint.h>

int ref_pack_dir(const char *dir, const char *out, txlm_err *err);
int ref_pack_synthetic(const char *config_json, uint32_t dtype, uint64_t seed, const char *out, txlm_err *err);

#endif
