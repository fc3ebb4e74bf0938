/* torch.save checkpoints (zip format, PyTorch >= 1.6, and the legacy
 * pre-1.6 format) and pickled vocabularies, read without executing code. */
#ifndef TXLM_TORCH_H
#define TXLM_TORCH_H

#include "checkpoint.h"
#include "errmsg.h"
#include "pack.h"

/* 1 if the bytes look like a torch.save file (zip or legacy), else 0. */
int txlm_torch_sniff(const void *head, uint64_t len);
int txlm_torch_open(const char *path, txlm_checkpoint **out, txlm_err *err);
/* HF TransfoXLTokenizer attribute dict, plain pickle or legacy torch.save:
 * takes idx2sym, lower_case and the special symbols. */
int txlm_vocab_load_pickle(const char *path, txlm_vocab_buf *out, txlm_err *err);
/* 1 if the bytes look like a pickle or a legacy torch.save of one. */
int txlm_vocab_sniff_pickle(const void *head, uint64_t len);

#endif
