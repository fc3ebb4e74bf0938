/* txlm logprobs: token ids in, log-probabilities out, through one session. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(void)
{
    printf("usage: txlm logprobs -m MODEL (--tokens 3,17,5,... | -f FILE) [--segments 8,8,...] -o OUT.f32\n"
           "                     [--mem-len M] [--clamp-len C] [--same-length 0|1] [--zero-memory 0|1] [--no-verify]\n\n"
           "-f FILE (also --file, --text) tokenizes FILE with the model's tokenizer (its ids are then the tokens).\n"
           "Feeds the tokens through ONE session in segments of the given lengths (default: the model's\n"
           "tgt_len), carrying the memory, and writes little-endian float32 [tokens, n_token]\n"
           "log-probabilities, rows in input order.\n");
}

static const char *const logprobs_flags[] = {"-m", "--model", "--tokens", "-f", "--file", "--text", "--segments", "-o", "--output", NULL};

/* --segments: their lengths, sum and longest (none given: n_segs 0). */
static int parse_segments(const char *list, int32_t **segs, uint32_t *n_segs, uint64_t *sum, uint64_t *longest)
{
    *sum = *longest = 0;
    if (!list) return 0;
    if (cli_parse_list(list, segs, n_segs, "--segments")) return 1;
    for (uint32_t i = 0; i < *n_segs; i++) {
        if ((*segs)[i] == 0) return cli_error("--segments: a segment of length 0");
        *sum += (uint32_t)(*segs)[i];
        if ((uint32_t)(*segs)[i] > *longest) *longest = (uint32_t)(*segs)[i];
    }
    return 0;
}

/* The tokens through one session in segments (segs, or seg_len each), their log-probabilities into lp. */
static int feed_all(txlm_session *s, const int32_t *tokens, uint32_t n_tokens, const int32_t *segs, uint32_t seg_len,
                    uint32_t n_token, float *lp)
{
    for (uint32_t done = 0, k = 0; done < n_tokens; k++) {
        uint32_t len = segs ? (uint32_t)segs[k] : (n_tokens - done < seg_len ? n_tokens - done : seg_len);
        txlm_status st = txlm_session_feed(s, tokens + done, len, lp + (size_t)done * n_token);
        if (st) return cli_lib_error(st, "running the model");
        done += len;
    }
    return 0;
}

/* To the file out, or standard output for "-" (as "-" reads standard input). */
static int write_out(const char *out, const float *lp, size_t bytes)
{
    if (strcmp(out, "-")) return cli_write_file(out, lp, bytes);
    return fwrite(lp, 1, bytes, stdout) != bytes || fflush(stdout) ? cli_error("writing to standard output failed") : 0;
}

typedef struct logprobs_args {
    const char *model, *tokens, *segments, *out, *text_file;
    txlm_session_options so;
    txlm_model_options mo;
} logprobs_args;

/* 0, 1 after an error, 2 after --help. */
static int parse_args(int argc, char **argv, logprobs_args *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int r;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage();
            return 2;
        } else if (!strcmp(a, "--no-verify")) {
            o->mo.no_verify = 1;
            continue;
        }
        if (!(v = cli_option_value(argc, argv, &i, "logprobs", logprobs_flags))) return 1;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) o->model = v;
        else if (!strcmp(a, "--tokens")) o->tokens = v;
        else if (!strcmp(a, "-f") || !strcmp(a, "--file") || !strcmp(a, "--text")) o->text_file = v;
        else if (!strcmp(a, "--segments")) o->segments = v;
        else if (!strcmp(a, "-o") || !strcmp(a, "--output")) o->out = v;
        else if ((r = cli_session_option(a, v, &o->so)) >= 0) { if (r) return 1; }
        else return cli_error("logprobs: unknown option \"%s\" (see txlm logprobs --help)", a);
    }
    if (!o->model || !(o->tokens || o->text_file) || !o->out)
        return cli_error("logprobs: -m MODEL, --tokens or -f FILE, and -o OUT are required");
    if (o->tokens && o->text_file) return cli_error("logprobs: give --tokens or -f FILE, not both");
    return 0;
}

int cmd_logprobs(int argc, char **argv)
{
    logprobs_args o = {.so = {.same_length = -1}};
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc == 2 ? 0 : 1;
    const char *model = o.model, *tokens_s = o.tokens, *segs_s = o.segments, *out = o.out, *text_file = o.text_file;
    txlm_session_options so = o.so;
    txlm_model_options mo = o.mo;

    int32_t *tokens = NULL, *segs = NULL;
    uint32_t n_tokens = 0, n_segs = 0;
    uint64_t sum, longest;
    if (tokens_s && cli_parse_list(tokens_s, &tokens, &n_tokens, "--tokens")) return 1;
    if (parse_segments(segs_s, &segs, &n_segs, &sum, &longest)) return free(tokens), free(segs), 1;

    rc = 1;
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    float *lp = NULL;
    txlm_status st;
    /* the text first: a bad file fails before the device starts */
    size_t text_len = 0;
    char *text = text_file ? cli_read_file(text_file, &text_len) : NULL;
    if (text_file && !text) goto done;
    if (cli_open_model(model, &mo, &ctx, &m)) goto done;
    txlm_model_params p;
    txlm_model_get_params(m, &p);
    if (text_file && (rc = cli_tokenize(m, text, text_len, text_file, &tokens, &n_tokens))) goto done;
    rc = 1;
    if (segs && sum != n_tokens) {
        rc = cli_error("--segments add up to %llu but %u tokens were given", (unsigned long long)sum, n_tokens);
        goto done;
    }
    uint32_t seg_len = p.tgt_len ? p.tgt_len : 128;
    if (!segs) longest = seg_len;
    so.max_segment = (uint32_t)longest;
    st = txlm_session_create(m, &so, &s);
    if (st) { rc = cli_lib_error(st, "creating a session"); goto done; }
    lp = malloc((size_t)n_tokens * p.n_token * sizeof *lp);
    if (!lp) { rc = cli_error("out of memory for %u x %u log-probabilities", n_tokens, p.n_token); goto done; }
    if ((rc = feed_all(s, tokens, n_tokens, segs, seg_len, p.n_token, lp))) goto done;
    rc = write_out(out, lp, (size_t)n_tokens * p.n_token * sizeof *lp);
    if (!rc) rc = cli_validation_status(ctx);
done:
    free(text);
    free(lp);
    txlm_session_free(s);
    txlm_model_free(m);
    txlm_context_destroy(ctx);
    free(tokens);
    free(segs);
    return rc;
}
