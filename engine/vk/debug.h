/* What tests, comparisons and fault injection set on a context, in one
 * place: kernels forced (by forbidding the others), fault points, every
 * segment recorded afresh, models left unpadded, the counters and
 * command traces tests read, and each product's kernel choice explained
 * on the log. A context holds one (txlm_vk.debug), filled
 * from the environment when it is created (env.h); a test sets the
 * options on its own context between calls, while nothing records.
 * Production code reaches it only through the calls below; the recorder
 * calls txlm_debug_dispatch and the others only while counting or
 * tracing is on (txlm_debug_watching), so none of it sits in a
 * recording's own state. */
#ifndef TXLM_DEBUG_H
#define TXLM_DEBUG_H

#include <pthread.h>
#include <stdint.h>
#include <volk.h>

#include "env.h"
#include "kernel_ids.h"

typedef struct txlm_debug_rec txlm_debug_rec;

typedef struct txlm_debug {
    /* options */
    unsigned char forbid[TXLM_K_COUNT]; /* counted as kernels the device cannot run: each op chooses its next candidate */
    int no_replay;                      /* every segment recorded afresh (TXLM_NO_REPLAY) */
    int no_pad;                         /* models loaded in their own widths (TXLM_NO_PAD; model_pad.c) */
    int explain_kernels;                /* each product's kernel choice on the log, with why (TXLM_EXPLAIN_KERNELS; ops.c) */
    uint64_t fault_device_lost;         /* submission N and every later one report the device lost (counted from 1) */
    uint64_t fault_alloc_fail;          /* buffer N's memory fails with every memory type, as on a full GPU */
    int count;                          /* count dispatches by kernel, and replays */
    int trace;                          /* append every recorded command to trace (txlm_debug_trace_*) */
    /* what was counted since the context was created (or a test cleared it) */
    uint32_t kernel_uses[TXLM_K_COUNT]; /* dispatches by kernel, a kept recording's again at each replay */
    uint32_t commands[3];               /* copies, fills and barriers (TXLM_COUNT_*), likewise */
    uint32_t replays;                   /* kept recordings submitted again */
    uint32_t *submit_dispatches;        /* stb_ds array: per submission of a recording's piece, its dispatches (recorder.h) */
    uint32_t *trace_words;              /* stb_ds array: the commands recorded while trace was on */
    /* the fault points' counts (buffers made, atomically; submissions, under the queue lock) */
    uint64_t allocs, submits;
    pthread_mutex_t lock;
    txlm_debug_rec *recs;
} txlm_debug;

/* The options the environment sets (NULL when out of host memory). */
txlm_debug *txlm_debug_create(const txlm_env *e);
void txlm_debug_destroy(txlm_debug *d);

/* Whether a test forbade kernel id. */
static inline int txlm_debug_forbidden(const txlm_debug *d, uint32_t id) { return d && d->forbid[id]; }
/* Fault points: whether the buffer being allocated now fails, whether the
 * submission being made now (under the queue lock) reports the device lost. */
int txlm_debug_alloc_fails(txlm_debug *d);
int txlm_debug_submit_fails(txlm_debug *d);

/* The recorder's notes, made only while counting or tracing. */
static inline int txlm_debug_watching(const txlm_debug *d) { return d && (d->count || d->trace); }
void txlm_debug_begin(txlm_debug *d, VkCommandBuffer cmd);
void txlm_debug_dispatch(txlm_debug *d, VkCommandBuffer cmd, uint32_t kernel, const uint32_t *grid, const void *push,
                         uint32_t push_size, const VkDeviceSize *ranges, uint32_t n_ranges);
/* A copy, fill or barrier: its tag and up to three numbers (offsets and sizes, never handles). */
enum { TXLM_TRACE_DISPATCH = 0x7d000001, TXLM_TRACE_COPY, TXLM_TRACE_FILL, TXLM_TRACE_BARRIER, TXLM_TRACE_REPLAY };
void txlm_debug_command(txlm_debug *d, VkCommandBuffer cmd, uint32_t tag, uint64_t a, uint64_t b, uint64_t c);
/* Where a command of a tag is counted in txlm_debug.commands. */
enum { TXLM_COUNT_COPIES, TXLM_COUNT_FILLS, TXLM_COUNT_BARRIERS };
void txlm_debug_replay(txlm_debug *d, VkCommandBuffer cmd, uint32_t slot);
/* A piece of a recording submitted, holding n dispatches (while counting). */
void txlm_debug_submitted(txlm_debug *d, uint32_t n);

/* Tests: the trace so far (*n words) and clearing it. */
const uint32_t *txlm_debug_trace(const txlm_debug *d, size_t *n);
void txlm_debug_trace_clear(txlm_debug *d);

#endif
