/* A workspace: what a pass needs while it runs, for up to max_streams
 * streams of up to max_seg rows each, one after another in its row
 * buffers: the token ids and targets, every activation, the attention's
 * scratch, the step buffer (the values written before each submission,
 * shaders/contract.h), the output layer's blocks, the recorder with its
 * kept recordings and their keys. A batch is one; a session makes its own
 * for its lone calls (session.c). Nothing in it outlives a call: what a
 * stream keeps is the stream's (stream.h). */
#ifndef TXLM_WORKSPACE_H
#define TXLM_WORKSPACE_H

#include "replay.h"
#include "stream.h"

typedef struct txlm_workspace {
    txlm_model *m;
    uint32_t max_streams;
    uint32_t max_seg;        /* longest segment of one stream */
    uint32_t rows;           /* max_streams * max_seg */
    uint32_t out_rows;       /* output rows per block: everything of the adaptive softmax fits one binding */
    uint64_t scratch;        /* bytes of the attention's scratch: a stream's at most, or one shared dispatch's */
    txlm_rec rec;
    txlm_ops ops;
    txlm_replay replay;      /* the keys of its kept recordings (replay.h) */
    float *host_lp;          /* [n_token] one output row on the host, for a draw */

    txlm_buf ids;            /* [rows] int32, host-written */
    txlm_buf targets;        /* [rows] int32 tokens to score, host-written: the output layer writes only their columns */
    txlm_buf rowmap;         /* [rows] int32, host-written: scored rows grouped by the tail cluster of their target */
    txlm_buf step_host;      /* the step words, host-written before each submission (shaders/contract.h) */
    txlm_buf step;           /* the same in device memory, copied by each recording first */
    txlm_buf kv_seg;         /* [rows, 2*H*dh] the pass's new keys | values on their way into the rings */
    txlm_buf sync;           /* [TXLM_SYNC_WORDS] uint: counts of finished workgroups (ops.h) */
    txlm_buf hidden[2];      /* [rows, d] the hidden states: layer inputs/outputs, alternating; pre-norm:
                              * [2 * rows, d], LN_attn of them after them (layers.c) */
    txlm_buf z;              /* [rows, d] last layer's output */
    txlm_buf xn;             /* [rows, d] the rows asked for, gathered on their way to z's front */
    txlm_buf q;              /* [rows, H*dh] the pass's queries */
    txlm_buf scores;         /* scratch bytes: scores, or partial sums of the split attention */
    txlm_buf attn;           /* [rows, H*dh] */
    txlm_buf a;              /* [rows, d] after attention; pre-norm: [2 * rows, d], LN_ff(a) after it */
    txlm_buf ffh;            /* [rows, d_inner] */
    txlm_buf emb_tmp;        /* [rows, max cluster dim] gathered embedding rows */
    /* the adaptive softmax, processed in blocks of out_rows rows */
    txlm_buf zsel;           /* [out_rows, d] rows of z whose targets fall in one tail cluster */
    txlm_buf zp;             /* [out_rows, max cluster dim] */
    txlm_buf head;           /* [out_rows, cutoff0 + n_cutoffs] logits */
    txlm_buf head_lp;        /* same, log-probabilities */
    txlm_buf tail;           /* [out_rows, largest cluster] logits */
    txlm_buf out;            /* [out_rows, n_token] log-probabilities (host-visible) */
} txlm_workspace;

/* A workspace for `streams` streams settled as `like`. */
int txlm_workspace_open(txlm_model *m, const txlm_session *like, uint32_t streams, txlm_workspace **out, txlm_err *err);
void txlm_workspace_close(txlm_workspace *w);
/* The device bytes such a workspace takes, nothing allocated. */
int txlm_workspace_plan(txlm_model *m, const txlm_session *like, uint32_t streams, uint64_t *bytes, txlm_err *err);
/* Device bytes of the buffers w holds now. */
uint64_t txlm_workspace_bytes(const txlm_workspace *w);
/* Room for the attention of streams whose scratch is at most `need`
 * bytes (txlm_stream_scratch): a stream settled with a longer memory than
 * the workspace's needs a larger one, made now (and the kept recordings,
 * which bind the old one, dropped). */
int txlm_workspace_fit(txlm_workspace *w, uint64_t need, txlm_err *err);

/* Submits the recorded command buffer under the context's queue lock. */
int txlm_workspace_submit(txlm_workspace *w, txlm_err *err);

/* Records the copy of `rows` rows of `ld` floats from row a of src to row b of dst. */
void txlm_copy_rows(txlm_rec *rec, const txlm_buf *src, uint32_t a, const txlm_buf *dst, uint32_t b, uint32_t rows,
                    uint32_t ld);
static inline txlm_arg txlm_rows_of(txlm_buf *b, uint32_t row, uint32_t ld) { return txlm_arg_of(b, row * ld, ld); }

#endif
