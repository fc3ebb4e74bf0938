/* HF transformers' start of a text (txlm_session_options.zero_memory):
 * init_mems gives every layer mem_len rows of zeros, which every query
 * of the first segments attends to and which slide out as real rows come
 * in. The memory holds projected keys and values, so a zero input row is
 * the keys and values of 0 (post-norm: zeros) or of LN(0), the
 * LayerNorm's bias (pre-norm: model.c's kv0). */
#include <stdlib.h>
#include <string.h>

#include "stream.h"

int txlm_session_zero_fill(txlm_session *s, txlm_err *err)
{
    const txlm_hparams *h = &s->m->h;
    const txlm_dims *dv = &s->m->dev;
    uint32_t M = s->mem_len, H = h->n_head, dh = h->d_head;
    size_t row = (size_t)2 * H * dv->dh; /* keys | values, each head's run dv->dh wide */
    float *rows = calloc((size_t)M * row, sizeof *rows);
    if (!rows) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory for %u zero memory rows", M);
    int rc = 0;
    for (uint32_t n = 0; n < h->n_layer && !rc; n++) {
        if (s->m->kv0) {
            /* one row laid out for the device (padding zero), then copied down */
            const float *kv = s->m->kv0 + (size_t)n * 2 * H * dh;
            for (uint32_t r = 0; r < 2 * H; r++) memcpy(rows + (size_t)r * dv->dh, kv + (size_t)r * dh, dh * sizeof *rows);
            for (uint32_t j = 1; j < M; j++) memcpy(rows + j * row, rows, row * sizeof *rows);
        }
        rc = txlm_buf_upload(&s->m->ctx->vk, &s->kv[n], 0, rows, (VkDeviceSize)M * row * 4, err);
    }
    free(rows);
    if (rc) return rc;
    s->mlen = M;
    s->kv_base = 0;
    return 0;
}
