/* txlm bench --batch 1,2,4,...: evaluation and generation throughput and
 * latency per batch size, with what each batch takes on the device
 * (tools/bench/bench_batch.c runs them, tools/bench/bench_batch_report.c prints them). */
#ifndef TXLM_BENCH_BATCH_H
#define TXLM_BENCH_BATCH_H

#include "bench.h"

enum { MAX_BATCHES = 16 };

typedef struct batch_row {
    uint32_t streams;
    int fits;                  /* 0: the plan's total is above what is free (nothing run) */
    char why[160];             /* when it does not fit, or the plan refused it */
    txlm_batch_sizes z;
    double eval_tps, gen_tps;  /* tokens/s, all streams together: medians over the repetitions */
    double eval_sd, gen_sd;    /* their standard deviations over the repetitions (NAN for one) */
    double eval_ms[3], gen_ms[3]; /* per segment step / per token step: mean, p50, p90 */
} batch_row;

typedef struct batch_result {
    batch_row rows[MAX_BATCHES];
    uint32_t n;
} batch_result;

/* Each batch size of o->batches: planned, then (when it fits) timed. 0, or
 * 1 after printing why. */
int bench_batch_run(txlm_model *m, const bench_opts *o, batch_result *r);
/* The table in o->format on stdout. */
void bench_batch_report(const bench_opts *o, const txlm_device_info *dev, const batch_result *r);

#endif
