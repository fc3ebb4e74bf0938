/* torch.save checkpoints (zip format, PyTorch >= 1.6, and the legacy
 * pre-1.6 format) and pickled vocabularies, read without executing code. */
#ifndef TXLM_TORCH_H
#define TXLM_TORCH_H

#include "checkpoint.h"
#include "errmsg.h"
#include "pack.h"
#include "pickle.h"

/* 1 if the bytes look like a torch.save file (zip or legacy), else 0. */
int txlm_torch_sniff(const void *head, uint64_t len);
/* The state dict of a torch.save file (the saved dict, or the dict under
 * "state_dict", "model_state_dict" or "model" in it) as a checkpoint. */
int txlm_torch_open(const char *path, txlm_checkpoint **out, txlm_err *err);

/* Any torch.save file, read inertly (pickle.h): its saved object, and
 * tensors taken from it by name into a checkpoint. Storages no tensor is
 * taken from are never read. */
typedef struct txlm_torch_obj txlm_torch_obj;
int txlm_torch_load(const char *path, txlm_torch_obj **out, txlm_err *err);
const txlm_pk_value *txlm_torch_root(const txlm_torch_obj *o);
/* Adds tensor value v (TXLM_PK_TENSOR, float storage) as `name`. */
int txlm_torch_add(txlm_torch_obj *o, const char *name, const txlm_pk_value *v, txlm_err *err);
/* The state dict of a loaded file, as txlm_torch_open gives it. */
int txlm_torch_state_dict(txlm_torch_obj *o, txlm_checkpoint **out, txlm_err *err);
/* The tensors added so far, owning the file's mapping: o keeps nothing. */
txlm_checkpoint *txlm_torch_take(txlm_torch_obj *o);
void txlm_torch_free(txlm_torch_obj *o);

/* The vocabulary of an attribute dict already read (HF's tokenizer dict,
 * or the state of a training code's Vocab record). */
int txlm_vocab_from_attrs(const char *where, const txlm_pk_value *attrs, txlm_vocab_buf *out, txlm_err *err);
/* HF TransfoXLTokenizer attribute dict, plain pickle or legacy torch.save:
 * takes idx2sym, lower_case and the special symbols. */
int txlm_vocab_load_pickle(const char *path, txlm_vocab_buf *out, txlm_err *err);
/* 1 if the bytes look like a pickle or a legacy torch.save of one. */
int txlm_vocab_sniff_pickle(const void *head, uint64_t len);

#endif
