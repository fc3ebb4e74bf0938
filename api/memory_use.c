/* txlm_model_memory and txlm_session_memory: what a model's and a
 * session's buffers hold on the device, and their largest host parts. */
#include <pthread.h>
#include <stdlib.h>

#include "session.h"
#include "tokenizer.h"
#include "txlm.h"
#include "txlm_api_error.h"

static uint64_t bufs_bytes(const txlm_buf *b, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; b && i < n; i++) sum += b[i].buf ? b[i].size : 0;
    return sum;
}

txlm_status txlm_model_memory(const txlm_model *m, txlm_memory_use *out)
{
    if (!m || !out) return txlm_api_bad_arg("txlm_model_memory: NULL argument");
    const txlm_hparams *h = &m->h;
    uint64_t dev = 0;
    for (uint32_t i = 0; i < m->n_tensors; i++) dev += bufs_bytes(&m->tensors[i].buf, 1);
    for (uint32_t c = 0; c < TXLM_MAX_CLUSTERS; c++) dev += bufs_bytes(&m->proj_t[c].buf, 1);
    uint64_t host = sizeof *m + (uint64_t)m->n_tensors * sizeof *m->tensors + (uint64_t)h->n_layer * sizeof *m->layers;
    host += ((uint64_t)m->vocab.n + 1) * sizeof *m->vocab_offsets + m->vocab.blob_size;
    if (m->kv0) host += (uint64_t)h->n_layer * 2 * h->n_head * h->d_head * sizeof *m->kv0;
    if (m->inv_freq) host += (uint64_t)h->d_model / 2 * sizeof *m->inv_freq;
    /* the tokenizer is built on first use, under the model's lock */
    pthread_mutex_t *lock = (pthread_mutex_t *)&m->tok_lock;
    pthread_mutex_lock(lock);
    if (m->tok) host += txlm_tok_host_bytes(m->tok);
    pthread_mutex_unlock(lock);
    *out = (txlm_memory_use){dev, host};
    return TXLM_OK;
}

txlm_status txlm_session_memory(const txlm_session *s, txlm_memory_use *out)
{
    if (!s || !out) return txlm_api_bad_arg("txlm_session_memory: NULL argument");
    txlm_session_memory_use(s, &out->device_bytes, &out->host_bytes);
    return TXLM_OK;
}
