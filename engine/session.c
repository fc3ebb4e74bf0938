/* A session's lone calls (session.h): a batch of one through the pass
 * driver and the sampler every batch uses, in the session's own
 * workspace. */
#include "session.h"

#include "pass.h"
#include "sample.h"

int txlm_session_open(txlm_model *m, const txlm_session_options *opts, txlm_session **out, txlm_err *err)
{
    return txlm_stream_open(m, opts, out, err);
}

void txlm_session_close(txlm_session *s) { txlm_stream_close(s); }

/* The session's own workspace, for one stream settled as itself. */
static int own(txlm_session *s, txlm_err *err)
{
    return s->own ? 0 : txlm_workspace_open(s->m, s, 1, &s->own, err);
}

int txlm_session_run(txlm_session *s, const txlm_stream_feed *f, txlm_err *err)
{
    int rc = txlm_check_segment(s, f->tokens, f->n, f->first_row, f->targets, err);
    if (!rc) rc = own(s, err);
    return rc ? rc : txlm_pass_feed(s->own, f, 1, NULL, err);
}

int txlm_session_draw(txlm_session *s, const txlm_sampling *o, const txlm_repeat_penalty *pen, int32_t *token,
                      txlm_err *err)
{
    int rc = txlm_sampling_check(o, pen, s->m->h.n_token, err);
    if (!rc) rc = own(s, err);
    return rc ? rc : txlm_sample_streams(s->own, &s, 1, o, &pen, NULL, token, err);
}

int txlm_session_next_vk(txlm_session *s, txlm_err *err)
{
    int rc = own(s, err);
    if (!rc && !s->next_vk.buf)
        rc = txlm_buf_create(&s->m->ctx->vk, (VkDeviceSize)s->m->h.n_token * sizeof(float), TXLM_BUF_DEVICE, &s->next_vk, err);
    return rc ? rc : txlm_next_row_to(s->own, s, &s->next_vk, err);
}

int txlm_session_next(txlm_session *s, const float **lp, txlm_err *err)
{
    int rc = own(s, err);
    if (!rc) rc = txlm_next_row(s->own, s, err);
    *lp = rc ? NULL : s->own->host_lp;
    return rc;
}

static uint64_t bufs_bytes(const txlm_buf *b, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; b && i < n; i++) sum += b[i].buf ? b[i].size : 0;
    return sum;
}

void txlm_session_memory_use(const txlm_session *s, uint64_t *device, uint64_t *host)
{
    uint32_t L = s->m->h.n_layer;
    uint64_t dev = bufs_bytes(s->kv, s->kv ? L : 0) + bufs_bytes(&s->pos.buf, 1) + bufs_bytes(&s->last, 1) +
                   bufs_bytes(&s->next_vk, 1);
    for (uint32_t n = 0; s->rk && n < L; n++) dev += bufs_bytes(&s->rk[n].buf, 1);
    dev += bufs_bytes(s->cap_probs, s->cap_probs ? L : 0) + bufs_bytes(s->cap_terms, s->cap_terms ? L : 0);
    uint64_t hst = sizeof *s + (uint64_t)L * (sizeof *s->kv + sizeof *s->rk);
    if (s->own) {
        dev += txlm_workspace_bytes(s->own);
        hst += sizeof *s->own + (uint64_t)s->m->h.n_token * sizeof *s->own->host_lp;
    }
    *device = dev, *host = hst;
}
