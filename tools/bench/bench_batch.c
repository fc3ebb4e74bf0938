/* txlm bench --batch (bench_batch.h): per batch size B, B streams of
 * the bench's token stream (stream k starts k x 4099 tokens further on),
 * each with its own session, fed together: evaluation (segments of L
 * scored against the next tokens, after the memory filled up) and
 * generation (a token drawn and fed per stream and step, after a prompt
 * that fills the memory and one untimed step). A size whose plan does not
 * fit what the device has free is reported as such before anything of it
 * is allocated. */
#include "bench_batch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_batch.h"

typedef struct timing {
    series tps;   /* tokens/s per repetition */
    double *ms;   /* every step's milliseconds */
    size_t n, cap;
} timing;

static int add_ms(timing *t, double ms)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 256;
        double *v = realloc(t->ms, cap * sizeof *v);
        if (!v) return cli_error("out of memory");
        t->ms = v, t->cap = cap;
    }
    t->ms[t->n++] = ms;
    return 0;
}

static int cmp_ms(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Mean, median and 90th percentile (nearest rank) of the step times; the
 * rate's median and standard deviation over the repetitions. */
static void summarize(timing *t, double *out, double *tps, double *sd)
{
    double sum = 0;
    for (size_t i = 0; i < t->n; i++) sum += t->ms[i];
    qsort(t->ms, t->n, sizeof *t->ms, cmp_ms);
    out[0] = t->n ? sum / (double)t->n : 0;
    out[1] = t->n ? t->ms[(t->n + 1) / 2 - 1] : 0;
    out[2] = t->n ? t->ms[(size_t)((double)t->n * 0.9 + 0.999999) - 1] : 0;
    *tps = bench_median(&t->tps);
    *sd = bench_sd(&t->tps);
}

/* B streams' token buffers: stream k at offset k x 4099 of the bench's ids. */
typedef struct streams {
    cli_batch cb;
    int32_t *tok;    /* [B][L + 1] */
    float *lp;       /* [B][L] */
    uint64_t at;     /* position in every stream */
    txlm_stream_feed *f;
    uint32_t len;    /* L */
} streams;

static void load_tokens(streams *s, const bench_opts *o, uint32_t n)
{
    for (uint32_t k = 0; k < s->cb.n; k++)
        for (uint32_t i = 0; i <= n; i++) s->tok[k * (s->len + 1) + i] = o->ids[(s->at + (uint64_t)k * 4099 + i) % o->n_ids];
}

/* One segment of n tokens of every stream: scored (score) or only fed. */
static txlm_status feed(streams *s, const bench_opts *o, uint32_t n, int score)
{
    load_tokens(s, o, n);
    for (uint32_t k = 0; k < s->cb.n; k++) {
        const int32_t *t = s->tok + k * (s->len + 1);
        s->f[k] = (txlm_stream_feed){.session = s->cb.s[k], .tokens = t, .n = n, .first_row = score ? 0 : n,
                                     .targets = score ? t + 1 : NULL, .target_logprobs = score ? s->lp + k * s->len : NULL};
    }
    s->at += n;
    return txlm_batch_feed(s->cb.b, s->f, s->cb.n);
}

/* n tokens of every stream in segments of L, each step timed into t when t is given. */
static int run_tokens(streams *s, const bench_opts *o, uint32_t n, int score, timing *t)
{
    for (uint32_t done = 0; done < n;) {
        uint32_t k = n - done < s->len ? n - done : s->len;
        double t0 = cli_now();
        txlm_status st = feed(s, o, k, score);
        if (st) return cli_lib_error(st, score ? "batched evaluation" : "feeding the batch");
        if (t && add_ms(t, (cli_now() - t0) * 1e3)) return 1;
        done += k;
    }
    return 0;
}

static int time_eval(streams *s, const bench_opts *o, batch_row *row)
{
    timing t = {0};
    int rc = run_tokens(s, o, o->mem_len ? o->mem_len : o->tgt_len, 1, NULL);
    for (uint32_t rep = 0; !rc && rep < o->reps; rep++) {
        double t0 = cli_now();
        rc = run_tokens(s, o, o->tokens, 1, &t);
        t.tps.v[t.tps.n++] = (double)o->tokens * s->cb.n / (cli_now() - t0);
    }
    if (!rc) summarize(&t, row->eval_ms, &row->eval_tps, &row->eval_sd);
    free(t.ms);
    return rc;
}

/* One token drawn and fed for every stream. */
static int gen_step(streams *s, int32_t *drawn)
{
    txlm_status st = txlm_batch_sample(s->cb.b, s->cb.s, s->cb.n, NULL, NULL, drawn);
    for (uint32_t k = 0; !st && k < s->cb.n; k++)
        s->f[k] = (txlm_stream_feed){.session = s->cb.s[k], .tokens = &drawn[k], .n = 1, .first_row = 1};
    if (!st) st = txlm_batch_feed(s->cb.b, s->f, s->cb.n);
    return st ? cli_lib_error(st, "batched generation") : 0;
}

static int time_gen(streams *s, const bench_opts *o, batch_row *row)
{
    timing t = {0};
    int32_t *drawn = malloc(s->cb.n * sizeof *drawn);
    int rc = drawn ? run_tokens(s, o, o->mem_len ? o->mem_len : 1, 0, NULL) : cli_error("out of memory");
    for (uint32_t k = 0; k < s->cb.n; k++) txlm_session_set_seed(s->cb.s[k], o->seed + k);
    if (!rc) rc = gen_step(s, drawn); /* untimed: the one-row kernels' first use */
    for (uint32_t rep = 0; !rc && rep < o->reps; rep++) {
        double t0 = cli_now();
        for (uint32_t i = 0; !rc && i < o->gen_tokens; i++) {
            double t1 = cli_now();
            rc = gen_step(s, drawn);
            if (!rc) rc = add_ms(&t, (cli_now() - t1) * 1e3);
        }
        t.tps.v[t.tps.n++] = (double)o->gen_tokens * s->cb.n / (cli_now() - t0);
    }
    if (!rc) summarize(&t, row->gen_ms, &row->gen_tps, &row->gen_sd);
    free(t.ms);
    free(drawn);
    return rc;
}

/* B streams, fresh sessions: timed with fn. */
static int with_streams(txlm_model *m, const bench_opts *o, batch_row *row, int (*fn)(streams *, const bench_opts *, batch_row *))
{
    streams s = {.len = o->tgt_len};
    txlm_session_options so = {.mem_len = o->mem_len, .same_length = -1, .max_segment = o->tgt_len};
    if (cli_batch_open(&s.cb, m, row->streams, &so)) return 1;
    s.tok = malloc((size_t)row->streams * (o->tgt_len + 1) * sizeof *s.tok);
    s.lp = malloc((size_t)row->streams * o->tgt_len * sizeof *s.lp);
    s.f = malloc(row->streams * sizeof *s.f);
    int rc = s.tok && s.lp && s.f ? fn(&s, o, row) : cli_error("out of memory");
    free(s.tok), free(s.lp), free(s.f);
    cli_batch_free(&s.cb);
    return rc;
}

/* The plan of B streams: whether it fits what is free, and why not. */
static void plan(txlm_model *m, const bench_opts *o, batch_row *row)
{
    txlm_session_options so = {.mem_len = o->mem_len, .same_length = -1, .max_segment = o->tgt_len};
    txlm_status st = txlm_batch_plan(m, row->streams, &so, &row->z);
    if (st) {
        snprintf(row->why, sizeof row->why, "refused: %s", txlm_last_error());
        return;
    }
    row->fits = row->z.total_bytes <= row->z.available_bytes;
    if (!row->fits)
        snprintf(row->why, sizeof row->why, "does not fit: needs %.1f MiB, %.1f MiB free",
                 (double)row->z.total_bytes / 1048576.0, (double)row->z.available_bytes / 1048576.0);
}

int bench_batch_run(txlm_model *m, const bench_opts *o, batch_result *r)
{
    r->n = o->n_batches;
    for (uint32_t i = 0; i < o->n_batches; i++) {
        batch_row *row = &r->rows[i];
        memset(row, 0, sizeof *row);
        row->streams = (uint32_t)o->batches[i];
        row->eval_sd = row->gen_sd = NAN; /* not measured */
        plan(m, o, row);
        if (!row->fits) continue;
        if ((o->workloads & W_EVAL) && with_streams(m, o, row, time_eval)) return 1;
        if ((o->workloads & W_GEN) && with_streams(m, o, row, time_gen)) return 1;
    }
    return 0;
}
