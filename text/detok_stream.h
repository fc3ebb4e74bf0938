/* Streaming detokenization: one token in, the text that is now final out,
 * so that the pieces of a stream put together are exactly the text
 * txlm_tok_decode gives for the whole stream, at a cost per token that
 * does not grow with the stream (docs/tokenizers.md, "Streaming"). */
#ifndef TXLM_DETOK_STREAM_H
#define TXLM_DETOK_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "errmsg.h"
#include "tokenizer.h"

/* The public txlm_detokenizer (include/txlm.h) is this object. */
typedef struct txlm_detokenizer txlm_detok;

/* t must outlive the detokenizer. */
int txlm_detok_create(const txlm_tokenizer *t, txlm_detok **out, txlm_err *err);
/* Token id -> *piece (NUL-terminated, *len bytes, possibly empty; valid
 * until the next call). An id out of range changes nothing. */
int txlm_detok_push(txlm_detok *d, int32_t id, const char **piece, size_t *len, txlm_err *err);
/* The end of the stream: what was held back; then a new stream starts. */
int txlm_detok_flush(txlm_detok *d, const char **piece, size_t *len, txlm_err *err);
/* A new stream, dropping what was held back. */
void txlm_detok_reset(txlm_detok *d);
void txlm_detok_free(txlm_detok *d);
/* What the tests count instead of timing the detokenizer: the bytes its
 * stages have examined since it was made (each byte at each stage, the
 * held bytes at each look at them), and the bytes of its buffers. A cost
 * per token that grows with the stream shows in the first, a line held
 * whole in the second. */
uint64_t txlm_detok_work(const txlm_detok *d);
size_t txlm_detok_held(const txlm_detok *d);

#endif
