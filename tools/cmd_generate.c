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

typedef struct generate_args {
    cli_model_args c;
    const char *prompt, *prompt_file;
    uint32_t n_gen;
    uint64_t seed;
    txlm_sampling samp;
} generate_args;

/* The sampling options: 1 when argv's flag a was one (0 or an error in *bad). */
static int sampling_arg(const char *a, const char *v, generate_args *o, int *bad)
{
    char *end;
    if (!strcmp(a, "--top-k")) {
        *bad = cli_parse_u32(v, a, &o->samp.top_k);
    } else if (!strcmp(a, "--temperature")) {
        o->samp.temperature = strtof(v, &end);
        if (!*v || *end || !(o->samp.temperature >= 0)) *bad = cli_error("--temperature: bad value \"%s\"", v);
    } else if (!strcmp(a, "--top-p")) {
        o->samp.top_p = strtof(v, &end);
        if (!*v || *end || !(o->samp.top_p >= 0 && o->samp.top_p <= 1)) *bad = cli_error("--top-p: must be in [0, 1]");
    } else if (!strcmp(a, "--seed")) {
        o->seed = strtoull(v, &end, 10);
        if (!*v || *end) *bad = cli_error("--seed: \"%s\" is not a number", v);
    } else {
        return 0;
    }
    return 1;
}

/* 0, 1 after an error, 2 after --help. */
static int parse_args(int argc, char **argv, generate_args *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(), 2;
        int r = cli_model_arg(argc, argv, &i, &o->c), bad = 0;
        if (r) {
            if (r < 0) return 1;
            continue;
        }
        if (!(v = cli_value(argc, argv, &i))) return 1;
        if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) o->prompt = v;
        else if (!strcmp(a, "-f") || !strcmp(a, "--file") || !strcmp(a, "--prompt-file")) o->prompt_file = v;
        else if (!strcmp(a, "-n")) { if (cli_parse_u32(v, a, &o->n_gen)) return 1; }
        else if (sampling_arg(a, v, o, &bad)) { if (bad) return 1; }
        else return cli_error("generate: unknown option \"%s\" (see txlm generate --help)", a);
    }
    if (!o->c.model) return cli_error("generate: -m MODEL is required");
    if (o->prompt && o->prompt_file) return cli_error("generate: give -p or -f, not both");
    return 0;
}

/* The prompt's ids (an end of line where there is none), fed; the prompt echoed. */
static int feed_prompt(txlm_model *m, txlm_session *s, const txlm_model_params *p, const char *prompt, int32_t **ids,
                       size_t *n_ids)
{
    txlm_status e;
    if (prompt && *prompt && (e = txlm_tokenize(m, prompt, strlen(prompt), ids, n_ids)))
        return cli_lib_error(e, "tokenizing the prompt");
    if (*n_ids == 0) {
        /* no prompt: start where a text starts, after a line break */
        int32_t start = p->eos_id >= 0 ? p->eos_id : 0;
        free(*ids);
        if (!(*ids = malloc(sizeof **ids))) return cli_error("out of memory");
        (*ids)[0] = start;
        *n_ids = 1;
    } else if (prompt) {
        fputs(prompt, stdout);
        fflush(stdout);
    }
    if ((e = txlm_session_feed_long(s, *ids, *n_ids, stop_requested, NULL, NULL))) {
        if (e == TXLM_ERR_CANCELLED) fputc('\n', stdout);
        return e == TXLM_ERR_CANCELLED ? 130 : cli_lib_error(e, "feeding the prompt");
    }
    return 0;
}

/* n_gen tokens drawn, printed as they become final, and fed back. */
static int generate(txlm_session *s, const generate_args *o, streamer *st)
{
    txlm_status e;
    for (uint32_t i = 0; i < o->n_gen && !interrupted; i++) {
        int32_t tok;
        if ((e = txlm_session_sample(s, &o->samp, &tok))) return cli_lib_error(e, "sampling");
        if (stream_token(st, tok)) return 1;
        if ((e = txlm_session_feed_rows(s, &tok, 1, 1, NULL))) return cli_lib_error(e, "running the model");
    }
    stream_flush(st);
    fputc('\n', stdout);
    return 0;
}

int cmd_generate(int argc, char **argv)
{
    generate_args o = {.c = CLI_MODEL_ARGS, .n_gen = 200, .seed = 1, .samp = {.temperature = 1.0f}};
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc == 2 ? 0 : 1;
    rc = 1;
    char *owned_prompt = NULL;
    const char *prompt = o.prompt;
    int32_t *ids = NULL;
    size_t n_ids = 0, prompt_len = 0;
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    streamer st = {0};
    if (o.prompt_file && !(prompt = owned_prompt = cli_read_file(o.prompt_file, &prompt_len))) return 1;
    interrupted = 0;
    signal(SIGINT, on_sigint);
    o.c.mo.progress = stop_requested;
    txlm_status e = cli_open_model(o.c.model, &o.c.mo, &ctx, &m);
    if (e) {
        rc = e == TXLM_ERR_CANCELLED ? 130 : 1;
        goto done;
    }
    txlm_model_params p;
    txlm_model_get_params(m, &p);
    o.c.so.max_segment = p.tgt_len ? p.tgt_len : 128;
    if ((e = txlm_session_create(m, &o.c.so, &s))) { rc = cli_lib_error(e, "creating a session"); goto done; }
    txlm_session_set_seed(s, o.seed);
    if ((rc = feed_prompt(m, s, &p, prompt, &ids, &n_ids))) goto done;
    rc = 1;
    if ((e = txlm_detokenizer_create(m, &st.d))) { rc = cli_lib_error(e, "detokenizing"); goto done; }
    /* continue the prompt's last line, so spacing and punctuation join up */
    if (prompt && *prompt) {
        size_t from = n_ids;
        while (from > 0 && ids[from - 1] != p.eos_id) from--;
        if (stream_prompt(&st, m, ids, from, n_ids)) goto done;
    }
    if (generate(s, &o, &st)) goto done;
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
