/* Models of any shape with seeded random weights, for tests and
 * benchmarks: a checkpoint with HuggingFace names that goes through the
 * packer like a real one, and a vocabulary <eos>, <unk>, w2, w3, ... */
#ifndef TXLM_SYNTHETIC_H
#define TXLM_SYNTHETIC_H

#include <stdint.h>

#include "checkpoint.h"
#include "errmsg.h"
#include "hparams.h"
#include "pack.h"

/* Every tensor the packer expects for h (shared r biases once, tied
 * tensors absent, plus pos_emb.inv_freq), f32, drawn from `seed`. Each
 * tensor has its own stream (seed and name), so a tensor's values do not
 * depend on which other tensors exist. Weights are scaled by 1/sqrt(fan-in),
 * LayerNorm gains lie near 1, biases near 0: activations stay of order 1
 * and the output distributions are neither uniform nor saturated. */
int txlm_synthetic_checkpoint(const txlm_hparams *h, uint64_t seed, txlm_checkpoint **out, txlm_err *err);

/* n symbols: "<eos>", "<unk>", then "w2", "w3", ... (the word tokenizer). */
int txlm_synthetic_vocab(uint32_t n, txlm_vocab_buf *out, txlm_err *err);

#endif
