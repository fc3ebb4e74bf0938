/* Which stream of a batched call its error belongs to
 * (txlm_batch_failed_stream). A batch's calls pass a txlm_blame down to
 * where a stream fails; there the message is prefixed "stream i: " and i
 * recorded. A lone session's calls pass NULL: their errors name no
 * stream. */
#ifndef TXLM_BLAME_H
#define TXLM_BLAME_H

#include <stdint.h>

#include "errmsg.h"

typedef struct txlm_blame {
    int32_t stream;          /* the first stream an error named in this call, or -1 */
} txlm_blame;

/* When b is not NULL: err's message prefixed "stream i: " and i recorded
 * in b (unless an earlier stream was). Returns err->code. */
int txlm_blame_stream(txlm_blame *b, txlm_err *err, uint32_t i);

#endif
