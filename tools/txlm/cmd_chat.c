/* txlm chat: an interactive loop on one session. Each line typed is fed
 * (the memory of every turn before is kept), then the model's reply is
 * streamed until it ends its line (or a --stop string, or -n tokens).
 * Ctrl-C stops the reply and returns to the prompt; at the prompt it
 * ends the chat, as end of input does. Lines starting with '/' are
 * commands, every one in the table below (--help and /help print it,
 * and a command not in it is unknown): /save FILE, /load FILE, /reset,
 * /help, /quit, /exit. Lines come through chat_input.c: edited, with
 * history, on a terminal. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "chat_input.h"
#include "cli.h"
#include "cli_files.h"
#include "cli_scoring.h"
#include "gen_common.h"

static const struct chat_command {
    const char *name, *arg, *what;
} commands[] = {
    {"/save", "FILE", "save the session (memory and sampler) to FILE (never the model, --state-in or -f FILE)"},
    {"/load", "FILE", "go on from a saved session"},
    {"/reset", "", "forget everything said so far"},
    {"/help", "", "this list"},
    {"/quit", "", "end (as end of input and Ctrl-C at the prompt do)"},
    {"/exit", "", "the same as /quit"},
};
#define N_COMMANDS (sizeof commands / sizeof *commands)

static void print_commands(FILE *to)
{
    for (size_t k = 0; k < N_COMMANDS; k++) {
        char head[32];
        snprintf(head, sizeof head, "%s %s", commands[k].name, commands[k].arg);
        fprintf(to, "  %-12s %s\n", head, commands[k].what);
    }
}

/* The table's entry for a command name, or NULL. */
static const struct chat_command *command_named(const char *name)
{
    for (size_t k = 0; k < N_COMMANDS; k++)
        if (!strcmp(commands[k].name, name)) return &commands[k];
    return NULL;
}

static void usage(void)
{
    printf("usage: txlm chat -m MODEL [-p PROMPT | -f PROMPT_FILE] [-n TOKENS] [--temperature T] [--top-k K]\n"
           "                 [--top-p P] [--repeat-penalty R] [--repeat-last-n N] [--stop STR]... [--seed S]\n"
           "                 [--state-in FILE] [--mem-len M] [--clamp-len C] [--same-length 0|1]\n"
           "                 [--zero-memory 0|1] [--no-verify] [--binary-ok]\n\n"
           "Reads lines from standard input; each is fed to the model with the memory of the whole\n"
           "conversation, and the reply streams until the model ends its line, a --stop string appears\n"
           "(then it replaces the line-break stop), or -n tokens (default -1: no limit). Ctrl-C stops the\n"
           "reply and returns to the prompt. On a terminal, lines are edited and kept in a history (the Up\n"
           "arrow brings one back), and the prompt \"> \" goes to standard error; from a pipe or a file there\n"
           "is no prompt, and standard output holds the replies alone, one line each.\n"
           "-p PROMPT or -f FILE (\"-\" is not standard input here: it holds the conversation) is fed\n"
           "first, unanswered: the start the conversation goes on from. A FILE that is plainly not text (a NUL\n"
           "byte, or mostly not UTF-8, in its first 4 KiB) is refused before the model loads; --binary-ok reads it.\n"
           "\n%s\nCommands (a line starting with /):\n",
           gen_help);
    print_commands(stdout);
}

typedef struct chat_args {
    const char *model, *state_in, *prompt, *prompt_file;
    int binary_ok;
    gen_opts g;
    txlm_session_options so;
    txlm_model_options mo;
} chat_args;

static const char *const own_flags[] = {"-m", "--model", "--state-in", "-p", "--prompt", "-f", "--file", NULL};

static int own_flag(const char *f)
{
    for (int k = 0; own_flags[k]; k++)
        if (!strcmp(f, own_flags[k])) return 1;
    return 0;
}

static int parse(int argc, char **argv, chat_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) return usage(), 2;
        if (!strcmp(f, "--no-verify")) { a->mo.no_verify = 1; continue; }
        if (!strcmp(f, "--binary-ok")) { a->binary_ok = 1; continue; }
        if (!(v = cli_option_value(argc, argv, &i, "chat", own_flag(f) ? own_flags : gen_flags))) return 1;
        int r;
        if (!strcmp(f, "-m") || !strcmp(f, "--model")) { if (cli_set_once(&a->model, v, f)) return 1; }
        else if (!strcmp(f, "--state-in")) a->state_in = v;
        else if (!strcmp(f, "-p") || !strcmp(f, "--prompt")) a->prompt = v;
        else if (!strcmp(f, "-f") || !strcmp(f, "--file")) a->prompt_file = v;
        else if ((r = gen_option(f, v, &a->g)) != 0) { if (r < 0) return 1; }
        else if ((r = cli_session_option(f, v, &a->so)) >= 0) { if (r) return 1; }
        else return cli_error("chat: unknown option \"%s\" (see txlm chat --help)", f);
    }
    if (!a->model) return cli_error("chat: -m MODEL is required");
    if (a->prompt && a->prompt_file) return cli_error("chat: give -p or -f, not both");
    if (a->prompt_file && !strcmp(a->prompt_file, "-"))
        return cli_error("chat: -f -: standard input holds the conversation; give the starting prompt as a file");
    if (a->state_in && !strcmp(a->state_in, "-"))
        return cli_error("chat: --state-in -: standard input holds the conversation; give the state as a file");
    if (a->state_in && cli_check_input(a->state_in, "--state-in")) return 1;
    if (a->prompt_file && (cli_check_input(a->prompt_file, "-f") || cli_check_text_file(a->prompt_file, a->binary_ok)))
        return 1;
    if (cli_stdout_not_input("the model", a->model, "--state-in", a->state_in, "the starting prompt", a->prompt_file,
                             "the conversation", "-", NULL))
        return 1;
    return a->g.n_stops ? 0 : gen_add_stop(&a->g, "\\n"); /* a reply is a line */
}

/* /save FILE: checked against what the chat read (the model, the state it
 * started from, the starting prompt), written through a temporary. */
static int save(const chat_args *a, txlm_session *s, const char *path)
{
    if (!strcmp(path, "-")) return cli_error("/save -: standard output holds the conversation; give a file");
    cli_files io;
    cli_files_init(&io);
    cli_files_input(&io, "the model", a->model);
    cli_files_input(&io, "--state-in", a->state_in);
    cli_files_input(&io, "the starting prompt", a->prompt_file);
    cli_files_input(&io, "the conversation", "-");
    int k = cli_files_output(&io, "/save", path, 1);
    if (cli_files_open(&io)) return 1;
    int rc = cli_files_write_state(&io, k, s, "/save") || cli_files_commit(&io);
    cli_files_abort(&io);
    if (!rc) fprintf(stderr, "txlm: saved to %s\n", path);
    return rc;
}

/* A '/' command: 0 handled, 1 to quit, -1 not a command. Errors are told
 * and the chat goes on. */
static int command(char *line, const chat_args *a, txlm_session *s, gen_stream *st)
{
    line[strcspn(line, "\r\n")] = 0;
    char *arg = strchr(line, ' ');
    if (arg) *arg++ = 0;
    const struct chat_command *c = command_named(line);
    int takes_file = c && *c->arg;
    txlm_status e = TXLM_OK;
    if (!c) cli_error("unknown command %s (/help lists them)", line);
    else if (!takes_file && arg && *arg) cli_error("%s takes no argument (\"%s\" was given; /help lists the commands)", line, arg);
    else if (!strcmp(line, "/quit") || !strcmp(line, "/exit")) return 1;
    else if (!strcmp(line, "/help")) print_commands(stderr);
    else if (!strcmp(line, "/reset")) txlm_session_reset(s), fprintf(stderr, "txlm: memory cleared\n");
    else if (takes_file && (!arg || !*arg)) cli_error("%s needs a FILE", line);
    else if (!strcmp(line, "/save")) save(a, s, arg);
    else if (!strcmp(line, "/load") && !strcmp(arg, "-")) cli_error("/load -: standard input holds the conversation; give a file");
    else if (!strcmp(line, "/load") && !(e = txlm_session_restore_file(s, arg))) fprintf(stderr, "txlm: loaded %s\n", arg);
    if (e) cli_lib_error(e, line);
    txlm_detokenizer_reset(st->d);
    return 0;
}

/* One turn: the line fed, the reply streamed. 0, or 1 when the session failed. */
static int turn(const char *line, size_t len, txlm_model *m, txlm_session *s, gen_stream *st, const gen_opts *g)
{
    int32_t *ids = NULL;
    size_t n = 0, made = 0;
    txlm_status e = txlm_tokenize(m, line, len, &ids, &n);
    if (!e && n) e = txlm_session_feed_long(s, ids, n, gen_stop_requested, NULL, NULL);
    if (!e) gen_stream_remember(st, ids, n);
    txlm_free(ids);
    if (e == TXLM_ERR_CANCELLED) return fputc('\n', stdout), 0;
    if (e) return cli_lib_error(e, "feeding the line");
    if (!n) return 0;
    int rc = gen_stream_run(st, s, g, &gen_interrupted, &made);
    fputc('\n', stdout);
    return rc;
}

static int loop(const chat_args *a, txlm_model *m, txlm_session *s)
{
    gen_stream st;
    if (gen_stream_open(&st, m, &a->g)) return 1;
    chat_input in;
    chat_input_open(&in);
    const char *got;
    size_t len = 0;
    int rc = 0;
    for (gen_interrupted = 0; !rc && (got = chat_input_read(&in, &len)); gen_interrupted = 0) {
        int c = got[0] == '/' ? command(in.line, a, s, &st) : -1;
        if (c == 1) break;
        if (c < 0) rc = turn(got, len, m, s, &st, &a->g);
        fflush(stdout);
    }
    chat_input_close(&in);
    gen_stream_close(&st);
    return rc;
}

/* -p / -f: fed before the first line, unanswered. 0, 130 when cancelled, else 1. */
static int starting_prompt(const chat_args *a, txlm_model *m, txlm_session *s)
{
    size_t len = a->prompt ? strlen(a->prompt) : 0;
    char *owned = NULL;
    if (a->prompt_file && !(owned = cli_read_file(a->prompt_file, &len))) return 1;
    const char *text = owned ? owned : a->prompt;
    int32_t *ids = NULL;
    size_t n = 0;
    txlm_model_params p;
    txlm_model_get_params(m, &p);
    txlm_status e = len ? txlm_tokenize(m, text, len, &ids, &n) : TXLM_OK;
    uint64_t unk = 0;
    for (size_t i = 0; i < n; i++) unk += ids[i] == p.unk_id;
    cli_warn_unk(unk, n, "the starting prompt's tokens", "the replies follow words the model never saw");
    if (!e && n) e = txlm_session_feed_long(s, ids, n, gen_stop_requested, NULL, NULL);
    txlm_free(ids);
    free(owned);
    return e == TXLM_ERR_CANCELLED ? 130 : e ? cli_lib_error(e, "feeding the starting prompt") : 0;
}

int cmd_chat(int argc, char **argv)
{
    chat_args a = {.so = {.same_length = -1}, .mo = {.progress = gen_stop_requested}};
    gen_defaults(&a.g, -1);
    int rc = parse(argc, argv, &a);
    if (rc) return gen_free(&a.g), rc == 2 ? 0 : 1;
    /* no SA_RESTART: Ctrl-C at the prompt ends the read */
    struct sigaction sa = {.sa_handler = gen_on_sigint}, old;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    txlm_status e = cli_open_model(a.model, &a.mo, &ctx, &m);
    if (!e && gen_check_model(&a.g, m)) e = TXLM_ERR_INVALID_ARGUMENT;
    txlm_model_params p;
    if (!e) txlm_model_get_params(m, &p), a.so.max_segment = p.tgt_len ? p.tgt_len : 128;
    if (!e && (e = txlm_session_create(m, &a.so, &s))) cli_lib_error(e, "creating a session");
    if (!e && a.state_in && (e = txlm_session_restore_file(s, a.state_in))) cli_lib_error(e, "--state-in");
    if (!e && (!a.state_in || a.g.seed_given)) txlm_session_set_seed(s, gen_seed(&a.g));
    rc = e ? (e == TXLM_ERR_CANCELLED ? 130 : 1) : starting_prompt(&a, m, s);
    if (!rc) rc = loop(&a, m, s);
    if (!rc && cli_validation_status(ctx)) rc = 1;
    sigaction(SIGINT, &old, NULL);
    gen_free(&a.g);
    txlm_session_free(s);
    txlm_model_free(m);
    txlm_context_destroy(ctx);
    return rc;
}
