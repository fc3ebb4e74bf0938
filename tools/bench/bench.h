/* txlm bench's figures and how they are reported (tools/bench/cmd_bench.c runs
 * the workloads, tools/bench/bench_report.c prints them). */
#ifndef TXLM_BENCH_H
#define TXLM_BENCH_H

#include <stdint.h>

#include "txlm.h"

enum { W_LOAD = 1, W_EVAL = 2, W_GEN = 4, W_VANILLA = 8 };
enum { MAX_REPS = 64, MAX_LENS = 16 };

typedef struct bench_opts {
    const char *model;
    uint32_t mem_len, tgt_len, tokens, gen_tokens, reps, vanilla_tokens;
    unsigned workloads;
    int format;   /* BENCH_TEXT, BENCH_MD, BENCH_CSV or BENCH_JSON (-o) */
    uint64_t seed;
    int32_t *ids; /* token stream, used cyclically */
    uint32_t n_ids;
    int32_t *lens; /* attention lengths of the vanilla comparison */
    uint32_t n_lens;
    int32_t *batches; /* --batch: batch sizes (tools/bench/bench_batch.c) */
    uint32_t n_batches;
    uint64_t memory_budget; /* --memory-budget, bytes (0: none) */
    uint32_t submit_dispatches; /* --submit-dispatches: bounded against unbounded (tools/bench/bench_split.c; 0: not asked) */
    txlm_model_options mo;
} bench_opts;

typedef struct series {
    double v[MAX_REPS];
    uint32_t n;
} series;

typedef struct bench_result {
    double context_s;
    series load_s, eval_tps, gen_tps;
    double xl_ms[MAX_LENS], vanilla_ms[MAX_LENS]; /* per predicted token */
    uint32_t eval_tokens, gen_tokens;
    /* generation against the memory's speed: the weights a token reads
     * (txlm_model_step_bytes) and the device's copy rate */
    uint64_t step_bytes;
    double copy_rate;
} bench_result;

enum { BENCH_TEXT, BENCH_MD, BENCH_CSV, BENCH_JSON };

/* Median, mean and sample standard deviation (NAN for one value) of a series. */
double bench_median(const series *s);
double bench_mean(const series *s);
double bench_sd(const series *s);
/* A CSV field in quotes (quotes doubled), on stdout. */
void bench_csv_field(const char *s);
/* The figures in o->format on stdout. */
void bench_report(const bench_opts *o, const txlm_device_info *dev, const bench_result *r);

/* cmd_bench.c's workloads, o->reps repetitions each, appended to r's series. */
int bench_run_eval(txlm_model *m, const bench_opts *o, bench_result *r, int32_t *buf, float *lp);
int bench_run_gen(txlm_model *m, const bench_opts *o, bench_result *r, int32_t *buf);
/* --submit-dispatches N: eval and gen of whole (on the command's context,
 * unbounded) and of the model on a context bounded to N dispatches a
 * submission, repetitions alternating, and the table of both (bench_split.c). */
int bench_split(const bench_opts *o, const txlm_device_info *dev, txlm_model *whole, int32_t *buf, float *lp);

#endif
