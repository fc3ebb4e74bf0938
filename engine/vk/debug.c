/* A context's debug options, fault points, counters and traces (debug.h). */
#include "debug.h"

#include <stdlib.h>
#include <string.h>

#include <stb/stb_ds.h>

/* A recording's own dispatches by kernel, then its copies, fills and
 * barriers: a replay counts them again. */
enum { REC_COUNTS = TXLM_K_COUNT + 3 };
struct txlm_debug_rec {
    VkCommandBuffer cmd;
    uint32_t *uses; /* [REC_COUNTS] */
};

txlm_debug *txlm_debug_create(const txlm_env *e)
{
    txlm_debug *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->no_replay = e->no_replay;
    d->no_pad = e->no_pad;
    d->explain_kernels = e->explain_kernels;
    d->fault_device_lost = e->fault_device_lost;
    d->fault_alloc_fail = e->fault_alloc_fail;
    pthread_mutex_init(&d->lock, NULL);
    return d;
}

void txlm_debug_destroy(txlm_debug *d)
{
    if (!d) return;
    for (ptrdiff_t i = 0; i < arrlen(d->recs); i++) free(d->recs[i].uses);
    arrfree(d->recs);
    arrfree(d->trace_words);
    arrfree(d->submit_dispatches);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

int txlm_debug_alloc_fails(txlm_debug *d)
{
    uint64_t n = __atomic_add_fetch(&d->allocs, 1, __ATOMIC_RELAXED);
    return d->fault_alloc_fail && n == d->fault_alloc_fail;
}

int txlm_debug_submit_fails(txlm_debug *d)
{
    d->submits++;
    return d->fault_device_lost && d->submits >= d->fault_device_lost;
}

/* The counts of recording cmd (under the lock): a few per session, found
 * by a walk (command buffers a destroyed recorder freed come back under
 * the same handle and start from zero at their next begin). */
static uint32_t *rec_counts(txlm_debug *d, VkCommandBuffer cmd)
{
    for (ptrdiff_t i = 0; i < arrlen(d->recs); i++)
        if (d->recs[i].cmd == cmd) return d->recs[i].uses;
    txlm_debug_rec r = {cmd, calloc(REC_COUNTS, sizeof(uint32_t))};
    if (r.uses) arrput(d->recs, r);
    return r.uses;
}

static void trace(txlm_debug *d, const uint32_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++) arrput(d->trace_words, w[i]);
}

void txlm_debug_begin(txlm_debug *d, VkCommandBuffer cmd)
{
    pthread_mutex_lock(&d->lock);
    uint32_t *c = d->count ? rec_counts(d, cmd) : NULL;
    if (c) memset(c, 0, REC_COUNTS * sizeof *c);
    pthread_mutex_unlock(&d->lock);
}

void txlm_debug_dispatch(txlm_debug *d, VkCommandBuffer cmd, uint32_t kernel, const uint32_t *grid, const void *push,
                         uint32_t push_size, const VkDeviceSize *ranges, uint32_t n_ranges)
{
    pthread_mutex_lock(&d->lock);
    uint32_t *c = d->count ? rec_counts(d, cmd) : NULL;
    if (c) c[kernel]++;
    if (d->count) d->kernel_uses[kernel]++;
    if (d->trace) {
        uint32_t head[6] = {TXLM_TRACE_DISPATCH, kernel, grid[0], grid[1], grid[2], push_size};
        trace(d, head, 6);
        uint32_t words[32] = {0};
        memcpy(words, push, push_size < sizeof words ? push_size : sizeof words);
        trace(d, words, (push_size + 3) / 4);
        for (uint32_t i = 0; i < n_ranges; i++) arrput(d->trace_words, (uint32_t)ranges[i]);
    }
    pthread_mutex_unlock(&d->lock);
}

void txlm_debug_command(txlm_debug *d, VkCommandBuffer cmd, uint32_t tag, uint64_t a, uint64_t b, uint64_t c)
{
    pthread_mutex_lock(&d->lock);
    uint32_t kind = tag == TXLM_TRACE_COPY ? TXLM_COUNT_COPIES : tag == TXLM_TRACE_FILL ? TXLM_COUNT_FILLS : TXLM_COUNT_BARRIERS;
    uint32_t *n = d->count ? rec_counts(d, cmd) : NULL;
    if (n) n[TXLM_K_COUNT + kind]++;
    if (d->count) d->commands[kind]++;
    uint32_t w[4] = {tag, (uint32_t)a, (uint32_t)b, (uint32_t)c};
    if (d->trace) trace(d, w, 4);
    pthread_mutex_unlock(&d->lock);
}

void txlm_debug_replay(txlm_debug *d, VkCommandBuffer cmd, uint32_t slot)
{
    pthread_mutex_lock(&d->lock);
    if (d->count) {
        d->replays++;
        uint32_t *c = rec_counts(d, cmd);
        for (uint32_t k = 0; c && k < TXLM_K_COUNT; k++) d->kernel_uses[k] += c[k];
        for (uint32_t k = 0; c && k < 3; k++) d->commands[k] += c[TXLM_K_COUNT + k];
    }
    if (d->trace) trace(d, (uint32_t[2]){TXLM_TRACE_REPLAY, slot}, 2);
    pthread_mutex_unlock(&d->lock);
}

void txlm_debug_submitted(txlm_debug *d, uint32_t n)
{
    pthread_mutex_lock(&d->lock);
    if (d->count) arrput(d->submit_dispatches, n);
    pthread_mutex_unlock(&d->lock);
}

const uint32_t *txlm_debug_trace(const txlm_debug *d, size_t *n)
{
    *n = (size_t)arrlen(d->trace_words);
    return d->trace_words;
}

void txlm_debug_trace_clear(txlm_debug *d) { arrsetlen(d->trace_words, 0); }
