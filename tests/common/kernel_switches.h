/* The kernel choices tests and benchmarks force, each as a set of
 * variants forbidden on their context through the engine's one hook
 * (txlm_debug.forbid, engine/vk/debug.h): the op functions then choose
 * their next candidate. */
#ifndef TXLM_TEST_KERNEL_SWITCHES_H
#define TXLM_TEST_KERNEL_SWITCHES_H

#include "context.h"

enum {
    NO_GEMV = 1,              /* the matrix kernel for single rows too */
    NO_GEMV_Q8 = 2,           /* q8_0 rows through the generic single-row kernel */
    NO_SHUFFLE = 4,           /* the texel kernels that fetch in every lane, where the shuffle ones run */
    NO_FUSED_ATTENTION = 8,   /* always the three-pass attention */
    NO_PAIRED_ATTENTION = 16, /* one query per invocation */
    NO_ATTN_SG = 32,          /* the lane-per-run split attention even where the lane-per-element one runs */
    NO_TOUCH = 64,            /* long q8_0 rows through the single-row kernel that does not touch ahead */
    NO_FUSED_LN = 128,        /* txlm_op_linear_ln as a product and a LayerNorm dispatch */
    NO_FUSED_MERGE = 256,     /* the attention's runs merged by their own dispatch (attn_merge) */
    NO_STREAM_SLOTS = 512,    /* one stream per dispatch: no variant of several streams (_x8) */
    NO_COOPMAT = 1024,        /* the FP32 kernels where the matrix-unit ones (cooperative matrices) run */
};

/* Sets (on) or clears the switches sw on context c, keeping the others
 * (one state for the whole program, kernel_switches.c); returns them all. */
unsigned kernel_switch(txlm_context *c, unsigned sw, int on);

#endif
