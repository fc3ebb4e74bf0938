/* txlm generate's options and txlm chat, on a packed golden word model,
 * each against a direct computation where there is one:
 *   --stop: the text of a longer run cut before the stop string;
 *   --no-display-prompt: the run with the prompt, less the prompt;
 *   --state-out then --state-in: two runs make the words of one;
 *   -n -1 (until a stop), -s/--temp as --seed/--temperature, negative
 *   temperature as greedy, the random seed told on stderr making the
 *   same text again, the timing summary;
 *   --repeat-penalty: greedy text repeats, penalised greedy text does not;
 *   refusals: an unknown flag in last position, infinite temperature,
 *   --top-p outside (0, 1], -n out of range;
 *   chat: replies stream per line, /save and /load give the same reply
 *   again, /reset forgets (the first turn's greedy reply again), the
 *   memory is kept across turns (the second reply is generate's
 *   continuation of the whole conversation), Ctrl-C stops a reply and the
 *   chat goes on; from a pipe no prompt is printed (stdout holds the
 *   replies alone); /reset with an argument is refused and forgets
 *   nothing; -p is fed first, unanswered; /save never replaces the model
 *   or the --state-in file; chat --help lists every command (/help and
 *   /exit too), each one listed is taken, /help prints the same list,
 *   anything else is unknown.
 * usage: test_gen_cli TXLM TXLM_PACK GOLDEN_DIR */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "text_util.h"

static const char *txlm;
static char *dir, model[1100];

static char *path_in(const char *name) { return path_under(dir, name); }

/* txlm CMD -m MODEL opts...; stdin from `input` (NULL: empty). Returns the status. */
static int run(const char *cmd, const char *const *opts, const char *input, char **out, char **err)
{
    const char *argv[40] = {txlm, cmd, "-m", model};
    int n = 4;
    for (int i = 0; opts[i] && n < 39; i++) argv[n++] = opts[i];
    argv[n] = NULL;
    const char *in_path = path_in("stdin.txt");
    FILE *f = fopen(in_path, "wb");
    if (f) fputs(input ? input : "", f), fclose(f);
    char so[1100], se[1100];
    snprintf(so, sizeof so, "%s", path_in("stdout.txt"));
    snprintf(se, sizeof se, "%s", path_in("stderr.txt"));
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int i = open(in_path, O_RDONLY), o = open(so, O_WRONLY | O_CREAT | O_TRUNC, 0644),
            e = open(se, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (i < 0 || o < 0 || e < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(127);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    char *o = slurp(so, NULL), *e = slurp(se, NULL);
    if (out) *out = o ? o : calloc(1, 1); else free(o);
    if (err) *err = e ? e : calloc(1, 1); else free(e);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *gen(const char *const *opts)
{
    char *out, *err;
    int st = run("generate", opts, NULL, &out, &err);
    if (st) fprintf(stderr, "generate: exit %d: %s", st, err);
    TCHECK(st == 0);
    free(err);
    return out;
}

/* status and stderr of a refused command line */
static void refused(const char *cmd, const char *const *opts, const char *says)
{
    char *err;
    int st = run(cmd, opts, NULL, NULL, &err);
    printf("refused: %s", err);
    TCHECK(st == 1 && strstr(err, says));
    free(err);
}

static void test_refusals(void)
{
    refused("generate", (const char *const[]){"-p", "w5", "-n", "5", "--json", NULL}, "unknown option \"--json\"");
    refused("chat", (const char *const[]){"--frob", NULL}, "unknown option \"--frob\"");
    refused("generate", (const char *const[]){"-p", "w5", "--temperature", "inf", NULL}, "not a finite number");
    refused("generate", (const char *const[]){"-p", "w5", "--temp", "nan", NULL}, "not a finite number");
    refused("generate", (const char *const[]){"-p", "w5", "--top-p", "2", NULL}, "outside (0, 1]");
    refused("generate", (const char *const[]){"-p", "w5", "--top-p", "0", NULL}, "outside (0, 1]");
    refused("generate", (const char *const[]){"-p", "w5", "-n", "99999999999", NULL}, "out of range");
    refused("generate", (const char *const[]){"-p", "w5", "-n", "-2", NULL}, "out of range (-1 to 2147483647)");
    refused("generate", (const char *const[]){"-p", "w5", "-n", "9999999999", NULL}, "out of range (-1 to 2147483647)");
    refused("generate", (const char *const[]){"-p", "w5", "--clamp-len", "-5", NULL}, "--clamp-len: -5 is out of range (-1 to");
    refused("chat", (const char *const[]){"--clamp-len", "-2", NULL}, "--clamp-len: -2 is out of range (-1 to");
    refused("generate", (const char *const[]){"-p", "w5", "--top-k", "9999999999", NULL}, "out of range (0 to 2147483647)");
    /* the library's rule, as txlm serve's top_k: refused before the prompt is fed (nothing printed) */
    refused("generate", (const char *const[]){"-p", "w5", "--top-k", "1001", NULL}, "--top-k 1001: more than the vocabulary's 1000");
    refused("chat", (const char *const[]){"--top-k", "1001", NULL}, "--top-k 1001: more than the vocabulary's 1000");
    refused("generate", (const char *const[]){"-p", "w5", "--repeat-penalty", "0", NULL}, "above 0");
    refused("generate", (const char *const[]){"-p", "w5", "--stop", "", NULL}, "empty");
    refused("generate", (const char *const[]){"--state-in", path_in("missing"), NULL}, "--state-in");
}

static void test_aliases(void)
{
    char *a = gen((const char *const[]){"-p", "w5 w9", "-n", "12", "--temperature", "0.8", "--seed", "7", NULL});
    char *b = gen((const char *const[]){"-p", "w5 w9", "-n", "12", "--temp", "0.8", "-s", "7", NULL});
    char *g0 = gen((const char *const[]){"-p", "w5 w9", "-n", "12", "--temp", "0", NULL});
    char *gm = gen((const char *const[]){"-p", "w5 w9", "-n", "12", "--temp", "-1", NULL});
    TCHECK(!strcmp(a, b) && !strcmp(g0, gm));
    /* no --seed: a random one, told on stderr, that makes the same text again */
    char *out, *err, *again;
    TCHECK(run("generate", (const char *const[]){"-p", "w5 w9", "-n", "12", NULL}, NULL, &out, &err) == 0);
    const char *at = strstr(err, "seed ");
    char seed[32] = "";
    if (at) sscanf(at + 5, "%31[0-9]", seed);
    printf("random seed: %s\n", seed);
    TCHECK(seed[0]);
    again = gen((const char *const[]){"-p", "w5 w9", "-n", "12", "--seed", seed, NULL});
    TCHECK(!strcmp(out, again));
    /* the timing summary */
    TCHECK(strstr(err, "load ") && strstr(err, "prompt 2 tokens") && strstr(err, "generated 12 tokens") && strstr(err, "tokens/s"));
    free(a), free(b), free(g0), free(gm), free(out), free(err), free(again);
}

static void test_stop_and_prompt(void)
{
    char *full = gen((const char *const[]){"-p", "w5 w9", "-n", "30", "--seed", "3", NULL});
    /* the stop string: the 6th generated word */
    char word[32] = "", stop[40];
    const char *p = full + 5;
    for (int i = 0; i < 5 && p; i++) p = strchr(p + 1, ' ');
    if (p) sscanf(p + 1, "%31s", word);
    snprintf(stop, sizeof stop, " %s", word);
    char *cut = gen((const char *const[]){"-p", "w5 w9", "-n", "-1", "--seed", "3", "--stop", stop, NULL});
    const char *first = strstr(full + 5, stop);
    TCHECK(word[0] && first);
    if (first) TCHECK(strlen(cut) == (size_t)(first - full) + 1 && !strncmp(cut, full, first - full) && cut[first - full] == '\n');
    printf("--stop \"%s\": %s", stop, cut);
    /* escapes: \n stops at the first line break, which never comes before -n */
    char *nl = gen((const char *const[]){"-p", "w5 w9", "-n", "30", "--seed", "3", "--stop", "\\n", NULL});
    TCHECK(!strcmp(nl, full) || strlen(nl) < strlen(full));
    char *bare = gen((const char *const[]){"-p", "w5 w9", "-n", "30", "--seed", "3", "--no-display-prompt", NULL});
    TCHECK(!strcmp(bare, full + 5));
    free(full), free(cut), free(nl), free(bare);
}

static int count_words(const char *s, char words[][16], int cap)
{
    int n = 0;
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *w = strtok(buf, " \n"); w && n < cap; w = strtok(NULL, " \n")) snprintf(words[n++], 16, "%s", w);
    return n;
}

static void test_state(void)
{
    static char w1[64][16], w2[64][16], w3[64][16];
    char *whole = gen((const char *const[]){"-p", "w5 w9", "-n", "20", "--seed", "5", NULL});
    char *a = gen((const char *const[]){"-p", "w5 w9", "-n", "8", "--seed", "5", "--state-out", path_in("s.state"), NULL});
    char *b = gen((const char *const[]){"--state-in", path_in("s.state"), "-n", "12", NULL});
    int n1 = count_words(whole, w1, 64), n2 = count_words(a, w2, 64), n3 = count_words(b, w3, 64);
    TCHECK(n1 == 22 && n2 == 10 && n3 == 12);
    int same = n1 == n2 + n3;
    for (int i = 0; same && i < n2; i++) same = !strcmp(w1[i], w2[i]);
    for (int i = 0; same && i < n3; i++) same = !strcmp(w1[n2 + i], w3[i]);
    TCHECK(same);
    free(whole), free(a), free(b);
}

static int repeats(const char *s)
{
    static char w[64][16];
    int n = count_words(s, w, 64), r = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) r += !strcmp(w[i], w[j]);
    return r;
}

static void test_penalty(void)
{
    char *plain = gen((const char *const[]){"-p", "w5 w9", "-n", "20", "--temp", "0", NULL});
    char *one = gen((const char *const[]){"-p", "w5 w9", "-n", "20", "--temp", "0", "--repeat-penalty", "1", NULL});
    char *pen = gen((const char *const[]){"-p", "w5 w9", "-n", "20", "--temp", "0", "--repeat-penalty", "100", NULL});
    printf("greedy: %d repeats; penalised: %d\n", repeats(plain), repeats(pen));
    TCHECK(!strcmp(plain, one) && repeats(plain) > 3 && repeats(pen) == 0);
    free(plain), free(one), free(pen);
}

/* The replies of a chat from a pipe: stdout holds them alone, a line each
 * (no prompts; commands answer on stderr). */
static int replies(const char *out, char r[][512], int cap)
{
    int n = 0;
    for (const char *p = out; *p && n < cap;) {
        size_t len = strcspn(p, "\n");
        if (p[len] != '\n') break;
        snprintf(r[n++], 512, "%.*s", (int)len, p);
        p += len + 1;
    }
    return n;
}

static void test_chat(void)
{
    static char r[8][512];
    char *out, *err;
    const char *script = "w5 w9\nw7 w8\n/save %s\nw3\n/load %s\nw3\n/reset\nw5 w9\n";
    char input[4096];
    snprintf(input, sizeof input, script, path_in("c.state"), path_in("c.state"));
    int st = run("chat", (const char *const[]){"--temp", "0", "-n", "8", NULL}, input, &out, &err);
    printf("chat:\n%s", out);
    TCHECK(st == 0);
    int n = replies(out, r, 8);
    TCHECK(n == 5 && !strstr(out, "> ") && !strstr(err, "> "));
    TCHECK(!strcmp(r[2], r[3]) && !strcmp(r[0], r[4]) && r[0][0]); /* /load, /reset */
    TCHECK(strstr(err, "saved to") && strstr(err, "loaded") && strstr(err, "memory cleared"));
    /* the second reply continues the whole conversation */
    char conv[2048];
    snprintf(conv, sizeof conv, "w5 w9\n%s\nw7 w8\n", r[0]);
    char *cont = gen((const char *const[]){"-p", conv, "-n", "8", "--temp", "0", "--stop", "\\n", "--no-display-prompt", NULL});
    cont[strcspn(cont, "\n")] = 0;
    TCHECK(!strcmp(cont, r[1]));
    printf("second reply: \"%s\", generate on the conversation: \"%s\"\n", r[1], cont);
    free(out), free(err), free(cont);
}

/* Ctrl-C in a reply that would never end: the chat returns to the prompt
 * and answers the next line. */
static void test_chat_sigint(void)
{
    int in[2];
    TCHECK(pipe(in) == 0);
    const char *out_path = path_in("chat_sigint.out");
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open("/dev/null", O_WRONLY);
        close(in[1]);
        if (fo < 0 || fe < 0 || dup2(in[0], 0) < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(127);
        execl(txlm, txlm, "chat", "-m", model, "--stop", "never", "--seed", "2", "-n", "300", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    TCHECK(write(in[1], "w5\n", 3) == 3);
    struct stat sb;
    for (int i = 0; i < 600; i++) {
        if (stat(out_path, &sb) == 0 && sb.st_size > 60) break;
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGINT);
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    TCHECK(write(in[1], "w6\n/quit\n", 9) == 9);
    close(in[1]);
    int status = 0;
    TCHECK(waitpid(pid, &status, 0) == pid);
    char *out = slurp(out_path, NULL);
    /* --stop never: the replies hold line breaks of their own, so only their words are counted */
    int words = 0;
    for (const char *q = out; q && *q; q++) words += *q == 'w' && (q == out || q[-1] == ' ' || q[-1] == '\n');
    printf("chat after Ctrl-C: exit %d, %d words in the two replies\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1, words);
    /* the second line answered in full (300 tokens, a few of them line breaks), the first stopped early */
    TCHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && words >= 281 && words < 550);
    free(out);
}

static int copy_file(const char *from, const char *to)
{
    size_t n = 0;
    char *b = slurp(from, &n);
    FILE *f = b ? fopen(to, "wb") : NULL;
    int rc = !f || fwrite(b, 1, n, f) != n;
    if (f && fclose(f)) rc = 1;
    free(b);
    return rc;
}

static int same_bytes(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    int same = x && y && na == nb && !memcmp(x, y, na);
    free(x), free(y);
    return same;
}

/* /reset with an argument, -p fed unanswered, /save onto an input. */
static void test_chat_edges(void)
{
    static char r[8][512];
    char *out, *err;
    /* "/reset now" is refused: the memory stays, so the second reply is the one without any /reset */
    int st = run("chat", (const char *const[]){"--temp", "0", "-n", "8", NULL}, "w5 w9\n/reset now\nw7 w8\n", &out, &err);
    char *plain_out, *plain_err;
    TCHECK(run("chat", (const char *const[]){"--temp", "0", "-n", "8", NULL}, "w5 w9\nw7 w8\n", &plain_out, &plain_err) == 0);
    printf("/reset now: %s", err);
    TCHECK(st == 0 && strstr(err, "/reset takes no argument") && !strstr(err, "memory cleared") && !strcmp(out, plain_out));
    free(out), free(err), free(plain_out), free(plain_err);
    /* -p: fed first, unanswered; the first line's reply continues it */
    st = run("chat", (const char *const[]){"--temp", "0", "-n", "8", "-p", "w5 w9\n", NULL}, "w7 w8\n", &out, &err);
    TCHECK(st == 0 && replies(out, r, 8) == 1);
    char *cont = gen((const char *const[]){"-p", "w5 w9\nw7 w8\n", "-n", "8", "--temp", "0", "--stop", "\\n", "--no-display-prompt", NULL});
    cont[strcspn(cont, "\n")] = 0;
    printf("chat -p: \"%s\", generate: \"%s\"\n", r[0], cont);
    TCHECK(!strcmp(cont, r[0]));
    free(out), free(err), free(cont);
    /* /save onto the model or the state the chat started from: refused, both intact */
    char state[1100], model_copy[1100], state_copy[1100]; /* path_in's buffers are reused */
    snprintf(state, sizeof state, "%s", path_in("edge.state"));
    snprintf(model_copy, sizeof model_copy, "%s", path_in("copy.txlm"));
    snprintf(state_copy, sizeof state_copy, "%s", path_in("copy.state"));
    free(gen((const char *const[]){"-p", "w5", "-n", "2", "--seed", "1", "--state-out", state, NULL}));
    TCHECK(copy_file(model, model_copy) == 0 && copy_file(state, state_copy) == 0);
    char script[4096];
    snprintf(script, sizeof script, "/save %s\n/save %s\n/save -\nw5\n", model, state);
    st = run("chat", (const char *const[]){"--state-in", state, "-n", "2", NULL}, script, &out, &err);
    printf("/save onto inputs: %s", err);
    TCHECK(st == 0 && strstr(err, "the same file as the model") && strstr(err, "the same file as --state-in") &&
           strstr(err, "/save -: standard output holds the conversation") && !strstr(err, "saved to"));
    TCHECK(same_bytes(model, model_copy) && same_bytes(state, state_copy));
    free(out), free(err);
}

/* chat --help lists every command the chat knows (/help and /exit too), /help
 * in a chat prints the same list, every listed command is taken, and
 * anything else is unknown. */
static void test_chat_help(void)
{
    char *help, *err;
    TCHECK(run("chat", (const char *const[]){"--help", NULL}, NULL, &help, &err) == 0);
    free(err);
    const char *list = strstr(help, "\nCommands");
    list = list ? strchr(list + 1, '\n') : NULL;
    TCHECK(list != NULL);
    if (!list) return free(help);
    list++;
    static const char *const known[] = {"/save", "/load", "/reset", "/help", "/quit", "/exit"};
    for (size_t k = 0; k < sizeof known / sizeof *known; k++) {
        char want[32];
        snprintf(want, sizeof want, "  %s ", known[k]);
        if (!strstr(list, want)) fprintf(stderr, "chat --help does not list %s:\n%s", known[k], list);
        TCHECK(strstr(list, want) != NULL);
    }
    /* each line of the list is a command the chat takes (FILE: a state saved first); /help prints the list */
    char state[1100];
    snprintf(state, sizeof state, "%s", path_in("help.state"));
    int n = 0;
    char *out;
    for (const char *l = list; !strncmp(l, "  /", 3); l = strchr(l, '\n') + 1, n++) {
        char script[2400];
        size_t len = strcspn(l + 2, " ");
        if (!strncmp(l + 2 + len, " FILE", 5))
            snprintf(script, sizeof script, "w5\n/save %s\n%.*s %s\n", state, (int)len, l + 2, state);
        else
            snprintf(script, sizeof script, "w5\n%.*s\n", (int)len, l + 2);
        int st = run("chat", (const char *const[]){"-n", "2", "--seed", "1", NULL}, script, &out, &err);
        if (st || strstr(err, "unknown command")) fprintf(stderr, "chat: %s%s", script, err);
        TCHECK(st == 0 && !strstr(err, "unknown command") && !strstr(err, "needs a FILE"));
        if (!strncmp(l + 2, "/help ", 6)) TCHECK(strstr(err, list) != NULL);
        free(out), free(err);
    }
    printf("chat --help lists %d commands, each taken\n", n);
    TCHECK(n >= 6);
    int st = run("chat", (const char *const[]){"-n", "2", NULL}, "/bogus\n", &out, &err);
    TCHECK(st == 0 && strstr(err, "unknown command /bogus (/help lists them)"));
    free(out), free(err), free(help);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s TXLM TXLM_PACK GOLDEN_DIR\n", argv[0]);
        return 2;
    }
    txlm = argv[1];
    dir = make_tmp_dir();
    if (!dir) return 1;
    snprintf(model, sizeof model, "%s/word.txlm", dir);
    if (pack_case(argv[2], argv[3], "adaptive_word", model, NULL)) return rm_tree(dir), 1;
    test_refusals();
    test_aliases();
    test_stop_and_prompt();
    test_state();
    test_penalty();
    test_chat();
    test_chat_sigint();
    test_chat_edges();
    test_chat_help();
    rm_tree(dir);
    free(dir);
    printf("%d failures\n", text_failures);
    return text_failures != 0;
}
