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

int cmd_logprobs(int argc, char **argv)
{
    const char *model = NULL, *tokens_s = NULL, *segs_s = NULL, *out = NULL, *text_file = NULL;
    txlm_session_options so = {.same_length = -1};
    txlm_model_options mo = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int r;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage();
            return 0;
        } else if (!strcmp(a, "--no-verify")) {
            mo.no_verify = 1;
            continue;
        }
        if (!(v = cli_option_value(argc, argv, &i, "logprobs", logprobs_flags))) return 1;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) model = v;
        else if (!strcmp(a, "--tokens")) tokens_s = v;
        else if (!strcmp(a, "-f") || !strcmp(a, "--file") || !strcmp(a, "--text")) text_file = v;
        else if (!strcmp(a, "--segments")) segs_s = v;
        else if (!strcmp(a, "-o") || !strcmp(a, "--output")) out = v;
        else if ((r = cli_session_option(a, v, &so)) >= 0) { if (r) return 1; }
        else return cli_error("logprobs: unknown option \"%s\" (see txlm logprobs --help)", a);
    }
    if (!model || !(tokens_s || text_file) || !out)
        return cli_error("logprobs: -m MODEL, --tokens or -f FILE, and -o OUT are required");
    if (tokens_s && text_file) return cli_error("logprobs: give --tokens or -f FILE, not both");

    int32_t *tokens = NULL, *segs = NULL;
    uint32_t n_tokens = 0, n_segs = 0;
    if (tokens_s && cli_parse_list(tokens_s, &tokens, &n_tokens, "--tokens")) return 1;
    if (segs_s && cli_parse_list(segs_s, &segs, &n_segs, "--segments")) return free(tokens), 1;
    uint64_t sum = 0, longest = 0;
    for (uint32_t i = 0; i < n_segs; i++) {
        if (segs[i] == 0) return free(tokens), free(segs), cli_error("--segments: a segment of length 0");
        sum += (uint32_t)segs[i];
        if ((uint32_t)segs[i] > longest) longest = (uint32_t)segs[i];
    }

    int rc = 1;
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
    for (uint32_t done = 0, k = 0; done < n_tokens; k++) {
        uint32_t len = segs ? (uint32_t)segs[k] : (n_tokens - done < seg_len ? n_tokens - done : seg_len);
        st = txlm_session_feed(s, tokens + done, len, lp + (size_t)done * p.n_token);
        if (st) { rc = cli_lib_error(st, "running the model"); goto done; }
        done += len;
    }
    if (!strcmp(out, "-")) { /* standard output, as "-" reads standard input */
        size_t bytes = (size_t)n_tokens * p.n_token * sizeof *lp;
        rc = fwrite(lp, 1, bytes, stdout) != bytes || fflush(stdout) ? cli_error("writing to standard output failed") : 0;
    } else {
        rc = cli_write_file(out, lp, (size_t)n_tokens * p.n_token * sizeof *lp);
    }
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
