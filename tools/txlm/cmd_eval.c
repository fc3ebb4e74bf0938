/* txlm eval: the paper's evaluation protocol over a long text file.
 * The text streams through the tokenizer line by line; segments of
 * tgt_len tokens are scored against the next tokens, the memory carried
 * from segment to segment. Reports perplexity (word models) or bits per
 * character (character models) with the standard error of the mean NLL,
 * and how many targets were <unk>. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_scoring.h"
#include "eval_batch.h"

static void usage(void)
{
    printf("usage: txlm eval -m MODEL (FILE | -f FILE | -) [--tgt-len L] [--mem-len M] [--clamp-len C] [--same-length 0|1]\n"
           "                 [--zero-memory 0|1] [--json] [--per-token OUT.f32] [--progress] [--no-verify] [--batch N]\n"
           "                 [--binary-ok]\n\n"
           "Scores every token of FILE given the ones before it: segments of L tokens (default: the model's\n"
           "tgt_len), memory of M (default: the model's mem_len). Prints perplexity (word models) or bits per\n"
           "character (character models) with its standard error (\"perplexity x +/- y\": the mean NLL's\n"
           "standard error times the perplexity), the <unk> targets (a warning above 5%%), the tokens evaluated\n"
           "and tokens/s. --json prints one JSON object. --per-token writes each target's NLL (nats) as\n"
           "little-endian float32 (\"-\": standard output, never a terminal; the figures then go to standard\n"
           "error); it must not be the model or the text, and is checked before the text is. A progress bar with the running figure goes to stderr on a terminal\n"
           "(--progress: always). Ctrl-C prints the figures over the text scored so far and exits 130.\n"
           "FILE - reads standard input; any other FILE must be a regular file. A FILE that is plainly not\n"
           "text (a NUL byte, or mostly not UTF-8, in its first 4 KiB) is refused at once; --binary-ok reads it.\n\n"
           "--batch N: the authors' eval.py with bsz N: the tokens cut into N contiguous parts of\n"
           "floor(tokens / N) (the last tokens %% N dropped), each part scored with its own memory, all parts'\n"
           "segments fed together as one batch; the figures are over every part's targets (--per-token: part\n"
           "after part). --batch 1 gives the figures without it.\n");
}

typedef struct eval_state {
    const char *per_token;
    int json, chars, out;  /* out: --per-token's index in run.io */
    cli_text_run run;
    cli_scorer sc;
    cli_stats nll;
    uint64_t unk;
    float *nlls;        /* --per-token: every target's NLL */
    size_t nlls_cap;
    cli_progress pb;
    uint32_t batch;     /* --batch N: N streams in one pass (0: the text streamed through one session) */
    uint64_t dropped;   /* --batch: the tokens past N equal parts */
} eval_state;

/* --batch N, N of 1..CLI_MAX_STREAMS (the most streams the batch helpers take). */
static int batch_option(eval_state *e, int argc, char **argv, int *i)
{
    const char *v = cli_value(argc, argv, i);
    if (!v || cli_parse_u32(v, "--batch", &e->batch)) return 1;
    if (e->batch == 0 || e->batch > 4096) return cli_error("--batch: %u streams, give 1..4096", e->batch);
    return 0;
}

static int own_option(void *user, int argc, char **argv, int *i)
{
    eval_state *e = user;
    if (!strcmp(argv[*i], "--batch")) return batch_option(e, argc, argv, i);
    return cli_report_option(argc, argv, i, &e->json, &e->per_token);
}

/* Perplexity of a mean NLL, or bits per character. */
static double figure(const eval_state *e, double mean) { return e->chars ? mean / log(2.0) : exp(mean); }
/* Its standard error from the mean NLL's: exp's derivative (llama.cpp's PPL +/-), or the same scale. */
static double figure_se(const eval_state *e, double mean, double se)
{
    return e->chars ? se / log(2.0) : exp(mean) * se;
}

static int keep_nll(eval_state *e, double nll)
{
    if (e->nll.n == e->nlls_cap) {
        size_t cap = e->nlls_cap ? e->nlls_cap * 2 : 4096;
        float *b = realloc(e->nlls, cap * sizeof *b);
        if (!b) return cli_error("out of memory for the per-token NLLs");
        e->nlls = b, e->nlls_cap = cap;
    }
    e->nlls[e->nll.n] = (float)nll;
    return 0;
}

/* The progress bar with the running figure. */
static void show(eval_state *e, int final)
{
    char extra[64];
    snprintf(extra, sizeof extra, "%s %.4f", e->chars ? "bpc" : "PPL", figure(e, e->nll.mean));
    cli_progress_show(&e->pb, cli_text_run_fraction(&e->run), e->nll.n, extra, final);
}

static int run_segments(eval_state *e, int final)
{
    long len;
    while ((len = cli_scorer_next(&e->sc, final)) > 0) {
        for (long i = 0; i < len; i++) {
            if (e->per_token && keep_nll(e, -(double)e->sc.lp[i])) return 1;
            cli_stats_add(&e->nll, -(double)e->sc.lp[i]);
            e->unk += e->sc.q.buf[i + 1] == e->sc.p.unk_id;
        }
        cli_segments_done(&e->sc.q, (uint32_t)len);
        show(e, 0);
    }
    return len < 0;
}

static int eval_line(void *user, const char *line, size_t len)
{
    eval_state *e = user;
    return cli_segments_push_text(&e->sc.q, e->sc.m, line, len) || run_segments(e, 0);
}

static void print_json(const eval_state *e, double secs)
{
    double mean = e->nll.mean, se = cli_stats_se(&e->nll), n = (double)e->nll.n;
    const char *fig = e->chars ? "bpc" : "perplexity";
    FILE *o = e->run.io.report;
    fprintf(o, "{\"file\": ");
    cli_json_string(o, e->run.file, strlen(e->run.file));
    fprintf(o, ", \"tokens\": %llu, \"interrupted\": %s, \"mean_nll\": ", (unsigned long long)e->nll.n,
            cli_interrupted ? "true" : "false");
    /* JSON has no NaN or infinity: exp of a mean NLL above 709 is null */
    cli_json_number(o, mean, 6);
    fprintf(o, ", \"mean_nll_se\": ");
    cli_json_number(o, se, 6);
    fprintf(o, ", \"%s\": ", fig);
    cli_json_number(o, figure(e, mean), 6);
    fprintf(o, ", \"%s_se\": ", fig);
    cli_json_number(o, figure_se(e, mean, se), 6);
    fprintf(o, ", \"unk\": %llu, \"unk_rate\": ", (unsigned long long)e->unk);
    cli_json_number(o, (double)e->unk / n, 6);
    fprintf(o, ", \"seconds\": %.3f, \"tokens_per_second\": ", secs);
    cli_json_number(o, n / secs, 2);
    fprintf(o, ", \"tgt_len\": %u, \"mem_len\": %u", e->sc.q.seg, e->run.so.mem_len ? e->run.so.mem_len : e->sc.p.mem_len);
    if (e->batch) fprintf(o, ", \"batch\": %u, \"dropped_tokens\": %llu", e->batch, (unsigned long long)e->dropped);
    fprintf(o, "}\n");
}

static void print_text(const eval_state *e, double secs)
{
    double mean = e->nll.mean, se = cli_stats_se(&e->nll);
    fprintf(e->run.io.report, "%s: %llu tokens, mean NLL %.4f +/- %.4f, %s %.4f +/- %.4f, %llu <unk> (%.2f%%), %.1f tokens/s%s\n",
            e->run.file, (unsigned long long)e->nll.n, mean, se, e->chars ? "bits per character" : "perplexity",
            figure(e, mean), figure_se(e, mean, se), (unsigned long long)e->unk, 100.0 * (double)e->unk / (double)e->nll.n,
            (double)e->nll.n / secs, cli_interrupted ? " (interrupted)" : "");
}

/* The figures, the <unk> warning and the per-token file. */
static int report(eval_state *e, double secs)
{
    if (e->json) print_json(e, secs);
    else print_text(e, secs);
    cli_warn_unk(e->unk, e->nll.n, "the tokens scored",
                 "its perplexity is not comparable with one over the model's own kind of text");
    if (!e->per_token) return 0;
    return cli_files_write(&e->run.io, e->out, e->nlls, e->nll.n * sizeof *e->nlls) || cli_files_commit(&e->run.io);
}

/* The text streamed through one session, segment by segment as it is read. */
static int run_streamed(eval_state *e, double *secs)
{
    int rc = cli_scorer_open(&e->sc, &e->run);
    e->chars = e->sc.p.tokenizer != TXLM_TOKENIZER_WORD;
    double t0 = cli_now();
    if (!rc) {
        cli_progress_start(&e->pb, e->run.progress);
        rc = cli_each_line(&e->run, eval_line, e);
        if (!rc && !cli_interrupted) rc = run_segments(e, 1);
        show(e, 1);
        cli_progress_end(&e->pb);
    }
    *secs = cli_now() - t0;
    return rc;
}

/* --batch N: the parts scored side by side (eval_batch.c); their NLLs
 * enter the figures part after part, so --batch 1 adds them in the order
 * the streamed run does. *secs: the time the scoring took. */
static int run_batched(eval_state *e, double *secs)
{
    eval_batch_out b;
    int rc = eval_batch_score(&e->run, e->batch, &e->sc, &b);
    e->chars = e->sc.p.tokenizer != TXLM_TOKENIZER_WORD;
    for (uint64_t i = 0; !rc && i < b.n; i++) {
        if (e->per_token && keep_nll(e, b.nll[i])) rc = 1;
        cli_stats_add(&e->nll, b.nll[i]);
    }
    e->unk = b.unk, e->dropped = b.dropped, *secs = b.secs;
    if (!rc && b.dropped)
        fprintf(stderr, "txlm: --batch %u: %llu tokens in %u parts of %llu; the last %llu not scored\n", e->batch,
                (unsigned long long)b.tokens, e->batch, (unsigned long long)(b.tokens / e->batch),
                (unsigned long long)b.dropped);
    free(b.nll);
    return rc;
}

int cmd_eval(int argc, char **argv)
{
    eval_state e = {0};
    int rc = cli_text_run_parse(&e.run, argc, argv, "eval", 1, usage, own_option, &e);
    if (rc) return rc < 0 ? 0 : rc;
    e.out = cli_files_output(&e.run.io, "--per-token", e.per_token, 1);
    double secs = 0;
    rc = cli_text_run_outputs(&e.run);
    if (!rc) rc = e.batch ? run_batched(&e, &secs) : run_streamed(&e, &secs);
    if (!rc && e.nll.n == 0 && !cli_interrupted) rc = cli_error("%s: fewer than two tokens to evaluate", e.run.file);
    else if (!rc && e.nll.n > 0) {
        rc = report(&e, secs);
        if (!rc) rc = cli_validation_status(e.sc.ctx);
    }
    rc = cli_text_run_finish(&e.run, rc);
    free(e.nlls);
    cli_scorer_free(&e.sc);
    return rc;
}
