/* txlm compare: how far model B's predictions are from model A's on one
 * text (a quantised packing against its f32 original, most often). Both
 * score the same tokens in the same segments with their own memory; at
 * every position the full next-token distributions give the KL divergence
 * of B from A and whether their most likely tokens agree. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_scoring.h"

static void usage(void)
{
    printf("usage: txlm compare -m A.txlm -m B.txlm (FILE | -f FILE | -) [--per-token OUT.tsv] [--json]\n"
           "                    [--tgt-len L] [--mem-len M] [--clamp-len C] [--same-length 0|1] [--zero-memory 0|1]\n"
           "                    [--progress] [--no-verify] [--binary-ok]\n\n"
           "Scores every token of FILE with both models, as txlm eval does (A's tokenizer; the two\n"
           "vocabularies must be the same), and reports the KL divergence KL(A || B) of B's next-token\n"
           "distribution from A's (mean with its standard error, and max), how often their most likely\n"
           "tokens agree, and B's mean NLL and perplexity (bits per character for character models)\n"
           "minus A's. --per-token writes one TSV row a position (\"-\": standard output, the figures then go\n"
           "to standard error; a file is checked before the text is read and must not be a model or the text):\n"
           "  position  token  nll_a  nll_b  kl  top_a  top_b\n"
           "Ctrl-C prints the figures so far and exits 130. A FILE that is plainly not text (a NUL byte, or\n"
           "mostly not UTF-8, in its first 4 KiB) is refused at once; --binary-ok reads it.\n");
}

typedef struct compare_state {
    const char *per_token;
    int json, out_k;       /* out_k: --per-token's index in run.io */
    cli_text_run run;
    txlm_model *m[2];
    txlm_model_params p;
    txlm_session *s[2];
    cli_segments q;
    float *lp[2];          /* [seg, n_token] each */
    FILE *out;             /* --per-token */
    cli_progress pb;
    cli_stats kl, nll[2], diff;
    double kl_max;
    uint64_t agree;
} compare_state;

static int own_option(void *user, int argc, char **argv, int *i)
{
    compare_state *c = user;
    return cli_report_option(argc, argv, i, &c->json, &c->per_token);
}

/* The same vocabulary, symbol for symbol: else the ids mean different things. */
static int same_vocabulary(const compare_state *c)
{
    txlm_model_params q;
    txlm_model_get_params(c->m[1], &q);
    if (q.n_token != c->p.n_token)
        return cli_error("compare: %s has %u tokens, %s %u", c->run.model[0], c->p.n_token, c->run.model[1], q.n_token);
    if (q.tokenizer != c->p.tokenizer) return cli_error("compare: the two models tokenize differently");
    for (uint32_t id = 0; id < q.n_token; id++) {
        size_t la = 0, lb = 0;
        const char *a = txlm_token_symbol(c->m[0], (int32_t)id, &la), *b = txlm_token_symbol(c->m[1], (int32_t)id, &lb);
        if (la != lb || (la && memcmp(a, b, la)))
            return cli_error("compare: the vocabularies differ at token %u (\"%.*s\" and \"%.*s\")", id, (int)la, a,
                             (int)lb, b);
    }
    return 0;
}

static uint32_t argmax(const float *x, uint32_t n)
{
    uint32_t best = 0;
    for (uint32_t i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

/* KL(A || B) = sum over the vocabulary of p_A (log p_A - log p_B). */
static double kl_divergence(const float *a, const float *b, uint32_t n)
{
    double kl = 0;
    for (uint32_t i = 0; i < n; i++)
        if (a[i] > -INFINITY) kl += exp((double)a[i]) * ((double)a[i] - (double)b[i]);
    return kl;
}

static void write_symbol(const compare_state *c, int32_t id)
{
    size_t len = 0;
    const char *s = txlm_token_symbol(c->m[0], id, &len);
    cli_tsv_field(c->out, s, len);
}

static void one_position(compare_state *c, const float *a, const float *b, int32_t target)
{
    uint32_t n = c->p.n_token, ta = argmax(a, n), tb = argmax(b, n);
    double kl = kl_divergence(a, b, n), na = -(double)a[target], nb = -(double)b[target];
    cli_stats_add(&c->kl, kl);
    cli_stats_add(&c->nll[0], na);
    cli_stats_add(&c->nll[1], nb);
    cli_stats_add(&c->diff, nb - na);
    if (kl > c->kl_max) c->kl_max = kl;
    c->agree += ta == tb;
    if (!c->out) return;
    fprintf(c->out, "%llu\t", (unsigned long long)c->kl.n);
    write_symbol(c, target);
    fprintf(c->out, "\t%.6f\t%.6f\t%.8f\t", na, nb, kl);
    write_symbol(c, (int32_t)ta);
    fputc('\t', c->out);
    write_symbol(c, (int32_t)tb);
    fputc('\n', c->out);
}

static void show(compare_state *c, int final)
{
    char extra[64];
    snprintf(extra, sizeof extra, "mean KL %.6f", c->kl.mean);
    cli_progress_show(&c->pb, cli_text_run_fraction(&c->run), c->kl.n, extra, final);
}

static int run_segments(compare_state *c, int final)
{
    uint32_t len;
    while (!cli_interrupted && (len = cli_segments_next(&c->q, final))) {
        for (int k = 0; k < 2; k++) {
            txlm_status st = txlm_session_feed(c->s[k], c->q.buf, len, c->lp[k]);
            if (st) return cli_lib_error(st, k ? "running model B" : "running model A");
        }
        for (uint32_t i = 0; i < len; i++)
            one_position(c, c->lp[0] + (size_t)i * c->p.n_token, c->lp[1] + (size_t)i * c->p.n_token, c->q.buf[i + 1]);
        cli_segments_done(&c->q, len);
        show(c, 0);
    }
    return 0;
}

static int compare_line(void *user, const char *line, size_t len)
{
    compare_state *c = user;
    return cli_segments_push_text(&c->q, c->m[0], line, len) || run_segments(c, 0);
}

static void print_json(const compare_state *c, int chars)
{
    double n = (double)c->kl.n, agree = n > 0 ? (double)c->agree / n : NAN, ln2 = log(2.0);
    double fa = chars ? c->nll[0].mean / ln2 : exp(c->nll[0].mean), fb = chars ? c->nll[1].mean / ln2 : exp(c->nll[1].mean);
    const char *fig = chars ? "bpc" : "perplexity";
    FILE *o = c->run.io.report;
    fprintf(o, "{\"file\": ");
    cli_json_string(o, c->run.file, strlen(c->run.file));
    fprintf(o, ", \"model_a\": ");
    cli_json_string(o, c->run.model[0], strlen(c->run.model[0]));
    fprintf(o, ", \"model_b\": ");
    cli_json_string(o, c->run.model[1], strlen(c->run.model[1]));
    fprintf(o, ", \"tokens\": %llu, \"interrupted\": %s", (unsigned long long)c->kl.n, cli_interrupted ? "true" : "false");
    /* sig: significant digits, for figures that may be tiny (a KL of 1e-9 keeps its digits) */
    const struct { const char *name; double v; int digits, sig; } f[] = {
        {"kl_mean", c->kl.mean, 9, 1}, {"kl_mean_se", cli_stats_se(&c->kl), 6, 1}, {"kl_max", c->kl_max, 9, 1},
        {"top1_agreement", agree, 6, 0}, {"top1_agreement_se", sqrt(agree * (1 - agree) / n), 6, 1},
        {"mean_nll_a", c->nll[0].mean, 6, 0}, {"mean_nll_b", c->nll[1].mean, 6, 0},
        {"delta_mean_nll", c->diff.mean, 6, 0}, {"delta_mean_nll_se", cli_stats_se(&c->diff), 6, 1},
    };
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        fprintf(o, ", \"%s\": ", f[i].name);
        if (f[i].sig) cli_json_sig(o, f[i].v, f[i].digits);
        else cli_json_number(o, f[i].v, f[i].digits);
    }
    fprintf(o, ", \"%s_a\": ", fig);
    cli_json_number(o, fa, 6);
    fprintf(o, ", \"%s_b\": ", fig);
    cli_json_number(o, fb, 6);
    fprintf(o, ", \"delta_%s\": ", fig);
    cli_json_number(o, fb - fa, 6);
    fprintf(o, "}\n");
}

static void print_text(const compare_state *c, int chars)
{
    double n = (double)c->kl.n, agree = (double)c->agree / n, ln2 = log(2.0);
    double fa = chars ? c->nll[0].mean / ln2 : exp(c->nll[0].mean), fb = chars ? c->nll[1].mean / ln2 : exp(c->nll[1].mean);
    const char *fig = chars ? "bits per character" : "perplexity";
    FILE *o = c->run.io.report;
    fprintf(o, "%s: %llu tokens%s\n", c->run.file, (unsigned long long)c->kl.n, cli_interrupted ? " (interrupted)" : "");
    fprintf(o, "  A %s: mean NLL %.6f, %s %.4f\n", c->run.model[0], c->nll[0].mean, fig, fa);
    fprintf(o, "  B %s: mean NLL %.6f, %s %.4f\n", c->run.model[1], c->nll[1].mean, fig, fb);
    fprintf(o, "  KL(A || B): mean %.8f +/- %.8f, max %.8f\n", c->kl.mean, cli_stats_se(&c->kl), c->kl_max);
    fprintf(o, "  top-1 agreement: %.4f%% +/- %.4f%%\n", 100 * agree, 100 * sqrt(agree * (1 - agree) / n));
    fprintf(o, "  B - A: mean NLL %+.6f +/- %.6f, %s %+.4f (%+.3f%%)\n", c->diff.mean, cli_stats_se(&c->diff), fig, fb - fa,
           100 * (fb - fa) / fa);
}

static int open_models(compare_state *c, txlm_context **ctx)
{
    if (cli_check_input(c->run.model[1], "loading model B")) return 1;
    if (cli_open_model(c->run.model[0], &c->run.mo, ctx, &c->m[0])) return 1;
    txlm_status st = txlm_model_load(*ctx, c->run.model[1], &c->run.mo, &c->m[1]);
    if (st) return st == TXLM_ERR_CANCELLED ? 1 : cli_lib_error(st, "loading model B");
    txlm_model_get_params(c->m[0], &c->p);
    if (same_vocabulary(c)) return 1;
    c->q.seg = cli_text_run_segment(&c->run, &c->p);
    for (int k = 0; k < 2; k++) {
        if ((st = txlm_session_create(c->m[k], &c->run.so, &c->s[k]))) return cli_lib_error(st, "creating a session");
        if (!(c->lp[k] = malloc((size_t)c->q.seg * c->p.n_token * sizeof(float))))
            return cli_error("out of memory for %u x %u log-probabilities", c->q.seg, c->p.n_token);
    }
    return 0;
}

/* --per-token to a file is kept in memory and written whole at the end
 * (through the temporary opened before the work); "-" streams to stdout. */
static int compare_run(compare_state *c)
{
    char *buf = NULL;
    size_t size = 0;
    if (c->per_token) {
        c->out = strcmp(c->per_token, "-") ? open_memstream(&buf, &size) : stdout;
        if (!c->out) return cli_error("out of memory");
        fprintf(c->out, "position\ttoken\tnll_a\tnll_b\tkl\ttop_a\ttop_b\n");
    }
    cli_progress_start(&c->pb, c->run.progress);
    int rc = cli_each_line(&c->run, compare_line, c);
    if (!rc && !cli_interrupted) rc = run_segments(c, 1);
    show(c, 1);
    cli_progress_end(&c->pb);
    if (c->out && c->out != stdout) {
        if (fclose(c->out)) rc = rc ? rc : cli_error("out of memory");
        else if (!rc && c->kl.n > 0) rc = cli_files_write(&c->run.io, c->out_k, buf, size) || cli_files_commit(&c->run.io);
    }
    c->out = NULL;
    free(buf);
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    compare_state c = {0};
    int rc = cli_text_run_parse(&c.run, argc, argv, "compare", 2, usage, own_option, &c);
    if (rc) return rc < 0 ? 0 : rc;
    txlm_context *ctx = NULL;
    c.out_k = cli_files_output(&c.run.io, "--per-token", c.per_token, 0);
    rc = cli_text_run_outputs(&c.run) || open_models(&c, &ctx) || compare_run(&c);
    if (!rc && c.kl.n == 0 && !cli_interrupted) rc = cli_error("%s: fewer than two tokens to compare", c.run.file);
    else if (!rc || (cli_interrupted && c.kl.n > 0)) {
        int chars = c.p.tokenizer != TXLM_TOKENIZER_WORD;
        if (c.json) print_json(&c, chars);
        else print_text(&c, chars);
        if (!rc) rc = cli_validation_status(ctx);
    }
    rc = cli_text_run_finish(&c.run, rc);
    cli_segments_free(&c.q);
    for (int k = 0; k < 2; k++) {
        free(c.lp[k]);
        txlm_session_free(c.s[k]);
        txlm_model_free(c.m[k]);
    }
    txlm_context_destroy(ctx);
    return rc;
}
