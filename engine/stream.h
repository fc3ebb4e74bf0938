/* A stream: what persists of one text between calls (a session, the
 * public txlm_session). Its settings, its memory ring of keys and values
 * per layer, its position keys, its lengths, its last output row, its
 * sampler and its claim. Nothing a pass needs only while it runs: that is
 * a workspace's (workspace.h), shared by the streams of a batch or made
 * for a session's own lone calls (session.h). */
#ifndef TXLM_STREAM_H
#define TXLM_STREAM_H

#include "model.h"
#include "ops.h"

struct txlm_workspace;

struct txlm_session {
    txlm_model *m;

    /* settings */
    uint32_t mem_len;        /* M: rows of memory kept per layer */
    uint32_t max_seg;        /* S: longest segment */
    int32_t clamp_len;       /* <= 0: none */
    uint32_t same_length;
    uint32_t max_dist;       /* largest relative distance with its own position row */
    uint32_t zero_memory;    /* HF's start: an empty memory becomes mem_len rows of zero inputs (zero_memory.c) */
    uint32_t kv_rows;        /* M + S: the memory and a longest segment, wherever they start */
    uint64_t scratch;        /* bytes of its attention's scratch at most (txlm_stream_scratch): its kernel choice sees these */
    uint64_t serial;         /* unique among the process's streams (kept recordings name them) */
    int busy;                /* inside a call (api/session_claim.c) */

    /* state */
    uint32_t mlen;           /* rows of memory held now */
    uint32_t kv_base;        /* ring row of kv[n] holding memory row 0: the memory slides by moving it */
    uint32_t rk_rows;        /* position-key rows computed so far (per layer) */
    uint32_t z_rows;         /* rows of the last segment (0: none fed since the last reset); its last is in `last` */
    uint64_t rng;            /* sampler state */
    uint64_t segments;       /* segments fed since creation or the last reset (named in errors) */

    /* device buffers */
    txlm_buf *kv;            /* per layer, a ring of [kv_rows, 2*H*dh] keys | values: memory rows from kv_base, then
                                the segment's, wrapping past the last row to row 0 */
    txlm_gpu_tensor pos;     /* [max_dist + 1, d] sinusoids by distance */
    txlm_gpu_tensor *rk;     /* per layer [max_dist + 1, H*dh]: pos · Wr^T */
    txlm_buf last;           /* [d] the last output row of the last segment: sampling, next token, saved states */
    txlm_buf next_vk;        /* [n_token] the next token's log-probabilities left on the device for the program
                                (txlm_session_next_logprobs_vk), made at the first such call */

    /* attention capture, off unless asked for (txlm_session_capture_attention) */
    int capture;             /* 0 off, 1 probabilities, 2 probabilities and the four score terms */
    txlm_buf *cap_probs;     /* per layer [H, S, M + S], host-visible */
    txlm_buf *cap_terms;     /* per layer [4, H, S, M + S], host-visible */
    uint32_t cap_qlen, cap_mlen;

    struct txlm_workspace *own; /* the workspace of its lone calls, made at the first (session.c) */
};

/* A stream's settings from the options and the model, nothing allocated. */
int txlm_stream_settle(txlm_session *s, txlm_model *m, const txlm_session_options *opts, txlm_err *err);
/* A settled stream with its ring, position keys and last row. */
int txlm_stream_open(txlm_model *m, const txlm_session_options *opts, txlm_session **out, txlm_err *err);
void txlm_stream_close(txlm_session *s);
/* Bytes of the memory (every layer's ring and position keys, the
 * sinusoids), and of the rest a stream holds (its last row). */
uint64_t txlm_stream_ring_bytes(const txlm_session *s);
uint64_t txlm_stream_rest_bytes(const txlm_session *s);
/* The scratch bytes of s's attention at most: the scores of the
 * three-pass attention, or the partial sums of the split attention for up
 * to 4 queries, whichever is more. */
uint64_t txlm_stream_scratch(const txlm_session *s);

/* The one reset: the memory, the last output row and the captured
 * attention's shape forgotten. A new text (failed 0, txlm_session_reset)
 * counts segments from 0 again. After a failed pass (failed 1: the device
 * may have run part of it, or it computed NaN) the memory is not
 * continued from a half-updated one, the position keys it may have
 * half-written are recomputed, and the count goes on, as the errors name
 * segments. */
void txlm_session_forget(txlm_session *s, int failed);
/* A segment of qlen tokens recorded: the memory moves on. */
void txlm_stream_fed(txlm_session *s, uint32_t qlen);

/* The attention shape of s's next segment of qlen tokens, its memory's
 * first ring row at kv_base. */
txlm_attn_shape txlm_stream_shape(const txlm_session *s, uint32_t qlen);

/* Every token and target in the vocabulary, the segment 1..max_seg long
 * (targets: one per row from first_row, or NULL). */
int txlm_check_segment(const txlm_session *s, const int32_t *tokens, uint32_t qlen, uint32_t first_row,
                       const int32_t *targets, txlm_err *err);
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

/* zero_memory.c: the memory as mem_len rows of zero layer inputs
 * (keys and values of 0, or of LN(0) = the LayerNorm bias with pre-norm). */
int txlm_session_zero_fill(txlm_session *s, txlm_err *err);

/* Allocates (or frees, mode 0) the capture buffers. */
int txlm_session_set_capture(txlm_session *s, int mode, txlm_err *err);

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
