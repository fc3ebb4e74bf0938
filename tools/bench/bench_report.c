/* txlm bench's report: a table (text or Markdown), CSV rows or JSON, each
 * repeated figure as its median and its mean +/- sample standard
 * deviation over the repetitions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(const series *s)
{
    if (!s->n) return NAN;
    double v[MAX_REPS];
    memcpy(v, s->v, s->n * sizeof *v);
    qsort(v, s->n, sizeof *v, cmp_double);
    return s->n % 2 ? v[s->n / 2] : 0.5 * (v[s->n / 2 - 1] + v[s->n / 2]);
}

double bench_mean(const series *s)
{
    double sum = 0;
    for (uint32_t i = 0; i < s->n; i++) sum += s->v[i];
    return s->n ? sum / s->n : NAN;
}

double bench_sd(const series *s)
{
    if (s->n < 2) return NAN; /* one run has no spread to tell: not 0 */
    double m = bench_mean(s), ss = 0;
    for (uint32_t i = 0; i < s->n; i++) ss += (s->v[i] - m) * (s->v[i] - m);
    return sqrt(ss / (s->n - 1));
}

/* One line of the report: a repeated figure (s) or a single one (value). */
typedef struct row {
    char what[64];
    const series *s;
    double value;
    const char *unit;
    int digits;
} row;

static int rows_of(const bench_opts *o, const bench_result *r, row *out)
{
    int n = 0;
    if (r->load_s.n) out[n++] = (row){"load to first token", &r->load_s, 0, "s", 3};
    if (r->eval_tps.n) {
        out[n] = (row){"", &r->eval_tps, 0, "tokens/s", 2};
        snprintf(out[n++].what, 64, "eval (tgt %u, mem %u)", o->tgt_len, o->mem_len);
    }
    if (r->gen_tps.n) {
        out[n] = (row){"", &r->gen_tps, 0, "tokens/s", 2};
        snprintf(out[n++].what, 64, "generation (mem %u)", o->mem_len);
        double rate = (double)r->step_bytes * bench_median(&r->gen_tps);
        out[n++] = (row){"weights read in generation", NULL, rate * 1e-9, "GB/s", 2};
        out[n++] = (row){"device copy rate", NULL, r->copy_rate * 1e-9, "GB/s", 2};
        out[n++] = (row){"share of the copy rate", NULL, 100 * rate / r->copy_rate, "%", 0};
    }
    for (uint32_t i = 0; (o->workloads & W_VANILLA) && i < o->n_lens; i++) {
        out[n] = (row){"", NULL, r->xl_ms[i], "ms/token", 2};
        snprintf(out[n++].what, 64, "XL eval, attn len %d", o->lens[i]);
        out[n] = (row){"", NULL, r->vanilla_ms[i], "ms/token", 2};
        snprintf(out[n++].what, 64, "vanilla eval, attn len %d", o->lens[i]);
        out[n] = (row){"", NULL, r->vanilla_ms[i] / r->xl_ms[i], "x", 1};
        snprintf(out[n++].what, 64, "XL speedup, attn len %d", o->lens[i]);
    }
    return n;
}

static void print_text(const bench_opts *o, const txlm_device_info *dev, const bench_result *r, const row *rows, int n)
{
    printf("model %s on %s\n", o->model, dev->name);
    printf("device opened in %.3f s\n", r->context_s);
    printf("%-30s %12s %24s  %s\n", "workload", "median", "mean +/- sd", "(reps)");
    for (int i = 0; i < n; i++) {
        if (!rows[i].s) {
            printf("%-30s %12.*f %24s  %s\n", rows[i].what, rows[i].digits, rows[i].value, "", rows[i].unit);
            continue;
        }
        char ms[48];
        int d = rows[i].digits;
        if (rows[i].s->n > 1) snprintf(ms, sizeof ms, "%.*f +/- %.*f", d, bench_mean(rows[i].s), d, bench_sd(rows[i].s));
        else snprintf(ms, sizeof ms, "%.*f", d, bench_mean(rows[i].s));
        printf("%-30s %12.*f %24s  %s (%u)\n", rows[i].what, rows[i].digits, bench_median(rows[i].s), ms, rows[i].unit,
               rows[i].s->n);
    }
}

static void print_md(const bench_opts *o, const txlm_device_info *dev, const bench_result *r, const row *rows, int n)
{
    printf("model `%s` on %s, device opened in %.3f s\n\n", o->model, dev->name, r->context_s);
    printf("| workload | median | mean ± sd | unit | reps |\n|---|---:|---:|---|---:|\n");
    for (int i = 0; i < n; i++) {
        const row *w = &rows[i];
        if (w->s && w->s->n > 1)
            printf("| %s | %.*f | %.*f ± %.*f | %s | %u |\n", w->what, w->digits, bench_median(w->s), w->digits,
                   bench_mean(w->s), w->digits, bench_sd(w->s), w->unit, w->s->n);
        else if (w->s)
            printf("| %s | %.*f | %.*f | %s | 1 |\n", w->what, w->digits, bench_median(w->s), w->digits, bench_mean(w->s), w->unit);
        else
            printf("| %s | %.*f | | %s | |\n", w->what, w->digits, w->value, w->unit);
    }
}

void bench_csv_field(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"') putchar('"');
        putchar(*s);
    }
    putchar('"');
}

/* Every row names the model and the device, so that rows of several runs
 * can be put together; the standard deviation is empty for one run. */
static void print_csv(const bench_opts *o, const txlm_device_info *dev, const bench_result *r, const row *rows, int n)
{
    printf("model,device,workload,median,mean,sd,unit,reps\n");
    for (int i = -1; i < n; i++) {
        const row *w = i < 0 ? NULL : &rows[i];
        bench_csv_field(o->model), putchar(','), bench_csv_field(dev->name), putchar(',');
        bench_csv_field(w ? w->what : "device opened");
        if (!w) printf(",%.6g,,,s,1\n", r->context_s);
        else if (!w->s) printf(",%.6g,,,%s,\n", w->value, w->unit);
        else if (w->s->n > 1)
            printf(",%.6g,%.6g,%.6g,%s,%u\n", bench_median(w->s), bench_mean(w->s), bench_sd(w->s), w->unit, w->s->n);
        else printf(",%.6g,%.6g,,%s,1\n", bench_median(w->s), bench_mean(w->s), w->unit);
    }
}

static void print_series(const char *name, const series *s)
{
    printf(",\n  \"%s\": [", name);
    for (uint32_t i = 0; i < s->n; i++) printf("%s%.6g", i ? ", " : "", s->v[i]);
    printf("],\n  \"%s_median\": %.6g,\n  \"%s_mean\": %.6g,\n  \"%s_sd\": ", name, bench_median(s), name,
           bench_mean(s), name);
    if (s->n > 1) printf("%.6g", bench_sd(s));
    else printf("null");
}

static void print_json(const bench_opts *o, const txlm_device_info *dev, const bench_result *r)
{
    printf("{\n  \"model\": \"");
    for (const char *p = o->model; *p; p++) printf(*p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
    printf("\",\n  \"device\": \"%s\",\n  \"mem_len\": %u,\n  \"tgt_len\": %u,\n  \"tokens\": %u,\n  \"reps\": %u,\n"
           "  \"gen_tokens\": %u,\n  \"context_s\": %.6g",
           dev->name, o->mem_len, o->tgt_len, o->tokens, o->reps, o->gen_tokens, r->context_s);
    if (r->load_s.n) print_series("load_s", &r->load_s);
    if (r->eval_tps.n) print_series("eval_tokens_per_s", &r->eval_tps);
    if (r->gen_tps.n) {
        print_series("gen_tokens_per_s", &r->gen_tps);
        double rate = (double)r->step_bytes * bench_median(&r->gen_tps);
        printf(",\n  \"step_weight_bytes\": %llu,\n  \"copy_bytes_per_s\": %.6g,\n  \"gen_weight_bytes_per_s_median\": %.6g,\n"
               "  \"gen_copy_fraction\": %.6g",
               (unsigned long long)r->step_bytes, r->copy_rate, rate, rate / r->copy_rate);
    }
    if (o->workloads & W_VANILLA) {
        printf(",\n  \"vanilla\": [");
        for (uint32_t i = 0; i < o->n_lens; i++)
            printf("%s\n    {\"attn_len\": %d, \"xl_ms_per_token\": %.6g, \"vanilla_ms_per_token\": %.6g, \"tokens\": %u}",
                   i ? "," : "", o->lens[i], r->xl_ms[i], r->vanilla_ms[i], o->vanilla_tokens);
        printf("\n  ]");
    }
    printf("\n}\n");
}

void bench_report(const bench_opts *o, const txlm_device_info *dev, const bench_result *r)
{
    row rows[9 + 3 * MAX_LENS];
    int n = rows_of(o, r, rows);
    switch (o->format) {
    case BENCH_JSON: print_json(o, dev, r); break;
    case BENCH_MD: print_md(o, dev, r, rows, n); break;
    case BENCH_CSV: print_csv(o, dev, r, rows, n); break;
    default: print_text(o, dev, r, rows, n); break;
    }
}
