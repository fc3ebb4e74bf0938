/* A pass: one segment of each of n >= 1 streams through the model in one
 * recording and one submission, in a workspace (workspace.h). The rows
 * of all streams, one stream after another, go through the embedding,
 * the projections and the feed-forward together (a product over many
 * rows reads each weight once for all of them); attention runs per
 * stream over its own ring (attend.h); the output layer runs over the
 * rows asked for. A lone feed is a pass of one stream (session.c), a
 * batch's feed one of several (batch.c): the same driver, the same
 * commands for the same streams (docs/architecture.md, "The walk from a
 * feed to a dispatch"). */
#ifndef TXLM_PASS_H
#define TXLM_PASS_H

#include "attn_streams.h"
#include "blame.h"
#include "workspace.h"

typedef struct txlm_pass_stream {
    txlm_session *s;
    const txlm_stream_feed *f; /* its request: the rows asked for and where they go */
    uint32_t row0, qlen;       /* its rows [row0, row0 + qlen) of the pass */
    uint32_t want;             /* rows asked for: its last `want` (from f->first_row; 0: none) */
    uint32_t out0;             /* its first among the pass's output rows */
} txlm_pass_stream;

/* How the pass's new keys and values reach the rings (attend.c). */
typedef enum txlm_kv_route {
    TXLM_KV_DIRECT, /* all rows one stream's, not wrapping past its ring's end: the product writes them there */
    TXLM_KV_PUT,    /* a product into kv_seg, kv_put into each ring where its entry says */
    TXLM_KV_COPY,   /* the same with copy commands (head sizes kv_put cannot move in vec4s) */
} txlm_kv_route;

typedef struct txlm_pass {
    txlm_workspace *w;
    txlm_pass_stream *st;
    uint32_t n, rows;          /* streams, rows of all of them */
    int32_t *tokens;           /* [rows], in w->ids too */
    int32_t *targets;          /* [out] when scoring, in w->targets too */
    uint32_t out;              /* output rows: the rows asked for, stream after stream */
    uint32_t out_z;            /* z's row holding output row 0: the first asked for, or 0 once gathered */
    int gather;                /* the rows asked for are not one run of z: gathered to its front first */
    int score;                 /* every stream asking for output scores targets */
    txlm_blame *blame;         /* a batch's call: errors name their stream ("stream i: "); NULL: a lone call's */
    /* attention (attend.c) */
    txlm_attn_plan attn;       /* the streams' entries in the step buffer, their shared dispatches */
    txlm_kv_route kv;
    /* replay.h */
    int all_clusters;          /* embed through every cluster: a kept pass's commands do not depend on its tokens */
} txlm_pass;

/* f[0..n) through w (checked by the caller: segments, targets, no two
 * the same stream, n <= w->max_streams, each n <= w->max_seg). A device
 * failure forgets every stream's memory; a stream's NaN or infinity fails
 * the call naming the first such stream (with a blame: "stream i: ") and
 * forgets its memory, the others' outputs are still written. */
int txlm_pass_feed(txlm_workspace *w, const txlm_stream_feed *f, uint32_t n, txlm_blame *blame, txlm_err *err);

/* layers.c: the pass's commands through the last layer, into w->z rows [0, rows). */
void txlm_record_layers(const txlm_pass *p);

#endif
