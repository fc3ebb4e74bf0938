/* txlm bench --submit-dispatches N: what a bound on the work in one
 * submission costs (txlm_context_options.max_submit_dispatches). The
 * same model on two contexts (the command's own, and one made here),
 * one submitting a segment whole, one in pieces of at most N dispatches,
 * each waited for; eval and gen timed on each in turn, repetition by
 * repetition (after one untimed round), so that a noisy machine's slow
 * spells fall on both. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "cli.h"

static void row(const bench_opts *o, const char *what, const bench_result *r, const bench_result *whole)
{
    double e = bench_median(&r->eval_tps), g = bench_median(&r->gen_tps);
    double re = e / bench_median(&whole->eval_tps), rg = g / bench_median(&whole->gen_tps);
    if (o->format == BENCH_JSON)
        printf("  \"%s\": {\"eval_tokens_per_s\": %.6g, \"gen_tokens_per_s\": %.6g, \"eval_ratio\": %.6g, \"gen_ratio\": %.6g}",
               what, e, g, re, rg);
    else if (o->format == BENCH_MD)
        printf("| %s | %.2f | %.2f | %.3f | %.3f |\n", what, e, g, re, rg);
    else
        printf("%-28s %12.2f %12.2f %8.3f %8.3f\n", what, e, g, re, rg);
}

static void report(const bench_opts *o, const txlm_device_info *dev, const bench_result *r)
{
    char bounded[64];
    snprintf(bounded, sizeof bounded, "at most %u dispatches", o->submit_dispatches);
    if (o->format == BENCH_JSON) {
        printf("{\"device\": \"%s\", \"tgt_len\": %u, \"mem_len\": %u, \"reps\": %u, \"submit_dispatches\": %u,\n", dev->name,
               o->tgt_len, o->mem_len, o->reps, o->submit_dispatches);
        row(o, "whole", &r[0], &r[0]);
        printf(",\n");
        row(o, "bounded", &r[1], &r[0]);
        printf("\n}\n");
        return;
    }
    printf("%s: eval (tgt %u, mem %u) and generation, median tokens/s of %u repetitions each, alternating\n", dev->name,
           o->tgt_len, o->mem_len, o->reps);
    if (o->format == BENCH_MD)
        printf("| submissions | eval tokens/s | gen tokens/s | eval ratio | gen ratio |\n|---|---|---|---|---|\n");
    else
        printf("%-28s %12s %12s %8s %8s\n", "submissions", "eval tok/s", "gen tok/s", "eval", "gen");
    row(o, "a segment whole", &r[0], &r[0]);
    row(o, bounded, &r[1], &r[0]);
}

int bench_split(const bench_opts *o, const txlm_device_info *dev, txlm_model *whole, int32_t *buf, float *lp)
{
    txlm_context *bounded = NULL;
    txlm_model *m[2] = {whole, NULL};
    bench_result r[2] = {{0}};
    bench_opts one = *o;
    one.reps = 1;
    txlm_context_options co = {.memory_budget = o->memory_budget, .max_submit_dispatches = o->submit_dispatches};
    txlm_status st = txlm_context_create(&co, &bounded);
    if (!st) st = txlm_model_load(bounded, o->model, &o->mo, &m[1]);
    int rc = st ? cli_lib_error(st, "opening the bounded context") : 0;
    /* a first round untimed: kernels compile at their first use on each context */
    bench_result warm[2] = {{0}};
    for (uint32_t rep = 0; rep <= o->reps && !rc; rep++)
        for (int c = 0; c < 2 && !rc; c++) {
            bench_result *into = rep ? &r[c] : &warm[c];
            if (o->workloads & W_EVAL) rc = bench_run_eval(m[c], &one, into, buf, lp);
            if (!rc && (o->workloads & W_GEN)) rc = bench_run_gen(m[c], &one, into, buf);
        }
    if (!rc) report(o, dev, r);
    if (bounded && txlm_context_validation_messages(bounded))
        rc = cli_error("%llu Vulkan validation messages", (unsigned long long)txlm_context_validation_messages(bounded));
    txlm_model_free(m[1]);
    txlm_context_destroy(bounded);
    return rc;
}
