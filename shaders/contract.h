/* What the engine (C) and the shaders (GLSL) agree on, declared once and
 * read by both: every push-constant block, the flag bits of the products,
 * the bindings the recorder fills, the matrix-unit kernels' workgroup and
 * specialization constants, and the words of the step buffer (the
 * values written before each submission, step.glsl) with the layout of a
 * stream's entry among them. glslang defines VULKAN; a C compiler sees
 * the same structs with fixed-width types (every member 4 bytes, so the
 * two layouts agree). */
#ifndef TXLM_CONTRACT_H
#define TXLM_CONTRACT_H

#ifdef VULKAN
#define TXLM_U32 uint
#define TXLM_I32 int
#define TXLM_STRUCT(name) struct name
#else
#include <stdint.h>
#define TXLM_U32 uint32_t
#define TXLM_I32 int32_t
#define TXLM_STRUCT(name) typedef struct name name; struct name
#endif

/* ---- bindings ---------------------------------------------------------- */
/* The per-submission values, in the kernels whose manifest line says step. */
#define TXLM_STEP_BINDING 8
/* Streams one dispatch of a several-streams variant (_x8 in the manifest)
 * serves: binding 1 has a slot per stream, slot 0 at binding 1 and slot s
 * at TXLM_SLOT_BINDING + s - 1 (attn_io.glsl). */
#define TXLM_STREAM_SLOTS 8
#define TXLM_SLOT_BINDING 9
/* Bytes of push constants every kernel's layout declares. */
#define TXLM_PUSH_BYTES 128

/* ---- the products (linear_out.glsl, linear.comp; engine/ops.c) --------- */
#define TXLM_LINF_BIAS 1u      /* add B[b_off + n] */
#define TXLM_LINF_RELU 2u      /* max(y, 0) after alpha */
#define TXLM_LINF_RESIDUAL 4u  /* add R[r_off + m * ldr + n] last */
#define TXLM_LINF_DYN_Y 8u     /* Y starts STEP[TXLM_STEP_KV_OUT] elements after y_off */
#define TXLM_LINF_SPLIT 16u    /* columns n < split go to binding 3 at r_off + m * ldr + n, the others to Y from
                                * its column 0 (queries beside keys and values: one product, two outputs) */

TXLM_STRUCT(txlm_linear_push) {
    TXLM_U32 M, N, K;
    TXLM_U32 x_off, ldx;
    TXLM_U32 w_off, w_ld;
    TXLM_U32 y_off, ldy;
    TXLM_U32 b_off;
    TXLM_U32 r_off, ldr;
    TXLM_U32 flags;            /* TXLM_LINF_* */
    float alpha;
    TXLM_U32 ln_d, ln_d_out;   /* the LN kernels: LayerNorm over the first ln_d of ln_d_out columns */
    float ln_eps;
    TXLM_U32 split;            /* TXLM_LINF_SPLIT */
    TXLM_U32 ln_y;             /* the LN kernels: where in Y the normalised row goes (y_off: in place) */
};

/* ---- the other operations (engine/ops.c) ------------------------------- */
TXLM_STRUCT(txlm_gather_push) {
    TXLM_U32 n_rows, dim;
    TXLM_I32 row_lo, row_hi;   /* ids of this chunk of the table */
    TXLM_U32 y_off, ldy;
    float alpha;
    TXLM_U32 zero_rest;        /* the rows of other ids get zeros (else they are left as they are) */
};

TXLM_STRUCT(txlm_layernorm_push) {
    TXLM_U32 rows, d;
    TXLM_U32 x_off, ldx;
    TXLM_U32 r_off, ldr;
    TXLM_U32 y_off, ldy;
    TXLM_U32 residual;
    float eps;
    TXLM_U32 d_out;
};

TXLM_STRUCT(txlm_logsoftmax_push) {
    TXLM_U32 rows, n;
    TXLM_U32 src_off, ld_src;
    TXLM_U32 dst_off, ld_dst;
    TXLM_U32 add_off, ld_add, add_col;
    TXLM_U32 n_write;          /* columns written (the head writes only its shortlist to the output) */
    TXLM_U32 pick_off, pick_base;
    TXLM_U32 map_off;
};

TXLM_STRUCT(txlm_softmax_push) {
    TXLM_U32 rows, n;
};

/* ---- attention (attn_push.glsl; engine/attention.c) -------------------- */
TXLM_STRUCT(txlm_attn_push) {
    TXLM_U32 qlen, mlen, klen;
    TXLM_U32 H, dh;
    TXLM_U32 rk_off;           /* element offset of the position keys */
    TXLM_U32 clamp_max;
    TXLM_U32 same_length;
    TXLM_U32 mem_len;          /* of same_length's bound: the memory's, + 1 under NVIDIA's rule (hparams.h) */
    float scale;
    TXLM_U32 kv_row0;
    TXLM_U32 kv_rows;
    TXLM_U32 merge;            /* attn_split_sg: its last run merges (bindings 6 and 7) */
    TXLM_U32 kv_dyn;           /* 0, or 1 + the STEP word to add to kv_row0 (memory row 0's ring row) */
    TXLM_U32 splits;           /* attn_tile: runs the keys are split into (0 or 1: none) */
    TXLM_U32 table;            /* 0: one stream, shaped as above; else the STEP word of the dispatch's first entry */
    TXLM_U32 zdim;             /* with table: the grid's z per stream */
    TXLM_U32 run;              /* attn_merge: keys per run (0: splits runs) */
    TXLM_U32 q0;               /* without table: the stream's first query (and output) row of the pass */
};

/* ---- the matrix-unit kernels (linear_cm.comp, attn_cm.comp; engine/vk/coopmat.c) ---- */
/* A workgroup's invocations, whatever subgroups the device makes of them. */
#define TXLM_CM_INVOCATIONS 128u
/* Their specialization constants, set when the pipeline is made: the
 * device's fragment shape (f16 M x K times K x N plus f32), the fragments
 * of linear_cm's 64x64 tile a subgroup keeps (the fewest subgroups'
 * share), and the most subgroups a workgroup makes. */
#define TXLM_CM_SPEC_M 0
#define TXLM_CM_SPEC_N 1
#define TXLM_CM_SPEC_K 2
#define TXLM_CM_SPEC_FPS 3
#define TXLM_CM_SPEC_NSUB 4
#define TXLM_CM_SPECS 5

/* ---- the step buffer ----------------------------------------------------- */
/* Word TXLM_STEP_KV_OUT: the element offset in its ring of a lone
 * stream's new keys and values (the k|v product's DYN_Y). Entries start
 * at word TXLM_ENTRY_TABLE, one of TXLM_ENTRY_WORDS per stream of the
 * pass: */
#define TXLM_STEP_KV_OUT 1u
#define TXLM_ENTRY_TABLE 16u
#define TXLM_ENTRY_WORDS 16u
#define TXLM_ENTRY_Q0 0u          /* its first row among the pass's rows */
#define TXLM_ENTRY_QLEN 1u
#define TXLM_ENTRY_MLEN 2u
#define TXLM_ENTRY_KV_FIRST 3u    /* the ring row of its memory row 0 */
#define TXLM_ENTRY_KV_ROWS 4u
#define TXLM_ENTRY_MEM_LEN 5u     /* as txlm_attn_push.mem_len */
#define TXLM_ENTRY_PART0 6u       /* vec4 of its partial results in the scratch */
#define TXLM_ENTRY_SYNC0 7u       /* its first count of finished runs, after word 0 */
#define TXLM_ENTRY_SPLITS 8u
#define TXLM_ENTRY_SAME_LENGTH 9u
#define TXLM_ENTRY_CLAMP 10u

#endif
