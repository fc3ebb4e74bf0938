/* Naming the stream a batched call failed on (blame.h). */
#include "blame.h"

int txlm_blame_stream(txlm_blame *b, txlm_err *err, uint32_t i)
{
    if (!b) return err ? err->code : 0;
    if (b->stream < 0) b->stream = (int32_t)i;
    return txlm_fail_prefix(err, "stream %u: ", i);
}
