/* txlm bench --batch's table (bench_batch.h), after NVIDIA's
 * Transformer-XL inference tables: per batch size the throughput of all
 * streams together, its ratio to batch 1, the latency of one step (a
 * segment of every stream, or a token of every stream) as mean, median
 * and 90th percentile, and the device memory the plan gives it. */
#include <stdio.h>

#include "bench_batch.h"

/* The batch-1 row's rate, or 0 when it is not in the list (no ratio then). */
static double base_rate(const batch_result *r, int gen)
{
    for (uint32_t i = 0; i < r->n; i++)
        if (r->rows[i].streams == 1 && r->rows[i].fits) return gen ? r->rows[i].gen_tps : r->rows[i].eval_tps;
    return 0;
}

static double ratio(double rate, double base) { return base > 0 ? rate / base : 0; }

/* The ratio to batch 1 as printed in a table: "-" without a batch-1 row. */
typedef struct ratio_text {
    char s[16];
} ratio_text;
static ratio_text x_b1(double rate, double base)
{
    ratio_text t = {"-"};
    if (base > 0) snprintf(t.s, sizeof t.s, "%.2f", rate / base);
    return t;
}

static void human(char *out, size_t n, uint64_t bytes)
{
    if (bytes >= 1048576) snprintf(out, n, "%.1f MiB", (double)bytes / 1048576.0);
    else snprintf(out, n, "%.1f KiB", (double)bytes / 1024.0);
}

/* A standard deviation as printed in a table: "-" for one repetition. */
typedef struct sd_text {
    char s[24];
} sd_text;
static sd_text sd_of(double sd)
{
    sd_text t = {"-"};
    if (sd == sd) snprintf(t.s, sizeof t.s, "%.1f", sd); /* NAN: one repetition */
    return t;
}

/* How one table writes its parts. */
typedef struct table_fmt {
    const char *streams, *why;     /* a row's first cell; a size that does not fit */
    const char *cols;              /* tokens/s, its sd, x batch 1, ms avg / p50 / p90 */
    void (*bytes)(const batch_row *w);
} table_fmt;

/* The rows of the table: one per batch size. */
static void print_rows(const bench_opts *o, const batch_result *r, const table_fmt *f)
{
    double be = base_rate(r, 0), bg = base_rate(r, 1);
    for (uint32_t i = 0; i < r->n; i++) {
        const batch_row *w = &r->rows[i];
        printf(f->streams, w->streams);
        if (!w->fits) {
            printf(f->why, w->why);
            continue;
        }
        if (o->workloads & W_EVAL)
            printf(f->cols, w->eval_tps, sd_of(w->eval_sd).s, x_b1(w->eval_tps, be).s, w->eval_ms[0], w->eval_ms[1], w->eval_ms[2]);
        if (o->workloads & W_GEN)
            printf(f->cols, w->gen_tps, sd_of(w->gen_sd).s, x_b1(w->gen_tps, bg).s, w->gen_ms[0], w->gen_ms[1], w->gen_ms[2]);
        f->bytes(w);
    }
}

static void text_header(const bench_opts *o, const char *name, unsigned w, const char *step)
{
    if (o->workloads & w) printf(" %11s %8s %6s %9s %8s %8s", name, "+/- sd", "x b1", step, "p50", "p90");
}

static void text_bytes(const batch_row *w)
{
    char ring[32], scratch[32], shared[32];
    human(ring, sizeof ring, w->z.stream_ring_bytes);
    human(scratch, sizeof scratch, w->z.stream_scratch_bytes);
    human(shared, sizeof shared, w->z.batch_bytes);
    printf(" %12s %14s %12s\n", ring, scratch, shared);
}

static void print_text(const bench_opts *o, const batch_result *r)
{
    printf("%5s", "batch");
    text_header(o, "eval tok/s", W_EVAL, "seg ms");
    text_header(o, "gen tok/s", W_GEN, "step ms");
    printf(" %12s %14s %12s\n", "ring/stream", "scratch/stream", "shared");
    print_rows(o, r, &(table_fmt){"%5u", "  %s\n", " %11.1f %8s %6s %9.2f %8.2f %8.2f", text_bytes});
}

static void md_bytes(const batch_row *w)
{
    printf(" %llu | %llu | %llu |\n", (unsigned long long)w->z.stream_ring_bytes,
           (unsigned long long)w->z.stream_scratch_bytes, (unsigned long long)w->z.batch_bytes);
}

static void print_md(const bench_opts *o, const batch_result *r)
{
    printf("| batch |");
    if (o->workloads & W_EVAL) printf(" eval tokens/s | sd | x batch 1 | segment ms avg | p50 | p90 |");
    if (o->workloads & W_GEN) printf(" gen tokens/s | sd | x batch 1 | step ms avg | p50 | p90 |");
    printf(" ring bytes/stream | scratch bytes/stream | shared bytes |\n|---:|");
    for (int k = 0; k < ((o->workloads & W_EVAL) ? 6 : 0) + ((o->workloads & W_GEN) ? 6 : 0) + 3; k++) printf("---:|");
    printf("\n");
    print_rows(o, r, &(table_fmt){"| %u |", " %s |\n", " %.1f | %s | %s | %.2f | %.2f | %.2f |", md_bytes});
}

/* A CSV number, empty when there is none (one repetition's sd). */
typedef struct csv_num {
    char s[32];
} csv_num;
static csv_num csv_of(double x)
{
    csv_num t = {""};
    if (x == x) snprintf(t.s, sizeof t.s, "%.6g", x);
    return t;
}

static void print_csv(const bench_opts *o, const txlm_device_info *dev, const batch_result *r)
{
    printf("model,device,batch,fits,eval_tokens_per_s,eval_tokens_per_s_sd,eval_x_batch1,eval_segment_ms_mean,"
           "eval_segment_ms_p50,eval_segment_ms_p90,gen_tokens_per_s,gen_tokens_per_s_sd,gen_x_batch1,gen_step_ms_mean,"
           "gen_step_ms_p50,gen_step_ms_p90,stream_ring_bytes,stream_scratch_bytes,batch_bytes,total_bytes,available_bytes\n");
    double be = base_rate(r, 0), bg = base_rate(r, 1);
    for (uint32_t i = 0; i < r->n; i++) {
        const batch_row *w = &r->rows[i];
        bench_csv_field(o->model), putchar(','), bench_csv_field(dev->name);
        printf(",%u,%d,%.6g,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%s,%.6g,%.6g,%.6g,%.6g,%llu,%llu,%llu,%llu,%llu\n", w->streams, w->fits,
               w->eval_tps, csv_of(w->eval_sd).s, ratio(w->eval_tps, be), w->eval_ms[0], w->eval_ms[1], w->eval_ms[2],
               w->gen_tps, csv_of(w->gen_sd).s, ratio(w->gen_tps, bg), w->gen_ms[0], w->gen_ms[1], w->gen_ms[2],
               (unsigned long long)w->z.stream_ring_bytes, (unsigned long long)w->z.stream_scratch_bytes,
               (unsigned long long)w->z.batch_bytes, (unsigned long long)w->z.total_bytes,
               (unsigned long long)w->z.available_bytes);
    }
}

static void json_str(const char *s)
{
    putchar('"');
    for (const char *p = s; *p; p++)
        if (*p == '"' || *p == '\\') printf("\\%c", *p);
        else if ((unsigned char)*p >= 0x20) putchar(*p);
    putchar('"');
}

/* One workload's figures, null where not measured (or, for the ratio, with
 * no batch-1 row; for the standard deviation, with one repetition). */
static void json_workload(const char *name, const char *step, int measured, double tps, double sd, double base,
                          const double *ms)
{
    if (!measured) {
        printf(", \"%s_tokens_per_s\": null, \"%s_tokens_per_s_sd\": null, \"%s_x_batch1\": null, \"%s_%s_ms\": null",
               name, name, name, name, step);
        return;
    }
    printf(", \"%s_tokens_per_s\": %.6g, \"%s_tokens_per_s_sd\": ", name, tps, name);
    if (sd == sd) printf("%.6g", sd);
    else printf("null");
    printf(", \"%s_x_batch1\": ", name);
    if (base > 0) printf("%.6g", tps / base);
    else printf("null");
    printf(", \"%s_%s_ms\": [%.6g, %.6g, %.6g]", name, step, ms[0], ms[1], ms[2]);
}

static void json_row(const bench_opts *o, const batch_row *w, double be, double bg, int last)
{
    printf("    {\"batch\": %u, \"fits\": %s, \"stream_ring_bytes\": %llu, \"stream_scratch_bytes\": %llu, "
           "\"batch_bytes\": %llu, \"total_bytes\": %llu, \"available_bytes\": %llu",
           w->streams, w->fits ? "true" : "false", (unsigned long long)w->z.stream_ring_bytes,
           (unsigned long long)w->z.stream_scratch_bytes, (unsigned long long)w->z.batch_bytes,
           (unsigned long long)w->z.total_bytes, (unsigned long long)w->z.available_bytes);
    if (w->fits) {
        json_workload("eval", "segment", (o->workloads & W_EVAL) != 0, w->eval_tps, w->eval_sd, be, w->eval_ms);
        json_workload("gen", "step", (o->workloads & W_GEN) != 0, w->gen_tps, w->gen_sd, bg, w->gen_ms);
    } else {
        printf(", \"why\": "), json_str(w->why);
    }
    printf("}%s\n", last ? "" : ",");
}

static void print_json(const bench_opts *o, const txlm_device_info *dev, const batch_result *r)
{
    printf("{\n  \"model\": ");
    json_str(o->model);
    printf(",\n  \"device\": \"%s\",\n  \"mem_len\": %u,\n  \"tgt_len\": %u,\n  \"tokens\": %u,\n  \"gen_tokens\": %u,\n"
           "  \"reps\": %u,\n  \"latency_stats\": [\"mean\", \"p50\", \"p90\"],\n  \"batches\": [\n",
           dev->name, o->mem_len, o->tgt_len, o->tokens, o->gen_tokens, o->reps);
    double be = base_rate(r, 0), bg = base_rate(r, 1);
    for (uint32_t i = 0; i < r->n; i++) json_row(o, &r->rows[i], be, bg, i + 1 == r->n);
    printf("  ]\n}\n");
}

void bench_batch_report(const bench_opts *o, const txlm_device_info *dev, const batch_result *r)
{
    if (o->format == BENCH_JSON) return print_json(o, dev, r);
    if (o->format == BENCH_CSV) return print_csv(o, dev, r);
    if (o->format == BENCH_MD)
        printf("model `%s` on %s: tgt %u, mem %u, %u tokens and %u generated per stream, %u reps\n\n", o->model, dev->name,
               o->tgt_len, o->mem_len, o->tokens, o->gen_tokens, o->reps);
    else
        printf("model %s on %s: tgt %u, mem %u, %u tokens and %u generated per stream, %u reps\n", o->model, dev->name,
               o->tgt_len, o->mem_len, o->tokens, o->gen_tokens, o->reps);
    if (o->format == BENCH_MD) print_md(o, r);
    else print_text(o, r);
}
