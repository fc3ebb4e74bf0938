/* Timing and input helpers shared by the benchmarks. */
#ifndef TXLM_BENCH_UTIL_H
#define TXLM_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

#include "vk_buffer.h"

static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* qsort comparison of doubles, ascending (medians). */
static inline int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Deterministic values in [-0.5, 0.5): weights and activations. */
static inline void bench_pattern(float *v, size_t n)
{
    for (size_t i = 0; i < n; i++) v[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
}

/* Writes the pattern into a whole device buffer: pages never written would
 * all read one zero page from cache and overstate a kernel's rate. */
static inline int bench_fill(txlm_vk *vk, txlm_buf *b, txlm_err *e)
{
    size_t n = b->size / 4;
    float *v = malloc(n * 4);
    if (!v) return 1;
    bench_pattern(v, n);
    int rc = txlm_buf_upload(vk, b, 0, v, n * 4, e);
    free(v);
    return rc;
}

#endif
