/* Relative attention's kernels: which one a stream's shape takes and
 * how its grid and partial results are laid out, shared by one stream's
 * dispatch (attention.c, txlm_op_attention) and several streams' in one
 * (attn_streams.c). A stream gets the same kernel either way, so its
 * numbers do not depend on what it is batched with. */
#ifndef TXLM_ATTENTION_H
#define TXLM_ATTENTION_H

#include "ops.h"

/* The push constants (txlm_attn_push) are shaders/contract.h's. */
txlm_attn_push txlm_attn_push_of(const txlm_attn_shape *s, uint32_t rk_off);

typedef enum txlm_attn_path {
    TXLM_ATTN_TILE,       /* GPUs: 16 queries a workgroup, key tiles in workgroup memory (maybe split into runs) */
    TXLM_ATTN_SPLIT,      /* up to 4 queries: keys split into runs, merged after */
    TXLM_ATTN_QUERY,      /* more queries: one pass over the keys per query or pair of queries */
    TXLM_ATTN_THREE_PASS, /* scores, softmax, P·V: any head size, and the probabilities kept */
} txlm_attn_path;

/* The kernel a shape takes and what its dispatch needs. */
typedef struct txlm_attn_choice {
    txlm_attn_path path;
    txlm_kernel_id k;
    uint32_t splits;      /* TILE: runs of keys (1: none) */
    uint32_t run;         /* SPLIT: keys per run */
    int merge_after;      /* runs merged by an attn_merge dispatch after it */
    int merged;           /* SPLIT, TILE: the kernel's last run merges (its counts in ops->sync) */
    uint64_t scratch;     /* bytes of its partial results */
    uint32_t sync;        /* words of counts after word 0 (merged) */
    uint32_t gx, gy, gz;  /* its grid */
} txlm_attn_choice;

/* The choice for shape s (probs: the probabilities are kept; tex: the
 * inputs can be read as texels; scratch_bytes: what the scratch holds). */
txlm_attn_choice txlm_attn_choose(const txlm_ops *o, const txlm_attn_shape *s, int probs, int tex, uint32_t rk_off,
                                  uint64_t scratch_bytes);

/* One stream's attention by the kernel c chose for it (txlm_op_attention
 * chooses, then dispatches this way). */
void txlm_attn_dispatch(txlm_ops *o, const txlm_attention_args *a, const txlm_attn_choice *c);

/* The most partial results a stream's kernel takes (txlm_attn_choice.scratch)
 * with up to max_qlen queries after mlen memory rows, its session's scratch
 * being own_scratch bytes. */
uint64_t txlm_attn_scratch_most(const txlm_vk *vk, uint32_t H, uint32_t dh, uint32_t mlen, uint32_t max_qlen,
                                uint64_t own_scratch);

/* attn_merge over the runs of ps's stream(s) (ps.run, or ps.splits runs),
 * for up to qlen queries of `streams` streams of a table. */
void txlm_attn_merge(txlm_ops *o, const txlm_attn_push *ps, txlm_view scratch, txlm_view out, uint32_t qlen,
                     uint32_t streams);

#endif
