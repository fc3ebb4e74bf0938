/* Timing helpers shared by the benchmarks. */
#ifndef TXLM_BENCH_UTIL_H
#define TXLM_BENCH_UTIL_H

#include <time.h>

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

#endif
