/* The next token of several sessions (placeholder: one after another). */
#include "batch.h"
#include "sample.h"

int txlm_batch_sample_next(txlm_batch *b, txlm_session *const *s, uint32_t n, const txlm_sampling *o,
                           const txlm_repeat_penalty *const *pen, int32_t *tokens, txlm_err *err)
{
    (void)b;
    for (uint32_t i = 0; i < n; i++) {
        int rc = txlm_sample_next(s[i], o, pen ? pen[i] : NULL, &tokens[i], err);
        if (rc) return rc;
    }
    return 0;
}
