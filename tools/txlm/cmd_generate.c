/* txlm generate: text in, text out, streamed token by token. The prompt is
 * fed in segments (memory carried), then each sampled token is fed back as
 * a one-token segment (gen_stream.c). Ctrl-C stops cleanly: loading and
 * prompt feeding are cancelled through the library's progress callback,
 * generation after the current token; what was generated is flushed with
 * a final newline and the exit status is 130. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_batch.h"
#include "gen_batch.h"
#include "gen_common.h"

static void usage(void)
{
    printf("usage: txlm generate -m MODEL [-p PROMPT | -f PROMPT_FILE] [-n TOKENS] [--temperature T]\n"
           "                     [--top-k K] [--top-p P] [--repeat-penalty R] [--stop STR]... [--seed S]\n"
           "                     [--state-in FILE] [--state-out FILE] [--no-display-prompt] [--streams N]\n"
           "                     [--mem-len M] [--clamp-len C] [--same-length 0|1] [--zero-memory 0|1] [--no-verify]\n\n"
           "Prints the prompt, then streams the continuation (-f - reads the prompt from standard input).\n"
           "Defaults: 200 tokens, temperature 1 (the model's own distribution, drawn exactly and cheaply through\n"
           "the adaptive softmax's clusters), no top-k/top-p, a random seed (told on stderr).\n\n%s"
           "  --state-in FILE     start from a saved session state (memory and sampler; --seed still reseeds)\n"
           "  --state-out FILE    save the session state at the end (after Ctrl-C too): --state-in goes on\n"
           "  --no-display-prompt print only the continuation\n"
           "  --streams N         N continuations in one batch, stream i seeded with S + i (the text\n"
           "                      --seed S+i makes alone); printed one after another once all are done,\n"
           "                      each under a line \"--- stream i (seed S+i)\" (default 1: streamed live)\n\n"
           "On stderr at the end: load time, prompt and generation speed (tokens/s).\n\n"
           "Cost: at temperature 1 without top-k/top-p/penalty a token costs the head of the softmax plus the one\n"
           "tail cluster drawn. Anything else needs the whole distribution: every tail cluster's logits (the full\n"
           "output layer, d_embed x n_token multiply-adds) and a host read-back of n_token floats per token;\n"
           "--top-k and --top-p then sort all n_token probabilities (n log n). On a 267k-word vocabulary that is\n"
           "several times the cost of the default.\n\n"
           "Ctrl-C stops after the current token (or cancels loading and prompt feeding), prints what was\n"
           "generated and a newline, and exits with status 130. llama.cpp's spellings work too: --temp, -s.\n",
           gen_help);
}

typedef struct gen_args {
    const char *model, *prompt, *prompt_file, *state_in, *state_out;
    int no_display;
    uint32_t streams;
    gen_opts g;
    txlm_session_options so;
    txlm_model_options mo;
} gen_args;

static const char *const own_flags[] = {"-m", "--model", "-p", "--prompt", "-f", "--file", "--prompt-file",
                                        "--state-in", "--state-out", "--streams", NULL};

/* 0 = run, 1 = error, 2 = help shown. */
static int parse(int argc, char **argv, gen_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) return usage(), 2;
        if (!strcmp(f, "--no-verify")) { a->mo.no_verify = 1; continue; }
        if (!strcmp(f, "--no-display-prompt")) { a->no_display = 1; continue; }
        int known = 0;
        for (int k = 0; own_flags[k] && !known; k++) known = !strcmp(f, own_flags[k]);
        if (!(v = cli_option_value(argc, argv, &i, "generate", known ? own_flags : gen_flags))) return 1;
        int r;
        if (!strcmp(f, "-m") || !strcmp(f, "--model")) a->model = v;
        else if (!strcmp(f, "-p") || !strcmp(f, "--prompt")) a->prompt = v;
        else if (!strcmp(f, "-f") || !strcmp(f, "--file") || !strcmp(f, "--prompt-file")) a->prompt_file = v;
        else if (!strcmp(f, "--state-in")) a->state_in = v;
        else if (!strcmp(f, "--state-out")) a->state_out = v;
        else if (!strcmp(f, "--streams")) { if (cli_parse_u32(v, f, &a->streams)) return 1; }
        else if ((r = gen_option(f, v, &a->g)) != 0) { if (r < 0) return 1; }
        else if ((r = cli_session_option(f, v, &a->so)) >= 0) { if (r) return 1; }
        else return cli_error("generate: unknown option \"%s\" (see txlm generate --help)", f);
    }
    if (!a->model) return cli_error("generate: -m MODEL is required");
    if (a->prompt && a->prompt_file) return cli_error("generate: give -p or -f, not both");
    if (a->streams == 0 || a->streams > CLI_MAX_STREAMS)
        return cli_error("--streams: %u streams, give 1..%u", a->streams, CLI_MAX_STREAMS);
    if (a->streams > 1 && (a->state_in || a->state_out))
        return cli_error("generate: --state-in and --state-out hold one stream's state: give them without --streams");
    if (a->state_in && cli_check_input(a->state_in, "--state-in")) return 1;
    return 0;
}

typedef struct gen_run {
    txlm_context *ctx;
    txlm_model *m;
    txlm_session *s;
    gen_stream st;
    int32_t *ids;
    size_t n_ids;
    double t_load, t_prompt, t_gen;
} gen_run;

/* The prompt's ids, or the start of a text (a line break) when there is no
 * prompt and no saved state to go on from. */
static int prompt_ids(const gen_args *a, const char *prompt, gen_run *r, int32_t eos)
{
    txlm_status e;
    if (prompt && *prompt && (e = txlm_tokenize(r->m, prompt, strlen(prompt), &r->ids, &r->n_ids)))
        return cli_lib_error(e, "tokenizing the prompt");
    if (r->n_ids || a->state_in) return 0;
    txlm_free(r->ids);
    if (!(r->ids = malloc(sizeof *r->ids))) return cli_error("out of memory");
    r->ids[0] = eos >= 0 ? eos : 0;
    r->n_ids = 1;
    return 0;
}

/* Session, state, seed, prompt fed: 0, 130 when cancelled, else 1. */
static int start(const gen_args *a, const char *prompt, gen_run *r)
{
    txlm_model_params p;
    txlm_model_get_params(r->m, &p);
    txlm_session_options so = a->so;
    so.max_segment = p.tgt_len ? p.tgt_len : 128;
    txlm_status e = txlm_session_create(r->m, &so, &r->s);
    if (e) return cli_lib_error(e, "creating a session");
    if (a->state_in && (e = txlm_session_restore_file(r->s, a->state_in))) return cli_lib_error(e, "--state-in");
    if (!a->state_in || a->g.seed_given) txlm_session_set_seed(r->s, gen_seed(&a->g));
    if (prompt_ids(a, prompt, r, p.eos_id)) return 1;
    if (prompt && *prompt && !a->no_display) fputs(prompt, stdout), fflush(stdout);
    double t0 = cli_now();
    if ((e = txlm_session_feed_long(r->s, r->ids, r->n_ids, gen_stop_requested, NULL, NULL))) {
        if (e == TXLM_ERR_CANCELLED) fputc('\n', stdout);
        return e == TXLM_ERR_CANCELLED ? 130 : cli_lib_error(e, "feeding the prompt");
    }
    r->t_prompt = cli_now() - t0;
    if (gen_stream_open(&r->st, r->m, &a->g)) return 1;
    gen_stream_remember(&r->st, r->ids, r->n_ids);
    /* continue the prompt's last line, so spacing and punctuation join up */
    size_t from = r->n_ids;
    while (prompt && *prompt && from > 0 && r->ids[from - 1] != p.eos_id) from--;
    return prompt && *prompt ? gen_stream_prompt(&r->st, r->m, r->ids, from, r->n_ids) : 0;
}

static void timings(const gen_run *r, size_t made)
{
    fprintf(stderr, "txlm: load %.2f s; prompt %zu tokens in %.3f s (%.1f tokens/s); generated %zu tokens in %.3f s (%.1f tokens/s)\n",
            r->t_load, r->n_ids, r->t_prompt, r->t_prompt > 0 ? (double)r->n_ids / r->t_prompt : 0.0, made, r->t_gen,
            r->t_gen > 0 ? (double)made / r->t_gen : 0.0);
}

/* --streams N (N > 1): the prompt's ids, then every stream in one batch (gen_batch.c). */
static int run_streams(const gen_args *a, const char *prompt, gen_run *r, size_t *made)
{
    txlm_model_params p;
    txlm_model_get_params(r->m, &p);
    txlm_session_options so = a->so;
    if (prompt_ids(a, prompt, r, p.eos_id)) return 1;
    /* the prompt goes in segments of tgt_len, every later step is one token:
     * a shorter prompt needs no longer rows (the batch holds streams x max_segment) */
    uint32_t tgt = p.tgt_len ? p.tgt_len : 128;
    so.max_segment = r->n_ids < tgt ? (uint32_t)(r->n_ids ? r->n_ids : 1) : tgt;
    gen_batch_job j = {.m = r->m, .g = &a->g, .so = &so, .prompt = prompt, .ids = r->ids, .n_ids = r->n_ids,
                       .display_prompt = !a->no_display, .streams = a->streams, .seed = gen_seed(&a->g)};
    gen_batch_times t;
    int rc = gen_batch_run(&j, &t);
    r->t_prompt = t.prompt_s, r->t_gen = t.gen_s, *made = t.made;
    return rc;
}

/* One stream, streamed live as it is generated; its state saved with --state-out. */
static int run_one(const gen_args *a, const char *prompt, gen_run *r, size_t *made)
{
    int rc = start(a, prompt, r);
    if (!rc) {
        double t0 = cli_now();
        rc = gen_stream_run(&r->st, r->s, &a->g, &gen_interrupted, made);
        r->t_gen = cli_now() - t0;
        fputc('\n', stdout);
        fflush(stdout);
        if (!rc && gen_interrupted) rc = 130;
    }
    txlm_status e;
    if (r->s && (rc == 0 || rc == 130) && a->state_out && (e = txlm_session_save_file(r->s, a->state_out)))
        rc = cli_lib_error(e, "--state-out");
    return rc;
}

int cmd_generate(int argc, char **argv)
{
    gen_args a = {.so = {.same_length = -1}, .streams = 1};
    gen_defaults(&a.g, 200);
    int rc = parse(argc, argv, &a);
    if (rc) return gen_free(&a.g), rc == 2 ? 0 : 1;
    gen_run r = {0};
    char *owned = NULL;
    size_t len = 0, made = 0;
    const char *prompt = a.prompt;
    if (a.prompt_file && !(prompt = owned = cli_read_file(a.prompt_file, &len))) return gen_free(&a.g), 1;
    gen_interrupted = 0;
    signal(SIGINT, gen_on_sigint);
    a.mo.progress = gen_stop_requested;
    double t0 = cli_now();
    txlm_status e = cli_open_model(a.model, &a.mo, &r.ctx, &r.m);
    r.t_load = cli_now() - t0;
    if (e) rc = e == TXLM_ERR_CANCELLED ? 130 : 1;
    else rc = a.streams > 1 ? run_streams(&a, prompt, &r, &made) : run_one(&a, prompt, &r, &made);
    if ((r.s || a.streams > 1) && (rc == 0 || rc == 130)) timings(&r, made);
    if (!rc && cli_validation_status(r.ctx)) rc = 1;
    fflush(stdout);
    signal(SIGINT, SIG_DFL);
    free(owned);
    gen_free(&a.g);
    txlm_free(r.ids);
    gen_stream_close(&r.st);
    txlm_session_free(r.s);
    txlm_model_free(r.m);
    txlm_context_destroy(r.ctx);
    return rc;
}
