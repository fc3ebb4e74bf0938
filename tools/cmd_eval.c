/* txlm eval: the paper's evaluation protocol over a long text file.
 * The text streams through the tokenizer line by line; segments of
 * tgt_len tokens are scored against the next tokens, the memory carried
 * from segment to segment. Reports perplexity (word models) or bits per
 * character (character models). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static void usage(void)
{
    printf("usage: txlm eval -m MODEL (FILE | -f FILE) [--tgt-len L] [--mem-len M] [--clamp-len C] [--same-length 0|1] [--zero-memory 0|1]\n"
           "                 [--json] [--no-verify]\n\n"
           "Scores every token of FILE given the ones before it: segments of L tokens (default: the model's\n"
           "tgt_len), memory of M (default: the model's mem_len). Prints perplexity (word models) or bits per\n"
           "character (character models), the tokens evaluated and tokens/s. --json prints one JSON object.\n"
           "FILE - reads standard input; any other FILE must be a regular file.\n");
}

typedef struct eval_state {
    txlm_session *s;
    uint32_t seg;
    int32_t *buf;       /* pending tokens; buf[0] is the input of the next segment */
    size_t n, cap;
    float *lp;
    double nll;
    uint64_t scored;
} eval_state;

/* Scores full segments while at least seg + 1 tokens are pending (or all
 * that is left at the end). */
static txlm_status drain(eval_state *e, int final)
{
    while (e->n > e->seg || (final && e->n > 1)) {
        uint32_t len = e->n - 1 < e->seg ? (uint32_t)(e->n - 1) : e->seg;
        txlm_status st = txlm_session_score(e->s, e->buf, e->buf + 1, len, e->lp);
        if (st) return st;
        for (uint32_t i = 0; i < len; i++) e->nll -= e->lp[i];
        e->scored += len;
        memmove(e->buf, e->buf + len, (e->n - len) * sizeof *e->buf);
        e->n -= len;
    }
    return TXLM_OK;
}

static int push(eval_state *e, const int32_t *ids, size_t n)
{
    if (e->n + n > e->cap) {
        size_t cap = (e->n + n) * 2;
        int32_t *b = realloc(e->buf, cap * sizeof *b);
        if (!b) return cli_error("out of memory");
        e->buf = b, e->cap = cap;
    }
    memcpy(e->buf + e->n, ids, n * sizeof *ids);
    e->n += n;
    return 0;
}

/* A JSON string literal (paths may hold quotes, backslashes, control bytes). */
static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static void progress(double done, double total, double t0, uint64_t tokens)
{
    double el = cli_now() - t0, rate = el > 0 ? (double)tokens / el : 0, frac = total > 0 ? done / total : 0;
    double eta = frac > 0 ? el * (1 - frac) / frac : 0;
    int width = 30, fill = (int)(frac * width);
    fprintf(stderr, "\r[%.*s%*s] %5.1f%%  %llu tokens  %.1f tok/s  ETA %.0fs ", fill,
            "##############################", width - fill, "", 100 * frac, (unsigned long long)tokens, rate, eta);
}

static const char *const eval_flags[] = {"-m", "--model", "-f", "--file", "--tgt-len", NULL};

int cmd_eval(int argc, char **argv)
{
    const char *model = NULL, *file = NULL;
    uint32_t tgt_len = 0;
    int json = 0;
    txlm_session_options so = {.same_length = -1};
    txlm_model_options mo = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int r;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage();
            return 0;
        }
        if (!strcmp(a, "--json")) { json = 1; continue; }
        if (!strcmp(a, "--no-verify")) { mo.no_verify = 1; continue; }
        if (a[0] != '-' || !strcmp(a, "-")) { /* "-": standard input */
            if (file) return cli_error("eval: more than one FILE given");
            file = a;
            continue;
        }
        if (!(v = cli_option_value(argc, argv, &i, "eval", eval_flags))) return 1;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) model = v;
        else if (!strcmp(a, "-f") || !strcmp(a, "--file")) {
            if (file) return cli_error("eval: more than one FILE given");
            file = v;
        }
        else if (!strcmp(a, "--tgt-len")) {
            if (cli_parse_u32(v, a, &tgt_len)) return 1;
            if (tgt_len == 0) return cli_error("--tgt-len: must be at least 1 (leave it out for the model's own)");
        }
        else if ((r = cli_session_option(a, v, &so)) >= 0) { if (r) return 1; }
        else return cli_error("eval: unknown option \"%s\" (see txlm eval --help)", a);
    }
    if (!model || !file) return cli_error("eval: -m MODEL and FILE are required");
    FILE *in = cli_open_input(file);
    if (!in) return 1;
    struct stat st_file;
    double total = fstat(fileno(in), &st_file) == 0 ? (double)st_file.st_size : 0;

    int rc = 1;
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    eval_state e = {0};
    char *line = NULL;
    size_t line_cap = 0;
    txlm_status st;
    if (cli_open_model(model, &mo, &ctx, &m)) goto done;
    txlm_model_params p;
    txlm_model_get_params(m, &p);
    e.seg = tgt_len ? tgt_len : p.tgt_len ? p.tgt_len : 128;
    so.max_segment = e.seg;
    st = txlm_session_create(m, &so, &e.s);
    if (st) { rc = cli_lib_error(st, "creating a session"); goto done; }
    if (!(e.lp = malloc(e.seg * sizeof *e.lp))) { rc = cli_error("out of memory"); goto done; }

    int tty = isatty(fileno(stderr));
    double t0 = cli_now(), last = 0, done_bytes = 0;
    ssize_t len;
    while ((len = getline(&line, &line_cap, in)) > 0) {
        int32_t *ids = NULL;
        size_t n = 0;
        done_bytes += (double)len;
        st = txlm_tokenize(m, line, (size_t)len, &ids, &n);
        if (st) { rc = cli_lib_error(st, "tokenizing"); goto done; }
        int bad = push(&e, ids, n);
        txlm_free(ids);
        if (bad) goto done;
        if ((st = drain(&e, 0))) { rc = cli_lib_error(st, "running the model"); goto done; }
        if (tty && cli_now() - last > 0.25) {
            progress(done_bytes, total, t0, e.scored);
            last = cli_now();
        }
    }
    if (ferror(in)) { rc = cli_error("%s: read error", file); goto done; }
    if ((st = drain(&e, 1))) { rc = cli_lib_error(st, "running the model"); goto done; }
    if (tty) {
        progress(total, total, t0, e.scored);
        fputc('\n', stderr);
    }
    if (e.scored == 0) { rc = cli_error("%s: fewer than two tokens to evaluate", file); goto done; }
    double secs = cli_now() - t0, mean = e.nll / (double)e.scored;
    int chars = p.tokenizer != TXLM_TOKENIZER_WORD;
    if (json) {
        /* Log-probabilities are finite (the library refuses others), but
         * exp of a mean NLL above 709 overflows: JSON has no inf, so null. */
        double score = chars ? mean / log(2.0) : exp(mean);
        char score_s[64] = "null";
        if (isfinite(score)) snprintf(score_s, sizeof score_s, "%.6f", score);
        printf("{\"file\": ");
        json_string(file);
        printf(", \"tokens\": %llu, \"mean_nll\": %.6f, \"%s\": %s, \"seconds\": %.3f, "
               "\"tokens_per_second\": %.2f, \"tgt_len\": %u, \"mem_len\": %u}\n",
               (unsigned long long)e.scored, mean, chars ? "bpc" : "perplexity", score_s, secs, (double)e.scored / secs,
               e.seg, so.mem_len ? so.mem_len : p.mem_len);
    } else
        printf("%s: %llu tokens, mean NLL %.4f, %s %.4f, %.1f tokens/s\n", file, (unsigned long long)e.scored, mean,
               chars ? "bits per character" : "perplexity", chars ? mean / log(2.0) : exp(mean),
               (double)e.scored / secs);
    rc = cli_validation_status(ctx);
done:
    cli_close_input(in);
    free(line);
    free(e.buf);
    free(e.lp);
    txlm_session_free(e.s);
    txlm_model_free(m);
    txlm_context_destroy(ctx);
    return rc;
}
