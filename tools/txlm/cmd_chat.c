/* txlm chat: an interactive loop on one session. Each line typed is fed
 * (the memory of every turn before is kept), then the model's reply is
 * streamed until it ends its line (or a --stop string, or -n tokens).
 * Ctrl-C stops the reply and returns to the prompt; at the prompt it
 * ends the chat, as end of input does. Lines starting with '/' are
 * commands: /save FILE, /load FILE, /reset, /help, /quit. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gen_common.h"

static const char commands_help[] =
    "  /save FILE   save the session (memory and sampler) to FILE\n"
    "  /load FILE   go on from a saved session\n"
    "  /reset       forget everything said so far\n"
    "  /quit        end (as end of input and Ctrl-C at the prompt do)\n";

static void usage(void)
{
    printf("usage: txlm chat -m MODEL [-n TOKENS] [--temperature T] [--top-k K] [--top-p P] [--repeat-penalty R]\n"
           "                 [--stop STR]... [--seed S] [--state-in FILE] [--mem-len M] [--clamp-len C]\n"
           "                 [--same-length 0|1] [--zero-memory 0|1] [--no-verify]\n\n"
           "Reads lines from standard input; each is fed to the model with the memory of the whole\n"
           "conversation, and the reply streams until the model ends its line, a --stop string appears\n"
           "(then it replaces the line-break stop), or -n tokens (default -1: no limit). Ctrl-C stops the\n"
           "reply and returns to the prompt.\n\n%s\nCommands:\n%s",
           gen_help, commands_help);
}

static const char *const own_flags[] = {"-m", "--model", "--state-in", NULL};

static int parse(int argc, char **argv, const char **model, const char **state_in, gen_opts *g,
                 txlm_session_options *so, txlm_model_options *mo)
{
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) return usage(), 2;
        if (!strcmp(f, "--no-verify")) { mo->no_verify = 1; continue; }
        int own = !strcmp(f, "-m") || !strcmp(f, "--model") || !strcmp(f, "--state-in");
        if (!(v = cli_option_value(argc, argv, &i, "chat", own ? own_flags : gen_flags))) return 1;
        int r;
        if (!strcmp(f, "-m") || !strcmp(f, "--model")) *model = v;
        else if (!strcmp(f, "--state-in")) *state_in = v;
        else if ((r = gen_option(f, v, g)) != 0) { if (r < 0) return 1; }
        else if ((r = cli_session_option(f, v, so)) >= 0) { if (r) return 1; }
        else return cli_error("chat: unknown option \"%s\" (see txlm chat --help)", f);
    }
    if (!*model) return cli_error("chat: -m MODEL is required");
    if (*state_in && cli_check_input(*state_in, "--state-in")) return 1;
    return g->n_stops ? 0 : gen_add_stop(g, "\\n"); /* a reply is a line */
}

/* A '/' command: 0 handled, 1 to quit, -1 not a command. Errors are told
 * and the chat goes on. */
static int command(char *line, txlm_session *s, gen_stream *st)
{
    line[strcspn(line, "\r\n")] = 0;
    char *arg = strchr(line, ' ');
    if (arg) *arg++ = 0;
    txlm_status e = TXLM_OK;
    if (!strcmp(line, "/quit") || !strcmp(line, "/exit")) return 1;
    if (!strcmp(line, "/help")) fputs(commands_help, stdout);
    else if (!strcmp(line, "/reset")) txlm_session_reset(s), fprintf(stderr, "txlm: memory cleared\n");
    else if ((!strcmp(line, "/save") || !strcmp(line, "/load")) && (!arg || !*arg)) cli_error("%s needs a FILE", line);
    else if (!strcmp(line, "/save") && !(e = txlm_session_save_file(s, arg))) fprintf(stderr, "txlm: saved to %s\n", arg);
    else if (!strcmp(line, "/load") && !(e = txlm_session_restore_file(s, arg))) fprintf(stderr, "txlm: loaded %s\n", arg);
    else if (strcmp(line, "/save") && strcmp(line, "/load")) cli_error("unknown command %s (/help lists them)", line);
    if (e) cli_lib_error(e, line);
    txlm_detokenizer_reset(st->d);
    return 0;
}

/* One turn: the line fed, the reply streamed. 0, or 1 when the session failed. */
static int turn(const char *line, txlm_model *m, txlm_session *s, gen_stream *st, const gen_opts *g)
{
    int32_t *ids = NULL;
    size_t n = 0, made = 0;
    txlm_status e = txlm_tokenize(m, line, strlen(line), &ids, &n);
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

/* The next line typed, or NULL at the end (end of input, Ctrl-C). */
static char *read_line(char **buf, size_t *cap)
{
    fputs("> ", stdout);
    fflush(stdout);
    gen_interrupted = 0;
    errno = 0;
    if (getline(buf, cap, stdin) >= 0) return *buf;
    if (gen_interrupted) fputc('\n', stdout);
    return NULL;
}

static int loop(txlm_model *m, txlm_session *s, const gen_opts *g)
{
    gen_stream st;
    if (gen_stream_open(&st, m, g)) return 1;
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (!rc && read_line(&line, &cap)) {
        int c = line[0] == '/' ? command(line, s, &st) : -1;
        if (c == 1) break;
        if (c < 0) rc = turn(line, m, s, &st, g);
    }
    free(line);
    gen_stream_close(&st);
    return rc;
}

int cmd_chat(int argc, char **argv)
{
    const char *model = NULL, *state_in = NULL;
    gen_opts g;
    gen_defaults(&g, -1);
    txlm_session_options so = {.same_length = -1};
    txlm_model_options mo = {.progress = gen_stop_requested};
    int rc = parse(argc, argv, &model, &state_in, &g, &so, &mo);
    if (rc) return gen_free(&g), rc == 2 ? 0 : 1;
    /* no SA_RESTART: Ctrl-C at the prompt ends the read */
    struct sigaction sa = {.sa_handler = gen_on_sigint}, old;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    txlm_status e = cli_open_model(model, &mo, &ctx, &m);
    txlm_model_params p;
    if (!e) txlm_model_get_params(m, &p), so.max_segment = p.tgt_len ? p.tgt_len : 128;
    if (!e && (e = txlm_session_create(m, &so, &s))) cli_lib_error(e, "creating a session");
    if (!e && state_in && (e = txlm_session_restore_file(s, state_in))) cli_lib_error(e, "--state-in");
    if (!e && (!state_in || g.seed_given)) txlm_session_set_seed(s, gen_seed(&g));
    rc = e ? (e == TXLM_ERR_CANCELLED ? 130 : 1) : loop(m, s, &g);
    if (!rc && cli_validation_status(ctx)) rc = 1;
    sigaction(SIGINT, &old, NULL);
    gen_free(&g);
    txlm_session_free(s);
    txlm_model_free(m);
    txlm_context_destroy(ctx);
    return rc;
}
