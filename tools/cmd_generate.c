/* txlm generate: text in, text out, streamed token by token. The prompt is
 * fed in segments (memory carried), then each sampled token is fed back as
 * a one-token segment. Ctrl-C stops cleanly: loading and prompt feeding are
 * cancelled through the library's progress callback, generation after the
 * current token; what was generated is flushed with a final newline and
 * the exit status is 130. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

static int stop_requested(void *user, double fraction)
{
    (void)user, (void)fraction;
    return interrupted;
}

static void usage(void)
{
    printf("usage: txlm generate -m MODEL [-p PROMPT | -f PROMPT_FILE] [-n TOKENS] [--temperature T]\n"
           "                     [--top-k K] [--top-p P] [--seed S] [--mem-len M] [--clamp-len C]\n"
           "                     [--same-length 0|1] [--zero-memory 0|1] [--no-verify]\n\n"
           "Prints the prompt, then streams the continuation. Defaults: 200 tokens, temperature 1 (the model's own\n"
           "distribution, drawn exactly and cheaply through the adaptive softmax's clusters), no top-k/top-p,\n"
           "seed 1 (same seed, same text). Temperature 0 picks the most likely token.\n\n"
           "Cost: at temperature 1 without top-k/top-p a token costs the head of the softmax plus the one tail\n"
           "cluster drawn. Any other temperature, --top-k or --top-p needs the whole distribution: every tail\n"
           "cluster's logits (the full output layer, d_embed x n_token multiply-adds) and a host read-back of\n"
           "n_token floats per token; --top-k and --top-p then sort all n_token probabilities (n log n).\n"
           "On a 267k-word vocabulary that is several times the cost of the default.\n\n"
           "Ctrl-C stops after the current token (or cancels loading and prompt feeding), prints what was\n"
           "generated and a newline, and exits with status 130.\n");
}

/* Streams the generated text through the library's streaming detokenizer,
 * which writes each token's text once it is final (word models re-attach
 * punctuation, wt103 models join "1 @,@ 000" into "1,000"), at a cost per
 * token that does not grow with the line. The prompt's last line goes in
 * first so spacing and punctuation join up; its text is already on the
 * screen as typed, so the first `skip` bytes out (the prompt's own
 * detokenized text that was held back) are not printed again. */
typedef struct streamer {
    txlm_detokenizer *d;
    size_t skip;
} streamer;

static void stream_out(streamer *st, const char *piece, size_t len)
{
    size_t drop = len < st->skip ? len : st->skip;
    st->skip -= drop;
    fwrite(piece + drop, 1, len - drop, stdout);
}

/* The prompt's last line (ids[from..n)): pushed, its text not printed. */
static int stream_prompt(streamer *st, txlm_model *m, const int32_t *ids, size_t from, size_t n)
{
    char *text = NULL;
    txlm_status s = txlm_detokenize(m, ids + from, n - from, &text);
    if (s) return cli_lib_error(s, "detokenizing");
    st->skip = strlen(text);
    txlm_free(text);
    for (size_t i = from; i < n; i++) {
        const char *piece;
        size_t len;
        if ((s = txlm_detokenizer_push(st->d, ids[i], &piece, &len))) return cli_lib_error(s, "detokenizing");
        st->skip -= len < st->skip ? len : st->skip;
    }
    return 0;
}

static int stream_token(streamer *st, int32_t id)
{
    const char *piece;
    size_t len;
    txlm_status s = txlm_detokenizer_push(st->d, id, &piece, &len);
    if (s) return cli_lib_error(s, "detokenizing");
    stream_out(st, piece, len);
    fflush(stdout);
    return 0;
}

/* Prints what the last tokens held back. */
static void stream_flush(streamer *st)
{
    const char *piece;
    size_t len;
    if (!txlm_detokenizer_flush(st->d, &piece, &len)) stream_out(st, piece, len);
}

int cmd_generate(int argc, char **argv)
{
    const char *model = NULL, *prompt = NULL, *prompt_file = NULL;
    uint32_t n_gen = 200;
    uint64_t seed = 1;
    txlm_sampling samp = {.temperature = 1.0f};
    txlm_session_options so = {.same_length = -1};
    txlm_model_options mo = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage();
            return 0;
        }
        if (!strcmp(a, "--no-verify")) { mo.no_verify = 1; continue; }
        if (!(v = cli_value(argc, argv, &i))) return 1;
        char *end;
        int r;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) model = v;
        else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) prompt = v;
        else if (!strcmp(a, "-f") || !strcmp(a, "--file") || !strcmp(a, "--prompt-file")) prompt_file = v;
        else if (!strcmp(a, "-n")) { if (cli_parse_u32(v, a, &n_gen)) return 1; }
        else if (!strcmp(a, "--top-k")) { if (cli_parse_u32(v, a, &samp.top_k)) return 1; }
        else if ((r = cli_session_option(a, v, &so)) >= 0) { if (r) return 1; }
        else if (!strcmp(a, "--temperature")) {
            samp.temperature = strtof(v, &end);
            if (!*v || *end || !(samp.temperature >= 0)) return cli_error("--temperature: bad value \"%s\"", v);
        } else if (!strcmp(a, "--top-p")) {
            samp.top_p = strtof(v, &end);
            if (!*v || *end || !(samp.top_p >= 0 && samp.top_p <= 1)) return cli_error("--top-p: must be in [0, 1]");
        } else if (!strcmp(a, "--seed")) {
            seed = strtoull(v, &end, 10);
            if (!*v || *end) return cli_error("--seed: \"%s\" is not a number", v);
        } else return cli_error("generate: unknown option \"%s\" (see txlm generate --help)", a);
    }
    if (!model) return cli_error("generate: -m MODEL is required");
    if (prompt && prompt_file) return cli_error("generate: give -p or -f, not both");

    int rc = 1;
    char *owned_prompt = NULL;
    int32_t *ids = NULL;
    size_t n_ids = 0;
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    streamer st = {0};
    size_t prompt_len = 0;
    if (prompt_file && !(prompt = owned_prompt = cli_read_file(prompt_file, &prompt_len))) return 1;
    interrupted = 0;
    signal(SIGINT, on_sigint);
    mo.progress = stop_requested;
    txlm_status e = cli_open_model(model, &mo, &ctx, &m);
    if (e) {
        rc = e == TXLM_ERR_CANCELLED ? 130 : 1;
        goto done;
    }
    txlm_model_params p;
    txlm_model_get_params(m, &p);
    so.max_segment = p.tgt_len ? p.tgt_len : 128;
    if ((e = txlm_session_create(m, &so, &s))) { rc = cli_lib_error(e, "creating a session"); goto done; }
    txlm_session_set_seed(s, seed);
    if (prompt && *prompt && (e = txlm_tokenize(m, prompt, strlen(prompt), &ids, &n_ids))) {
        rc = cli_lib_error(e, "tokenizing the prompt");
        goto done;
    }
    if (n_ids == 0) {
        /* no prompt: start where a text starts, after a line break */
        int32_t start = p.eos_id >= 0 ? p.eos_id : 0;
        free(ids);
        if (!(ids = malloc(sizeof *ids))) { rc = cli_error("out of memory"); goto done; }
        ids[0] = start;
        n_ids = 1;
    } else if (prompt) {
        fputs(prompt, stdout);
        fflush(stdout);
    }
    if ((e = txlm_session_feed_long(s, ids, n_ids, stop_requested, NULL, NULL))) {
        if (e == TXLM_ERR_CANCELLED) fputc('\n', stdout);
        rc = e == TXLM_ERR_CANCELLED ? 130 : cli_lib_error(e, "feeding the prompt");
        goto done;
    }

    if ((e = txlm_detokenizer_create(m, &st.d))) { rc = cli_lib_error(e, "detokenizing"); goto done; }
    /* continue the prompt's last line, so spacing and punctuation join up */
    if (prompt && *prompt) {
        size_t from = n_ids;
        while (from > 0 && ids[from - 1] != p.eos_id) from--;
        if (stream_prompt(&st, m, ids, from, n_ids)) goto done;
    }
    for (uint32_t i = 0; i < n_gen && !interrupted; i++) {
        int32_t tok;
        if ((e = txlm_session_sample(s, &samp, &tok))) { rc = cli_lib_error(e, "sampling"); goto done; }
        if (stream_token(&st, tok)) goto done;
        if ((e = txlm_session_feed_rows(s, &tok, 1, 1, NULL))) { rc = cli_lib_error(e, "running the model"); goto done; }
    }
    stream_flush(&st);
    fputc('\n', stdout);
    rc = interrupted ? 130 : 0;
    if (cli_validation_status(ctx)) rc = 1;
done:
    fflush(stdout);
    signal(SIGINT, SIG_DFL);
    free(owned_prompt);
    txlm_free(ids);
    txlm_detokenizer_free(st.d);
    txlm_session_free(s);
    txlm_model_free(m);
    txlm_context_destroy(ctx);
    return rc;
}
