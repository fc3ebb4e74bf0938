/* Attention of the streams of a pass in shared dispatches
 * (docs/batching.md): each stream over its own ring, with its own memory
 * fill and masks, its keys and values in a slot of binding 1 and its
 * shape in an entry of the step buffer (shaders/contract.h,
 * TXLM_ENTRY_*). A stream takes the kernel its segment takes in any pass
 * (attention.h), so its numbers do not depend on the others; streams of
 * the same kernel and the same position-key table (its rows: the same
 * clamp_max) share dispatches of up to TXLM_STREAM_SLOTS (or one each
 * where the device cannot bind that many), reading the position keys of
 * the group's stream with the most rows computed. A stream the three-pass
 * attention takes has an entry too (kv_put and its own dispatch read it)
 * but attends alone (attend.c). The entries are written before each
 * submission, so a kept recording serves wherever the rings have turned
 * to. */
#ifndef TXLM_ATTN_STREAMS_H
#define TXLM_ATTN_STREAMS_H

#include "attention.h"

/* A stream of the pass, as the plan takes it. */
typedef struct txlm_attn_stream {
    txlm_attn_shape shape;  /* its own; kv_row0: the ring row of its memory row 0 */
    uint32_t row0;          /* its first row among the pass's rows (queries, outputs, the k|v product) */
    uint64_t own_scratch;   /* its stream's scratch bytes (txlm_stream_scratch): its kernel choice sees these */
    txlm_view kv;           /* a ring of its (any layer's: their sizes agree), for the texel checks */
    txlm_view rk;           /* its position keys (any layer's: their sizes agree), for the texel checks */
    uint32_t rk_rows;       /* position-key rows it has computed once this pass has grown them */
    int probs;              /* its probabilities are kept (attention capture): the three-pass attention */
} txlm_attn_stream;

/* One dispatch: table entries [first, first + n), all of one choice and
 * one clamp_max. Every attention kernel clamps each position row it reads
 * to its stream's clamp_max (masked keys included), and every stream of
 * the group has the same clamp_max, whose table of clamp_max + 1 rows is
 * what the bound stream allocated: no read passes the buffer. The bound
 * stream has computed the most rows of the group, so every row a stream
 * reads for a key it sees is computed (rows are the same bits in every
 * stream: layers.c, TXLM_LIN_BLOCK). */
typedef struct txlm_attn_group {
    txlm_attn_choice c;     /* the choice of every stream of the group (grid: the largest of each) */
    txlm_kernel_id k;       /* c.k, or its twin of TXLM_STREAM_SLOTS streams */
    uint32_t first, n, max_qlen;
    uint32_t rk_stream;     /* the stream whose position keys the dispatch binds */
} txlm_attn_group;

typedef struct txlm_attn_plan {
    uint32_t n;             /* streams */
    uint32_t *order;        /* [n] entry e is stream order[e] (the shared ones first) */
    uint32_t *entry;        /* [n] stream i's entry */
    uint32_t *words;        /* [TXLM_ENTRY_TABLE + n * TXLM_ENTRY_WORDS]: what the step buffer gets (contract.h) */
    txlm_attn_choice *choice; /* [n] stream i's kernel */
    unsigned char *alone;   /* [n] stream i attends in a dispatch of its own (three-pass) */
    txlm_attn_group *groups;
    uint32_t n_groups, n_alone;
    txlm_attn_push push;    /* what every stream shares (H, dh, scale, rk_off) */
    txlm_view *kv;          /* [n] room for a layer's rings, by stream (txlm_attention_streams_args.kv) */
    txlm_view *rk;          /* [n] room for a layer's position keys, by stream (txlm_attention_streams_args.rk) */
} txlm_attn_plan;

/* The plan for n streams over a pass whose queries are q, each stream's
 * position keys from element rk_off of its st[i].rk, layer 0's biases,
 * and the scratch (partial results of one dispatch at a time, at least
 * every stream's own_scratch). 1 and a plan; 0 (nothing allocated) when
 * out of host memory. */
int txlm_attn_plan_make(const txlm_ops *o, const txlm_attn_stream *st, uint32_t n, txlm_view q, uint32_t rk_off,
                        txlm_view rw, txlm_view rr, uint64_t scratch_bytes, txlm_attn_plan *p);
void txlm_attn_plan_free(txlm_attn_plan *p);

/* One layer's attention of every stream of the plan: queries q and
 * outputs out in the pass's rows, keys and values kv[stream], position
 * keys rk[stream]. */
typedef struct txlm_attention_streams_args {
    const txlm_attn_plan *plan;
    txlm_view q, out, scratch;
    const txlm_view *kv;    /* [n] each stream's ring of this layer */
    const txlm_view *rk;    /* [n] each stream's position keys of this layer */
    const txlm_gpu_tensor *r_w_bias, *r_r_bias;
} txlm_attention_streams_args;
void txlm_op_attention_streams(txlm_ops *o, const txlm_attention_streams_args *a);

/* Each stream's rows [row0, row0 + qlen) of src (a [rows, 2*H*dh] k|v
 * product) into its ring kv[stream] after its memory. */
void txlm_op_kv_put_streams(txlm_ops *o, const txlm_attn_plan *p, txlm_view src, const txlm_view *kv);

#endif
