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
#include "cli_files.h"
#include "cli_scoring.h"
#include "gen_batch.h"
#include "gen_common.h"

static void usage(void)
{
    printf("usage: txlm generate -m MODEL [-p PROMPT | -f PROMPT_FILE] [-n TOKENS] [--temperature T]\n"
           "                     [--top-k K] [--top-p P] [--repeat-penalty R] [--repeat-last-n N] [--stop STR]...\n"
           "                     [--seed S] [--state-in FILE] [--state-out FILE] [--no-display-prompt] [--streams N]\n"
           "                     [--progress] [--mem-len M] [--clamp-len C] [--same-length 0|1] [--zero-memory 0|1]\n"
           "                     [--no-verify] [--binary-ok]\n\n"
           "Prints the prompt, then streams the continuation (-f - reads the prompt from standard input; every\n"
           "byte of the file is the prompt, as eval reads a text; a file that is plainly not text, with a NUL\n"
           "byte or mostly not UTF-8 in its first 4 KiB, is refused: --binary-ok reads it). Defaults: 200 tokens,\n"
           "temperature 1 (the model's own distribution, drawn exactly and cheaply through the adaptive\n"
           "softmax's clusters), no top-k/top-p, a random seed (told on stderr). A prompt over 5%% <unk> is\n"
           "warned about.\n\n%s"
           "  --state-in FILE     start from a saved session state (memory and sampler; --seed still reseeds);\n"
           "                      \"-\": standard input (then not -f -)\n"
           "  --state-out FILE    save the session state at the end (after Ctrl-C too): --state-in goes on.\n"
           "                      Checked before the model loads; never the model, the prompt file or the\n"
           "                      --state-in file. \"-\": standard output (never a terminal), the text then goes\n"
           "                      to standard error\n"
           "  --no-display-prompt print only the continuation\n"
           "  --streams N         N continuations in one batch, stream i seeded with S + i (the text\n"
           "                      --seed S+i makes alone); printed one after another once all are done,\n"
           "                      each under a line \"--- stream i (seed S+i)\" (default 1: streamed live).\n"
           "                      -n -1 with several streams needs a --stop string\n"
           "  --progress          the prompt's feeding (and --streams' generation) as a progress line on\n"
           "                      stderr, as on a terminal, where it is shown for prompts of several segments\n\n"
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
    size_t prompt_len;
    int no_display, progress, binary_ok;
    uint32_t streams;
    gen_opts g;
    txlm_session_options so;
    txlm_model_options mo;
} gen_args;

static const char *const own_flags[] = {"-m", "--model", "-p", "--prompt", "-f", "--file", "--prompt-file",
                                        "--state-in", "--state-out", "--streams", NULL};

/* The combinations refused before anything runs. */
static int check_args(gen_args *a)
{
    if (!a->model) return cli_error("generate: -m MODEL is required");
    if (a->prompt && a->prompt_file) return cli_error("generate: give -p or -f, not both");
    if (a->streams == 0 || a->streams > CLI_MAX_STREAMS)
        return cli_error("--streams: %u streams, give 1..%u", a->streams, CLI_MAX_STREAMS);
    if (a->streams > 1 && (a->state_in || a->state_out))
        return cli_error("generate: --state-in and --state-out hold one stream's state: give them without --streams");
    if (a->streams > 1 && a->g.n_gen < 0 && !a->g.n_stops)
        return cli_error("generate: --streams %u with -n -1 and no --stop would run until Ctrl-C, and each stream's text "
                         "is printed once all are done: give -n N or a --stop string (or one stream, streamed live)",
                         a->streams);
    if (a->state_in && a->prompt_file && !strcmp(a->state_in, "-") && !strcmp(a->prompt_file, "-"))
        return cli_error("generate: -f - and --state-in -: only one of them can read standard input");
    if (a->state_in && strcmp(a->state_in, "-") && cli_check_input(a->state_in, "--state-in")) return 1;
    return 0;
}

/* 0 = run, 1 = error, 2 = help shown. */
static int parse(int argc, char **argv, gen_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) return usage(), 2;
        if (!strcmp(f, "--no-verify")) { a->mo.no_verify = 1; continue; }
        if (!strcmp(f, "--no-display-prompt")) { a->no_display = 1; continue; }
        if (!strcmp(f, "--progress")) { a->progress = 1; continue; }
        if (!strcmp(f, "--binary-ok")) { a->binary_ok = 1; continue; }
        int known = 0;
        for (int k = 0; own_flags[k] && !known; k++) known = !strcmp(f, own_flags[k]);
        if (!(v = cli_option_value(argc, argv, &i, "generate", known ? own_flags : gen_flags))) return 1;
        int r;
        if (!strcmp(f, "-m") || !strcmp(f, "--model")) { if (cli_set_once(&a->model, v, f)) return 1; }
        else if (!strcmp(f, "-p") || !strcmp(f, "--prompt")) a->prompt = v;
        else if (!strcmp(f, "-f") || !strcmp(f, "--file") || !strcmp(f, "--prompt-file")) a->prompt_file = v;
        else if (!strcmp(f, "--state-in")) a->state_in = v;
        else if (!strcmp(f, "--state-out")) a->state_out = v;
        else if (!strcmp(f, "--streams")) { if (cli_parse_u32(v, f, &a->streams)) return 1; }
        else if ((r = gen_option(f, v, &a->g)) != 0) { if (r < 0) return 1; }
        else if ((r = cli_session_option(f, v, &a->so)) >= 0) { if (r) return 1; }
        else return cli_error("generate: unknown option \"%s\" (see txlm generate --help)", f);
    }
    if (a->prompt) a->prompt_len = strlen(a->prompt);
    return check_args(a);
}

typedef struct gen_run {
    txlm_context *ctx;
    txlm_model *m;
    txlm_session *s;
    gen_stream st;
    int32_t *ids;
    size_t n_ids;
    double t_load, t_prompt, t_gen;
    FILE *text;          /* where the text goes: stdout, or stderr when --state-out is "-" */
    cli_files io;
    int state_out;       /* --state-out's index in io */
    cli_progress pb;     /* the prompt being fed */
} gen_run;

/* The prompt's ids (every byte of it tokenized, as eval reads a text), or
 * the start of a text (a line break) when there is no prompt and no saved
 * state to go on from. A prompt mostly of <unk> is warned about. */
static int prompt_ids(const gen_args *a, const char *prompt, gen_run *r)
{
    txlm_model_params p;
    txlm_model_get_params(r->m, &p);
    txlm_status e;
    if (a->prompt_len && (e = txlm_tokenize(r->m, prompt, a->prompt_len, &r->ids, &r->n_ids)))
        return cli_lib_error(e, "tokenizing the prompt");
    uint64_t unk = 0;
    for (size_t i = 0; i < r->n_ids; i++) unk += r->ids[i] == p.unk_id;
    cli_warn_unk(unk, r->n_ids, "the prompt's tokens", "the continuation follows words the model never saw");
    if (r->n_ids || a->state_in) return 0;
    txlm_free(r->ids);
    if (!(r->ids = malloc(sizeof *r->ids))) return cli_error("out of memory");
    r->ids[0] = p.eos_id >= 0 ? p.eos_id : 0;
    r->n_ids = 1;
    return 0;
}

/* Feeding the prompt: Ctrl-C cancels, the progress line follows the segments. */
static int on_prompt_segment(void *user, double fraction)
{
    gen_run *r = user;
    cli_progress_show(&r->pb, fraction, (uint64_t)(fraction * (double)r->n_ids), "feeding the prompt", 0);
    return gen_interrupted;
}

/* The prompt through the session; its text shown once fed (a progress
 * line, when there is one, comes before it). 0, 130 when cancelled, else 1. */
static int feed_prompt(const gen_args *a, const char *prompt, gen_run *r, uint32_t seg)
{
    cli_progress_start(&r->pb, a->progress);
    if (!a->progress && r->n_ids <= seg) r->pb.on = 0; /* one segment is fed at once: nothing to follow */
    double t0 = cli_now();
    txlm_status e = txlm_session_feed_long(r->s, r->ids, r->n_ids, on_prompt_segment, r, NULL);
    r->t_prompt = cli_now() - t0;
    if (!e) cli_progress_show(&r->pb, 1, r->n_ids, "prompt fed", 1);
    cli_progress_end(&r->pb);
    if (a->prompt_len && !a->no_display) fwrite(prompt, 1, a->prompt_len, r->text), fflush(r->text);
    if (e == TXLM_ERR_CANCELLED) fputc('\n', r->text);
    return e == TXLM_ERR_CANCELLED ? 130 : e ? cli_lib_error(e, "feeding the prompt") : 0;
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
    if (a->state_in && cli_restore_state(r->s, a->state_in, "--state-in")) return 1;
    if (!a->state_in || a->g.seed_given) txlm_session_set_seed(r->s, gen_seed(&a->g));
    if (prompt_ids(a, prompt, r)) return 1;
    int rc = feed_prompt(a, prompt, r, so.max_segment);
    if (rc) return rc;
    if (gen_stream_open(&r->st, r->m, &a->g)) return 1;
    r->st.out = r->text;
    gen_stream_remember(&r->st, r->ids, r->n_ids);
    /* continue the prompt's last line, so spacing and punctuation join up */
    size_t from = r->n_ids;
    while (a->prompt_len && from > 0 && r->ids[from - 1] != p.eos_id) from--;
    return a->prompt_len ? gen_stream_prompt(&r->st, r->m, r->ids, from, r->n_ids) : 0;
}

/* One line on stderr; with several streams the prompt was fed to each. */
static void timings(const gen_run *r, uint32_t streams, size_t made)
{
    double fed = (double)r->n_ids * streams;
    char per[48] = "";
    if (streams > 1) snprintf(per, sizeof per, " x %u streams", streams);
    fprintf(stderr, "txlm: load %.2f s; prompt %zu tokens%s in %.3f s (%.1f tokens/s); generated %zu tokens%s in %.3f s "
                    "(%.1f tokens/s)\n",
            r->t_load, r->n_ids, per, r->t_prompt, r->t_prompt > 0 ? fed / r->t_prompt : 0.0, made,
            streams > 1 ? " (all streams)" : "", r->t_gen, r->t_gen > 0 ? (double)made / r->t_gen : 0.0);
}

/* --streams N (N > 1): the prompt's ids, then every stream in one batch (gen_batch.c). */
static int run_streams(const gen_args *a, const char *prompt, gen_run *r, size_t *made)
{
    txlm_model_params p;
    txlm_model_get_params(r->m, &p);
    txlm_session_options so = a->so;
    if (prompt_ids(a, prompt, r)) return 1;
    /* the prompt goes in segments of tgt_len, every later step is one token:
     * a shorter prompt needs no longer rows (the batch holds streams x max_segment) */
    uint32_t tgt = p.tgt_len ? p.tgt_len : 128;
    so.max_segment = r->n_ids < tgt ? (uint32_t)(r->n_ids ? r->n_ids : 1) : tgt;
    gen_batch_job j = {.m = r->m, .g = &a->g, .so = &so, .prompt = prompt, .prompt_len = a->prompt_len, .ids = r->ids,
                       .n_ids = r->n_ids, .display_prompt = !a->no_display, .streams = a->streams,
                       .seed = gen_seed(&a->g), .progress = a->progress};
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
        fputc('\n', r->text);
        fflush(r->text);
        if (!rc && gen_interrupted) rc = 130;
    }
    /* the state into --state-out's temporary, which then takes its place */
    if (r->s && (rc == 0 || rc == 130) && a->state_out &&
        (cli_files_write_state(&r->io, r->state_out, r->s, "--state-out") || cli_files_commit(&r->io)))
        rc = 1;
    return rc;
}

/* The files checked and the outputs' temporaries made before the prompt
 * file is read and the model loaded; the prompt (-f) read. 0 or 1. */
static int open_files(gen_args *a, gen_run *r, char **owned)
{
    cli_files_init(&r->io);
    cli_files_input(&r->io, "the model", a->model);
    cli_files_input(&r->io, "the prompt file", a->prompt_file);
    cli_files_input(&r->io, "--state-in", a->state_in);
    r->state_out = cli_files_output(&r->io, "--state-out", a->state_out, 1);
    if (cli_files_open(&r->io)) return 1;
    r->text = r->io.report;
    if (a->prompt_file && !(a->prompt = *owned = cli_read_file(a->prompt_file, &a->prompt_len))) return 1;
    return a->prompt_file && cli_refuse_binary(a->prompt_file, a->prompt, a->prompt_len, a->binary_ok);
}

int cmd_generate(int argc, char **argv)
{
    gen_args a = {.so = {.same_length = -1}, .streams = 1};
    gen_defaults(&a.g, 200);
    int rc = parse(argc, argv, &a);
    if (rc) return gen_free(&a.g), rc == 2 ? 0 : 1;
    gen_run r = {0};
    char *owned = NULL;
    size_t made = 0;
    if (open_files(&a, &r, &owned)) return cli_files_abort(&r.io), free(owned), gen_free(&a.g), 1;
    gen_interrupted = 0;
    signal(SIGINT, gen_on_sigint);
    a.mo.progress = gen_stop_requested;
    double t0 = cli_now();
    txlm_status e = cli_open_model(a.model, &a.mo, &r.ctx, &r.m);
    r.t_load = cli_now() - t0;
    if (e) rc = e == TXLM_ERR_CANCELLED ? 130 : 1;
    else if (gen_check_model(&a.g, r.m)) rc = 1;
    else rc = a.streams > 1 ? run_streams(&a, a.prompt, &r, &made) : run_one(&a, a.prompt, &r, &made);
    if ((r.s || a.streams > 1) && (rc == 0 || rc == 130)) timings(&r, a.streams, made);
    if (!rc && cli_validation_status(r.ctx)) rc = 1;
    fflush(stdout);
    signal(SIGINT, SIG_DFL);
    cli_files_abort(&r.io);
    free(owned);
    gen_free(&a.g);
    txlm_free(r.ids);
    gen_stream_close(&r.st);
    txlm_session_free(r.s);
    txlm_model_free(r.m);
    txlm_context_destroy(r.ctx);
    return rc;
}
