/* The output layer: the adaptive log-softmax over a workspace's z rows
 * (adaptive_softmax.c), and a pass's rows asked for, computed in blocks
 * that fit one binding and read back to each stream's caller (output.c). */
#ifndef TXLM_OUTPUT_H
#define TXLM_OUTPUT_H

#include "pass.h"

/* Scoring: the target of each row, on the device and on the host. */
typedef struct txlm_out_pick {
    txlm_arg targets;          /* int32 per row, in w->targets */
    const int32_t *host;       /* the same tokens */
} txlm_out_pick;

/* Log-probabilities of z rows [r0, r0 + rows) into w->out, all of them,
 * or with pick only each row's target column: scoring needs nothing else,
 * writing the whole vocabulary per row costs more than computing it, and
 * a tail cluster is computed only for the rows whose targets fall in it
 * (it uploads their row numbers to w->rowmap). rows <= w->out_rows. */
int txlm_out_rows(txlm_workspace *w, uint32_t r0, uint32_t rows, const txlm_out_pick *pick, txlm_err *err);
/* The same into out (n_token floats a row) instead of w->out. */
int txlm_out_rows_to(txlm_workspace *w, uint32_t r0, uint32_t rows, const txlm_out_pick *pick, txlm_arg out, txlm_err *err);
/* Row stride of n logits in w->head, w->head_lp and w->tail. */
uint32_t txlm_logit_ld(uint32_t n);
/* The head's log-probabilities (shortlist, then one per tail cluster) of
 * z rows [r0, r0 + rows) into w->head_lp and, for the first n_write
 * columns, into dst. Requires cutoffs. */
void txlm_out_head(txlm_workspace *w, uint32_t r0, uint32_t rows, txlm_arg dst, uint32_t n_write, const txlm_arg *pick);
/* Cluster c's log-probabilities within the cluster for `rows` rows of z
 * given (a draw's gathered rows) into dst. */
void txlm_out_tail_rows(txlm_workspace *w, uint32_t c, txlm_arg z, uint32_t rows, txlm_arg dst);

/* Recorded after the layers: each stream's last row into its own `last`,
 * and the rows asked for gathered to z's front where they are not one run. */
void txlm_output_rows(const txlm_pass *p);
/* The pass's output rows in blocks, the first riding in its command
 * buffer (begun and recorded up to here), which this submits; each block
 * read back to the streams it holds (txlm_pass_feed's errors). */
int txlm_output_read(const txlm_pass *p, txlm_err *err);

#endif
