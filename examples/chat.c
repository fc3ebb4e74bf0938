/* A streaming chat loop on the txlm C API: each line typed is fed to the
 * model with the memory of the whole conversation, and the reply is
 * printed token by token until the model ends its line (a stop string),
 * 200 tokens, or Ctrl-C, which stops the reply and returns to the prompt.
 *
 *   cc chat.c $(pkg-config --cflags --libs txlm) -o chat
 *   (for a prefix the loader does not search, add
 *   -Wl,-rpath,"$(pkg-config --variable=libdir txlm)": README.md, "Installing")
 *   ./chat model.txlm [seed]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txlm.h>

static volatile sig_atomic_t interrupted;
static void on_sigint(int sig) { (void)sig, interrupted = 1; }

/* What the progress callback needs to print each token as it comes. */
typedef struct reply {
    const int32_t *tokens; /* txlm_session_generate writes them here */
    size_t printed;
    txlm_detokenizer *detok; /* token -> text, exactly as txlm_detokenize would join it */
    txlm_stopper *stop;      /* holds back text that may begin "\n", and ends the reply there */
    int stopped;
} reply;

static void print_piece(reply *r, const char *text, size_t len)
{
    const char *out;
    size_t n;
    if (txlm_stopper_push(r->stop, text, len, &out, &n, &r->stopped) == TXLM_OK) fwrite(out, 1, n, stdout);
    fflush(stdout);
}

/* Called after each token is drawn and fed: print it; non-zero ends the reply. */
static int on_token(void *user, double fraction)
{
    reply *r = user;
    (void)fraction;
    const char *piece;
    size_t len;
    if (txlm_detokenizer_push(r->detok, r->tokens[r->printed++], &piece, &len) == TXLM_OK) print_piece(r, piece, len);
    return r->stopped || interrupted;
}

static int check(txlm_status st, const char *what)
{
    if (st != TXLM_OK && st != TXLM_ERR_CANCELLED)
        fprintf(stderr, "%s: %s (%s)\n", what, txlm_last_error(), txlm_status_string(st));
    return st != TXLM_OK && st != TXLM_ERR_CANCELLED;
}

/* One line in, one reply out. */
static int answer(txlm_session *s, txlm_model *m, reply *r, const char *line)
{
    enum { MAX_REPLY = 200 };
    static int32_t tokens[MAX_REPLY];
    static int32_t recent[64]; /* the line's last tokens, for the repetition penalty */
    int32_t *ids = NULL;
    size_t n = 0, made = 0;
    if (check(txlm_tokenize(m, line, strlen(line), &ids, &n), "tokenize")) return 1;
    int bad = n && check(txlm_session_feed_long(s, ids, n, NULL, NULL, NULL), "feed");
    uint32_t k = n < 64 ? (uint32_t)n : 64;
    if (k) memcpy(recent, ids + n - k, k * sizeof *recent);
    txlm_free(ids);
    if (bad || !n) return bad;
    txlm_sampling sampling = {.temperature = 0.8f, .top_k = 40};
    txlm_repeat_penalty penalty = {.penalty = 1.1f, .tokens = recent, .n = k};
    r->tokens = tokens, r->printed = 0, r->stopped = 0;
    interrupted = 0;
    txlm_status st = txlm_session_generate(s, &sampling, &penalty, MAX_REPLY, tokens, on_token, r, &made);
    /* the end of the reply: what the detokenizer and the stop string held back */
    const char *rest;
    size_t len;
    if (txlm_detokenizer_flush(r->detok, &rest, &len) == TXLM_OK) print_piece(r, rest, len);
    if (txlm_stopper_flush(r->stop, &rest, &len) == TXLM_OK) fwrite(rest, 1, len, stdout);
    putchar('\n');
    return check(st, "generate");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL.txlm [seed]\n", argv[0]);
        return 2;
    }
    if (txlm_version_number() / 10000 != TXLM_VERSION_MAJOR) {
        fprintf(stderr, "built for txlm %d.x, running with %s\n", TXLM_VERSION_MAJOR, txlm_version());
        return 1;
    }
    txlm_context *ctx = NULL;
    txlm_model *model = NULL;
    txlm_session *session = NULL;
    reply r = {0};
    const char *stops[] = {"\n"};
    int rc = 1;
    if (check(txlm_context_create(NULL, &ctx), "device") || check(txlm_model_load(ctx, argv[1], NULL, &model), "model") ||
        check(txlm_session_create(model, NULL, &session), "session") ||
        check(txlm_detokenizer_create(model, &r.detok), "detokenizer") || check(txlm_stopper_create(stops, 1, &r.stop), "stop"))
        goto out;
    txlm_session_set_seed(session, argc > 2 ? strtoull(argv[2], NULL, 10) : 1);
    signal(SIGINT, on_sigint);
    txlm_memory_use mem;
    if (txlm_session_memory(session, &mem) == TXLM_OK)
        fprintf(stderr, "txlm %s, session: %.1f MiB on the device\n", txlm_version(), mem.device_bytes / 1048576.0);
    char line[4096];
    rc = 0;
    while (!rc && (printf("> "), fflush(stdout), fgets(line, sizeof line, stdin))) rc = answer(session, model, &r, line);
out:
    txlm_stopper_free(r.stop);
    txlm_detokenizer_free(r.detok);
    txlm_session_free(session);
    txlm_model_free(model);
    txlm_context_destroy(ctx);
    return rc;
}
