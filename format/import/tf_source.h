/* The authors' released TensorFlow models as txlm-pack finds them
 * (tf/sota/download.sh): the top folder (model/ + data/), the model folder
 * (its `checkpoint` file names the latest), or a checkpoint prefix;
 * data/corpus-info.json and data/cache.pkl beside it. */
#ifndef TXLM_TF_SOURCE_H
#define TXLM_TF_SOURCE_H

#include "ckpt_source.h"

/* 1 if path is one of the above (told by the files present, not by name). */
int txlm_tf_sniff(const char *path);
/* The checkpoint prefix path stands for, and the folder where corpus-info.json
 * and cache.pkl are looked for (empty when none is found). */
int txlm_tf_resolve(const char *path, char *prefix, size_t cap, char *data_dir, size_t dcap, txlm_err *err);
/* Weights, hyper-parameters, the dataset's evaluation settings and (when
 * want_vocab) cache.pkl's vocabulary. */
int txlm_tf_source_open(const char *path, int want_vocab, txlm_ckpt_source *out, txlm_err *err);

#endif
