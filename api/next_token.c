/* The next token's distribution read without feeding again: the output
 * layer is run once more on the last row of the last segment (the memory
 * and the sampler are untouched), as a filtered draw does. */
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "sample.h"
#include "session.h"
#include "session_claim.h"
#include "txlm_api_error.h"
#include "txlm_vulkan.h"

/* The next row's log-probabilities of a claimed session (*lp: valid
 * until its next call). */
static int next_row_claimed(txlm_session *s, const char *what, const float **lp, txlm_err *err)
{
    int rc = txlm_session_claim(s, what, err);
    if (rc) return rc;
    rc = txlm_session_next(s, lp, err);
    txlm_session_release(s);
    return rc;
}

txlm_status txlm_session_next_logprobs(txlm_session *s, float *logprobs)
{
    if (!s || !logprobs) return txlm_api_bad_arg("txlm_session_next_logprobs: NULL argument");
    txlm_err e = {0};
    const float *lp;
    if (next_row_claimed(s, "txlm_session_next_logprobs", &lp, &e)) return txlm_api_fail(&e);
    memcpy(logprobs, lp, (size_t)s->m->h.n_token * sizeof *logprobs);
    return TXLM_OK;
}

/* a worse than b: less likely, or as likely with a higher id */
static int worse(const float *lp, int32_t a, int32_t b) { return lp[a] < lp[b] || (lp[a] == lp[b] && a > b); }

/* Restores the heap below i (the worst entry at the root). */
static void sift_down(int32_t *heap, uint32_t k, uint32_t i, const float *lp)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < k && worse(lp, heap[l], heap[w])) w = l;
        if (r < k && worse(lp, heap[r], heap[w])) w = r;
        if (w == i) return;
        int32_t t = heap[i];
        heap[i] = heap[w], heap[w] = t;
        i = w;
    }
}

txlm_status txlm_session_next_top_k(txlm_session *s, uint32_t k, int32_t *ids, float *logprobs)
{
    if (!s || !ids || !logprobs) return txlm_api_bad_arg("txlm_session_next_top_k: NULL argument");
    uint32_t n = s->m->h.n_token;
    if (k == 0 || k > n) return txlm_api_bad_arg("txlm_session_next_top_k: k must be 1..n_token");
    txlm_err e = {0};
    const float *lp;
    if (next_row_claimed(s, "txlm_session_next_top_k", &lp, &e)) return txlm_api_fail(&e);
    /* the k best in a heap whose root is the worst of them: n log k */
    for (uint32_t i = 0; i < k; i++) ids[i] = (int32_t)i;
    for (uint32_t i = k / 2; i-- > 0;) sift_down(ids, k, i, lp);
    for (uint32_t t = k; t < n; t++)
        if (worse(lp, ids[0], (int32_t)t)) ids[0] = (int32_t)t, sift_down(ids, k, 0, lp);
    /* taking the worst out repeatedly fills the array from its end */
    for (uint32_t m = k; m > 1; m--) {
        int32_t t = ids[0];
        ids[0] = ids[m - 1], ids[m - 1] = t;
        sift_down(ids, m - 1, 0, lp);
    }
    for (uint32_t i = 0; i < k; i++) logprobs[i] = lp[ids[i]];
    return TXLM_OK;
}

txlm_status txlm_session_next_logprobs_vk(txlm_session *s, txlm_vk_buffer *out)
{
    if (!s || !out) return txlm_api_bad_arg("txlm_session_next_logprobs_vk: NULL argument");
    memset(out, 0, sizeof *out);
    txlm_vk *vk = &s->m->ctx->vk;
    if (!vk->host)
        return txlm_api_bad_arg("txlm_session_next_logprobs_vk: the context is txlm's own device, which the program "
                                "cannot reach (make it with txlm_context_create_on_device)");
    txlm_err e = {0};
    int rc = txlm_session_claim(s, "txlm_session_next_logprobs_vk", &e);
    if (rc) return txlm_api_fail(&e);
    rc = txlm_session_next_vk(s, &e);
    txlm_session_release(s);
    if (rc) return txlm_api_fail(&e);
    *out = (txlm_vk_buffer){
        .buffer = s->next_vk.buf,
        .offset = 0,
        .range = (VkDeviceSize)s->m->h.n_token * sizeof(float),
        .queue_family = vk->queue_family,
        /* the log-softmax kernels write it (adaptive_softmax.c) */
        .src_stage_mask = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
        .src_access_mask = VK_ACCESS_SHADER_WRITE_BIT,
    };
    return TXLM_OK;
}
