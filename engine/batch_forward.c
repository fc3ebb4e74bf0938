/* Several streams' segments in one pass (placeholder: one after another). */
#include "batch.h"

int txlm_batch_forward(txlm_batch *b, const txlm_stream_feed *f, uint32_t n, txlm_err *err)
{
    (void)b;
    for (uint32_t i = 0; i < n; i++) {
        txlm_out_req req = {.first_row = f[i].first_row, .logprobs = f[i].logprobs, .targets = f[i].targets,
                            .target_lp = f[i].target_logprobs};
        int rc = txlm_forward(f[i].session, f[i].tokens, f[i].n, &req, err);
        if (rc) return rc;
    }
    return 0;
}
