/* Internal entry points behind txlm_model_load / txlm_model_free. */
#ifndef TXLM_MODEL_LOAD_H
#define TXLM_MODEL_LOAD_H

#include "model.h"

typedef struct txlm_load_progress {
    txlm_progress_fn fn;   /* NULL = none */
    void *user;
} txlm_load_progress;

int txlm_model_open(txlm_context *ctx, const char *path, unsigned open_flags, const txlm_load_progress *progress,
                    txlm_model **out, txlm_err *err);
void txlm_model_close(txlm_model *m);

#endif
