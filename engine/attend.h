/* Attention of a pass (attend.c): where each stream's attention runs is
 * decided here and nowhere else. The streams whose kernel reads its shape
 * from the step buffer share dispatches, up to TXLM_STREAM_SLOTS of one
 * kernel a dispatch on GPUs and one a dispatch on CPU devices
 * (attn_streams.h); a stream the three-pass attention takes (a head size
 * the vector kernels do not take, or its attention captured) attends
 * alone. Either way a stream takes the kernel it takes in any other pass,
 * so its numbers do not depend on what it is batched with. Keys and
 * values reach the rings by one route per pass (txlm_kv_route). */
#ifndef TXLM_ATTEND_H
#define TXLM_ATTEND_H

#include "pass.h"

/* The routes of p's attention: every stream's entry for the step buffer,
 * the shared dispatches, the stream whose position keys they read, the
 * route of the keys and values. */
int txlm_attend_plan(txlm_pass *p, txlm_err *err);

/* Layer n, from c (the layer's input rows, after LN_attn with pre-norm):
 * q = c · Wq^T into w->q and k, v = c · [Wk; Wv]^T into each stream's
 * ring after its memory (one product), then every stream's
 * softmax(((q + u)·k + (q + v)·rk[dist]) / sqrt(dh), masked) · v into its
 * rows of w->attn. */
void txlm_attend(const txlm_pass *p, uint32_t n, txlm_arg c);

#endif
