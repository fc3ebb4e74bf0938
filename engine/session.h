/* A session: one text stream's memory and the scratch buffers of its
 * forward pass, all on the device. */
#ifndef TXLM_SESSION_H
#define TXLM_SESSION_H

#include "model.h"
#include "ops.h"
#include "replay.h"

struct txlm_session {
    txlm_model *m;
    txlm_rec rec;
    txlm_ops ops;

    /* settings */
    uint32_t mem_len;        /* M: rows of memory kept per layer */
    uint32_t max_seg;        /* S: longest segment */
    int32_t clamp_len;       /* <= 0: none */
    uint32_t same_length;
    uint32_t max_dist;       /* largest relative distance with its own position row */
    uint32_t zero_memory;    /* HF's start: an empty memory becomes mem_len rows of zero inputs (zero_memory.c) */
    uint32_t rows_only;      /* a batch's shared rows (batch.c): row buffers only, no memory of its own */
    uint32_t streams;        /* rows_only: the batch's streams (their entries in the step buffer, attn_streams.h) */
    uint64_t attn_scratch;   /* rows_only: bytes of partial results of one dispatch of several streams' attention */
    uint64_t serial;         /* unique among the process's sessions (a batch's kept recordings name them) */
    int busy;                /* inside a batch call (batch.c) */

    /* state */
    uint32_t mlen;           /* rows of memory held now */
    uint32_t kv_base;        /* ring row of kv[n] holding memory row 0: the memory slides by moving it */
    uint32_t rk_rows;        /* position-key rows computed so far (per layer) */
    uint32_t z_rows;         /* rows of z (last layer output) from the last segment */
    uint64_t rng;            /* sampler state */
    uint64_t segments;       /* segments fed since creation or the last reset (named in errors) */
    float *host_lp;          /* [n_token] host copy of one output row, for sampling */

    /* device buffers */
    txlm_buf ids;            /* [S] int32, host-written */
    txlm_buf targets;        /* [S] int32 tokens to score, host-written: the output layer writes only their columns */
    txlm_buf rowmap;         /* [S] int32, host-written: scored rows grouped by the tail cluster of their target */
    txlm_buf *kv;            /* per layer, a ring of [kv_rows, 2*H*dh] keys | values: memory rows from kv_base, then
                                this segment's, wrapping past the last row to row 0 */
    uint32_t kv_rows;        /* M + S: the memory and a longest segment, wherever they start */
    txlm_buf kv_seg;         /* [S, 2*H*dh] a segment's keys | values when they wrap past the ring's end */
    txlm_buf sync;           /* [TXLM_SYNC_WORDS] uint: counts of finished workgroups (ops.h) */
    txlm_buf hidden[2];      /* [S, d] the hidden states: layer inputs/outputs, alternating */
    txlm_buf z;              /* [S, d] last layer's output */
    txlm_buf xn;             /* [S, d] pre-norm LN(h) */
    txlm_buf q;              /* [S, H*dh] this segment's queries */
    txlm_buf scores;         /* [H, S, M + S] */
    txlm_buf attn;           /* [S, H*dh] */
    txlm_buf a;              /* [S, d] after attention */
    txlm_buf ffin;           /* [S, d] pre-norm LN(a) */
    txlm_buf ffh;            /* [S, d_inner] */
    txlm_buf emb_tmp;        /* [S, max cluster dim] gathered embedding rows */
    txlm_gpu_tensor pos;     /* [max_dist + 1, d] sinusoids by distance */
    txlm_gpu_tensor *rk;     /* per layer [max_dist + 1, H*dh]: pos · Wr^T */

    txlm_replay replay;      /* kept recordings: their keys and the step buffer (replay.h) */

    /* adaptive softmax, processed in blocks of out_rows rows */
    uint32_t out_rows;
    txlm_buf zsel;           /* [out_rows, d] rows of z whose targets fall in one tail cluster */
    txlm_buf zp;             /* [out_rows, max cluster dim] */
    txlm_buf head;           /* [out_rows, cutoff0 + n_cutoffs] logits */
    txlm_buf head_lp;        /* same, log-probabilities */
    txlm_buf tail;           /* [out_rows, largest cluster] logits */
    txlm_buf out;            /* [out_rows, n_token] log-probabilities (host-visible) */

    /* attention capture, off unless asked for (txlm_session_capture_attention) */
    int capture;             /* 0 off, 1 probabilities, 2 probabilities and the four score terms */
    txlm_buf *cap_probs;     /* per layer [H, S, M + S], host-visible */
    txlm_buf *cap_terms;     /* per layer [4, H, S, M + S], host-visible */
    uint32_t cap_qlen, cap_mlen;
};

/* The buffers a session holds once, not per layer (close and txlm_session_memory walk them). */
#define TXLM_SESSION_FIXED_BUFS 24
size_t txlm_session_fixed_bufs(txlm_session *s, txlm_buf **out);

int txlm_session_open(txlm_model *m, const txlm_session_options *opts, txlm_session **out, txlm_err *err);
/* The row buffers, recorder and ops of a pass over `rows` rows of up to
 * `streams` streams, with no memory of its own: a batch's work rows. */
int txlm_session_open_rows(txlm_model *m, uint32_t rows, uint32_t streams, uint64_t attn_scratch, txlm_session **out,
                           txlm_err *err);
void txlm_session_close(txlm_session *s);
/* What a segment's caller wants back, for rows [first_row, n): all
 * log-probabilities or those of the targets (not both). */
typedef struct txlm_out_req {
    uint32_t first_row;
    float *logprobs;           /* all n_token log-probabilities per row, or NULL */
    const int32_t *targets;    /* one token per row to score, or NULL */
    float *target_lp;          /* receives log p(target) per row */
} txlm_out_req;

/* session_layout.c: allocates the output layer's buffers if not yet. */
int txlm_session_need_out(txlm_session *s, txlm_err *err);

/* zero_memory.c: the memory as mem_len rows of zero layer inputs
 * (keys and values of 0, or of LN(0) = the LayerNorm bias with pre-norm). */
int txlm_session_zero_fill(txlm_session *s, txlm_err *err);

/* forward.c: every token and target in the vocabulary, the segment 1..max_seg long. */
int txlm_check_segment(const txlm_session *s, const int32_t *tokens, uint32_t qlen, const txlm_out_req *req,
                       txlm_err *err);
/* forward.c: one segment through the model; updates the memory. */
int txlm_forward(txlm_session *s, const int32_t *tokens, uint32_t n, const txlm_out_req *req, txlm_err *err);

/* What one recording computes: the rows of one or more streams, each a
 * session with its own memory, one after another in w's row buffers. */
typedef struct txlm_pass_stream {
    txlm_session *s;
    uint32_t row0, qlen;     /* its rows [row0, row0 + qlen) of the pass */
} txlm_pass_stream;
typedef struct txlm_pass {
    txlm_session *w;         /* row buffers, recorder and ops: the session itself when alone, a batch's shared rows */
    struct txlm_attn_plan *attn;       /* several streams attending in shared dispatches (attn_streams.h), or NULL */
    const txlm_session *rk_from;       /* with attn: the stream whose position keys serve all (the most rows) */
    int all_clusters;                  /* embed through every cluster, not only those of the tokens (replay.h) */
    const txlm_pass_stream *st;
    uint32_t n, rows;        /* streams, rows of all of them */
    const int32_t *tokens;   /* [rows], already in w->ids */
} txlm_pass;
/* The attention shape of s's next segment of qlen tokens; alone: its
 * memory's first ring row through the step buffer (kept recordings). */
txlm_attn_shape txlm_stream_shape(const txlm_session *s, uint32_t qlen, int alone);
/* Records the pass's commands through the last layer, into w->z rows [0, rows). */
void txlm_record_layers(const txlm_pass *p);
/* Copies qlen keys|values rows from row src_row of src into layer n's ring
 * of s after its memory (wrapping past the ring's last row). */
void txlm_ring_put(txlm_rec *rec, txlm_session *s, uint32_t n, const txlm_buf *src, uint32_t src_row, uint32_t qlen);
/* Records the copy of `rows` rows of `ld` floats from row a of src to row b of dst. */
void txlm_copy_rows(txlm_rec *rec, const txlm_buf *src, uint32_t a, const txlm_buf *dst, uint32_t b, uint32_t rows,
                    uint32_t ld);
/* A segment of qlen tokens recorded: the memory moves on. */
void txlm_segment_fed(txlm_session *s, uint32_t qlen);
/* The one reset (forward.c): the memory, the last output row and the
 * captured attention's shape forgotten. A new text (failed 0,
 * txlm_session_reset) counts segments from 0 again. After a failed pass
 * (failed 1: the device may have run part of it, or it computed NaN) the
 * memory is not continued from a half-updated one, the position keys it
 * may have half-written are recomputed, and the count goes on, as the
 * errors name segments. */
void txlm_session_forget(txlm_session *s, int failed);

/* Allocates (or frees, mode 0) the capture buffers. */
int txlm_session_set_capture(txlm_session *s, int mode, txlm_err *err);

/* Submits the recorded command buffer under the context's queue lock. */
int txlm_session_submit(txlm_session *s, txlm_err *err);
/* Copies the first n floats of the output buffer to dst. */
int txlm_session_read_out(txlm_session *s, float *dst, size_t n, txlm_err *err);
/* TXLM_ERR_NONFINITE naming the segment, position and token when any of
 * the n log-probabilities read back for `rows` rows of the last segment
 * (row r0 first, n / rows per row) is NaN or infinite. A row's values are
 * those of tokens first_id, first_id + 1, ..., or, with targets, the one
 * of targets[row - r0]. Costs one integer pass over what was read back
 * (nonfinite.h), nothing next to the copy. */
int txlm_session_check_finite(const txlm_session *s, const float *lp, uint64_t n, uint32_t r0, uint32_t rows,
                              uint32_t first_id, const int32_t *targets, txlm_err *err);
/* The error itself: `what` ("token 17") at `position` of the last segment has value v. */
int txlm_session_nonfinite(const txlm_session *s, uint64_t position, const char *what, float v, txlm_err *err);

/* adaptive_softmax.c: record the output layer for rows [r0, r0+rows) of z. */
/* Scoring: the target of each row, on the device and on the host. */
typedef struct txlm_out_pick {
    txlm_arg targets;          /* int32 per row, in s->targets */
    const int32_t *host;       /* the same tokens */
} txlm_out_pick;
/* Log-probabilities into s->out, all of them, or with pick only each
 * row's target column: scoring needs nothing else, writing the whole
 * vocabulary per row costs more than computing it, and a tail cluster is
 * computed only for the rows whose targets fall in it (it uploads their
 * row numbers to s->rowmap). */
int txlm_out_rows(txlm_session *s, uint32_t r0, uint32_t rows, const txlm_out_pick *pick, txlm_err *err);
/* Row stride of n logits in s->head, s->head_lp and s->tail. */
uint32_t txlm_logit_ld(uint32_t n);
/* The head's log-probabilities (shortlist, then one per tail cluster) into
 * s->head_lp and, for the first n_write columns, into dst. Requires cutoffs. */
void txlm_out_head(txlm_session *s, uint32_t r0, uint32_t rows, txlm_arg dst, uint32_t n_write, const txlm_arg *pick);
/* Cluster c's log-probabilities within the cluster (plus the head's
 * log-probability of the cluster when add_head) into dst. */
void txlm_out_tail(txlm_session *s, uint32_t c, uint32_t r0, uint32_t rows, txlm_arg dst, int add_head,
                   const txlm_arg *pick);
/* The same for `rows` rows of z given (a batch's gathered rows), within the cluster. */
void txlm_out_tail_rows(txlm_session *s, uint32_t c, txlm_arg z, uint32_t rows, txlm_arg dst);

/* Position-key rows (distances 0 .. the longest, clamped) that s's next
 * segment of qlen tokens reads. */
static inline uint32_t txlm_rk_rows_needed(const txlm_session *s, uint32_t qlen)
{
    uint32_t longest = s->mlen + qlen - 1;
    return (longest < s->max_dist ? longest : s->max_dist) + 1;
}

/* The ring row of this segment's first key, after the memory's. */
static inline uint32_t txlm_seg_row(const txlm_session *s) { return (s->kv_base + s->mlen) % s->kv_rows; }

#endif
