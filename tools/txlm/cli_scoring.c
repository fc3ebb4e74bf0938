/* What txlm eval, score and compare share (cli_scoring.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_scoring.h"


static int set_file(cli_text_run *r, const char *v, const char *cmd)
{
    if (r->file) return cli_error("%s: more than one FILE given", cmd);
    r->file = v;
    return 0;
}

/* One shared argument: 0 taken, 1 error, -1 none of them. A flag that
 * takes a value is known by name, so one in last position is told to
 * need a value, and an unknown one is named as unknown. */
static int shared_option(cli_text_run *r, int argc, char **argv, int *i, const char *cmd)
{
    static const char *const with_value[] = {"-m", "--model", "-f", "--file", "--tgt-len", "--mem-len",
                                             "--clamp-len", "--same-length", "--zero-memory", NULL};
    const char *a = argv[*i], *v;
    if (!strcmp(a, "--progress")) return r->progress = 1, 0;
    if (!strcmp(a, "--no-verify")) return r->mo.no_verify = 1, 0;
    if (!strcmp(a, "--binary-ok")) return r->binary_ok = 1, 0;
    if (a[0] != '-' || !strcmp(a, "-")) return set_file(r, a, cmd); /* "-": standard input */
    size_t k = 0;
    while (with_value[k] && strcmp(a, with_value[k])) k++;
    if (!with_value[k]) return -1;
    if (!(v = cli_value(argc, argv, i))) return 1;
    if (k < 2) {
        if (r->n_models == 2) return cli_error("%s: more than two models given (-m %s -m %s -m %s)", cmd, r->model[0], r->model[1], v);
        return r->model[r->n_models++] = v, 0;
    }
    if (k < 4) return set_file(r, v, cmd);
    if (k == 4) {
        if (cli_parse_u32(v, a, &r->tgt_len)) return 1;
        return r->tgt_len ? 0 : cli_error("--tgt-len: must be at least 1 (leave it out for the model's own)");
    }
    return cli_session_option(a, v, &r->so);
}

int cli_text_run_parse(cli_text_run *r, int argc, char **argv, const char *cmd, int models, void (*usage)(void),
                       cli_arg_fn own, void *user)
{
    memset(r, 0, sizeof *r);
    r->so.same_length = -1; /* the model's */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return usage(), -1;
        int rc = shared_option(r, argc, argv, &i, cmd);
        if (rc < 0) rc = own(user, argc, argv, &i);
        if (rc < 0) return cli_error("%s: unknown option \"%s\" (see txlm %s --help)", cmd, argv[i], cmd);
        if (rc) return 1;
    }
    if (r->n_models > models)
        return cli_error("%s: %d models given (-m %s -m %s); it takes %s", cmd, r->n_models, r->model[0], r->model[1],
                         models == 1 ? "one (txlm compare compares two)" : "two");
    if (r->n_models < models)
        return models == 1 ? cli_error("%s: -m MODEL is required", cmd)
                           : cli_error("%s: two -m MODEL are required (%d given)", cmd, r->n_models);
    if (!r->file) return cli_error("%s: FILE is required (\"-\" reads standard input)", cmd);
    cli_files_init(&r->io);
    cli_files_input(&r->io, models == 1 ? "the model" : "model A", r->model[0]);
    cli_files_input(&r->io, "model B", models == 2 ? r->model[1] : NULL);
    cli_files_input(&r->io, "the text", r->file);
    return cli_text_run_start(r);
}

int cli_report_option(int argc, char **argv, int *i, int *json, const char **per_token)
{
    if (!strcmp(argv[*i], "--json")) return *json = 1, 0;
    if (strcmp(argv[*i], "--per-token")) return -1;
    return !(*per_token = cli_value(argc, argv, i));
}

/* The text's first block and the rest of the line it ends in, read into
 * r->head (nothing can be put back into a pipe) and judged; lines are
 * then read from it first (cli_read_line). 0, or 1 after printing why. */
static int read_head(cli_text_run *r)
{
    size_t cap = CLI_TEXT_BLOCK + 1, n = 0;
    if (!(r->head = malloc(cap))) return cli_error("out of memory");
    n = fread(r->head, 1, CLI_TEXT_BLOCK, r->in);
    if (n == CLI_TEXT_BLOCK && r->head[n - 1] != '\n') {
        char *rest = NULL;
        size_t rest_cap = 0;
        errno = 0;
        ssize_t more = getline(&rest, &rest_cap, r->in);
        char *h = more > 0 ? realloc(r->head, n + (size_t)more + 1) : r->head;
        if (h) r->head = h;
        if (h && more > 0) memcpy(r->head + n, rest, (size_t)more), n += (size_t)more;
        free(rest);
        if (!h || (more < 0 && errno == ENOMEM)) return cli_error("out of memory");
    }
    if (ferror(r->in)) return cli_error("%s: read error", r->file);
    if (cli_refuse_binary(r->file, r->head, n, r->binary_ok)) return 1;
    /* fmemopen refuses an empty buffer: an empty text is read from in (at its end) */
    if (n && !(r->head_f = fmemopen(r->head, n, "r"))) return cli_error("out of memory");
    return 0;
}

static void close_text(cli_text_run *r)
{
    if (r->head_f) fclose(r->head_f);
    free(r->head);
    cli_close_input(r->in);
    r->in = NULL, r->head = NULL, r->head_f = NULL;
}

int cli_text_run_start(cli_text_run *r)
{
    if (!(r->in = cli_open_input(r->file))) return 1;
    if (read_head(r)) return close_text(r), 1;
    struct stat sb;
    r->in_bytes = fstat(fileno(r->in), &sb) == 0 && S_ISREG(sb.st_mode) ? (double)sb.st_size : 0;
    cli_sigint_catch();
    r->mo.progress = cli_cancel_on_sigint;
    return 0;
}

int cli_text_run_outputs(cli_text_run *r) { return cli_files_open(&r->io); }

int cli_text_run_finish(cli_text_run *r, int rc)
{
    cli_files_abort(&r->io);
    if (fflush(stdout) && !rc) rc = cli_error("writing the output failed");
    if (cli_interrupted) rc = (cli_error("interrupted"), 130);
    cli_sigint_restore();
    close_text(r);
    return rc;
}

uint32_t cli_text_run_segment(cli_text_run *r, const txlm_model_params *p)
{
    uint32_t seg = r->tgt_len ? r->tgt_len : p->tgt_len ? p->tgt_len : 128;
    r->so.max_segment = seg;
    return seg;
}

long cli_read_line(cli_text_run *r, char **line, size_t *cap, int *error)
{
    *error = 0;
    if (cli_interrupted) return -1;
    errno = 0;
    /* the head holds whole lines (read_head): its last ends where in goes on */
    ssize_t len = r->head_f ? getline(line, cap, r->head_f) : -1;
    if (len > 0) return r->done_bytes += (double)len, (long)len;
    if (r->head_f) fclose(r->head_f), r->head_f = NULL;
    errno = 0;
    len = getline(line, cap, r->in);
    if (len > 0) return r->done_bytes += (double)len, (long)len;
    /* Ctrl-C interrupts a read from a terminal or a pipe (EINTR): not an error */
    if (!cli_interrupted && (ferror(r->in) || errno == ENOMEM)) *error = cli_error("%s: read error", r->file);
    return -1;
}

int cli_each_line(cli_text_run *r, cli_line_fn fn, void *user)
{
    char *line = NULL;
    size_t cap = 0;
    long len;
    int err = 0, rc = 0;
    while (!rc && (len = cli_read_line(r, &line, &cap, &err)) >= 0) rc = fn(user, line, (size_t)len);
    free(line);
    return rc || err;
}

double cli_text_run_fraction(const cli_text_run *r) { return r->in_bytes > 0 ? r->done_bytes / r->in_bytes : -1; }

/* ---- tokens scored in segments ----------------------------------------- */

int cli_segments_push(cli_segments *q, const int32_t *ids, size_t n)
{
    if (q->n + n > q->cap) {
        size_t cap = (q->n + n) * 2;
        int32_t *b = realloc(q->buf, cap * sizeof *b);
        if (!b) return cli_error("out of memory");
        q->buf = b, q->cap = cap;
    }
    memcpy(q->buf + q->n, ids, n * sizeof *ids);
    q->n += n;
    return 0;
}

int cli_segments_push_text(cli_segments *q, txlm_model *m, const char *text, size_t len)
{
    int32_t *ids = NULL;
    size_t n = 0;
    txlm_status st = txlm_tokenize(m, text, len, &ids, &n);
    if (st) return cli_lib_error(st, "tokenizing");
    int rc = cli_segments_push(q, ids, n);
    txlm_free(ids);
    return rc;
}

uint32_t cli_segments_next(const cli_segments *q, int final)
{
    if (q->n > q->seg) return q->seg;
    return final && q->n > 1 ? (uint32_t)(q->n - 1) : 0;
}

void cli_segments_done(cli_segments *q, uint32_t len)
{
    memmove(q->buf, q->buf + len, (q->n - len) * sizeof *q->buf);
    q->n -= len;
}

void cli_segments_free(cli_segments *q)
{
    free(q->buf);
    memset(q, 0, sizeof *q);
}

/* ---- one model scoring a text -------------------------------------------- */

int cli_scorer_open(cli_scorer *sc, cli_text_run *r)
{
    if (cli_open_model(r->model[0], &r->mo, &sc->ctx, &sc->m)) return 1;
    txlm_model_get_params(sc->m, &sc->p);
    sc->q.seg = cli_text_run_segment(r, &sc->p);
    txlm_status st = txlm_session_create(sc->m, &r->so, &sc->s);
    if (st) return cli_lib_error(st, "creating a session");
    if (!(sc->lp = malloc(sc->q.seg * sizeof *sc->lp))) return cli_error("out of memory");
    return 0;
}

long cli_scorer_next(cli_scorer *sc, int final)
{
    uint32_t len = cli_interrupted ? 0 : cli_segments_next(&sc->q, final);
    if (!len) return 0;
    txlm_status st = txlm_session_score(sc->s, sc->q.buf, sc->q.buf + 1, len, sc->lp);
    return st ? (cli_lib_error(st, "running the model"), -1) : (long)len;
}

void cli_scorer_free(cli_scorer *sc)
{
    free(sc->lp);
    cli_segments_free(&sc->q);
    txlm_session_free(sc->s);
    txlm_model_free(sc->m);
    txlm_context_destroy(sc->ctx);
    memset(sc, 0, sizeof *sc);
}

/* ---- Ctrl-C ------------------------------------------------------------- */

volatile sig_atomic_t cli_interrupted;
static struct sigaction saved_sigint;

static void on_sigint(int sig)
{
    (void)sig;
    cli_interrupted = 1;
}

void cli_sigint_catch(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint; /* no SA_RESTART: a blocked read returns */
    sigemptyset(&sa.sa_mask);
    cli_interrupted = 0;
    sigaction(SIGINT, &sa, &saved_sigint);
}

void cli_sigint_restore(void) { sigaction(SIGINT, &saved_sigint, NULL); }

int cli_cancel_on_sigint(void *user, double fraction)
{
    (void)user, (void)fraction;
    return cli_interrupted;
}

/* ---- progress ----------------------------------------------------------- */

void cli_progress_start(cli_progress *pb, int force)
{
    pb->on = force || isatty(fileno(stderr));
    pb->t0 = cli_now();
    pb->last = 0;
}

void cli_progress_show(cli_progress *pb, double fraction, uint64_t tokens, const char *extra, int final)
{
    double now = cli_now();
    if (!pb->on || (!final && now - pb->last < 0.25)) return;
    pb->last = now;
    double el = now - pb->t0, rate = el > 0 ? (double)tokens / el : 0;
    int tty = isatty(fileno(stderr));
    fputs(tty ? "\r" : "", stderr);
    if (fraction >= 0) { /* a size known: the bar and the time left */
        double frac = fraction > 1 ? 1 : fraction, eta = frac > 0 ? el * (1 - frac) / frac : 0;
        int width = 30, fill = (int)(frac * width);
        fprintf(stderr, "[%.*s%*s] %5.1f%%  ", fill, "##############################", width - fill, "", 100 * frac);
        fprintf(stderr, "%llu tokens  %.1f tok/s  ETA %.0fs", (unsigned long long)tokens, rate, eta);
    } else
        fprintf(stderr, "%llu tokens  %.1f tok/s", (unsigned long long)tokens, rate);
    fprintf(stderr, "  %s %s", extra ? extra : "", tty ? "" : "\n");
    fflush(stderr);
}

void cli_progress_end(cli_progress *pb)
{
    if (pb->on && isatty(fileno(stderr))) fputc('\n', stderr);
}

/* ---- statistics --------------------------------------------------------- */

void cli_stats_add(cli_stats *s, double x)
{
    s->n++;
    double d = x - s->mean;
    s->mean += d / (double)s->n;
    s->m2 += d * (x - s->mean);
}

double cli_stats_se(const cli_stats *s)
{
    return s->n < 2 ? 0 : sqrt(s->m2 / ((double)s->n * (double)(s->n - 1)));
}

/* ---- output ------------------------------------------------------------- */

/* The length of the well-formed UTF-8 sequence at s (shortest form, no
 * surrogates, at most U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t need = s[0] < 0x80 ? 1 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : s[0] >= 0xE0 && s[0] < 0xF0 ? 3 : s[0] >= 0xF0 && s[0] < 0xF5 ? 4 : 0;
    if (!need || need > n) return 0;
    for (size_t i = 1; i < need; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    if ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0) || (s[0] == 0xF0 && s[1] < 0x90) ||
        (s[0] == 0xF4 && s[1] >= 0x90))
        return 0;
    return need;
}

void cli_json_string(FILE *f, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    fputc('"', f);
    for (size_t i = 0, l; i < len; i += l) {
        unsigned char c = u[i];
        l = utf8_len(u + i, len - i);
        if (!l) fputs("\\ufffd", f), l = 1; /* JSON text is UTF-8: a malformed byte becomes U+FFFD */
        else if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7F) fprintf(f, "\\u%04x", c);
        else fwrite(u + i, 1, l, f);
    }
    fputc('"', f);
}

void cli_json_number(FILE *f, double x, int digits)
{
    if (isfinite(x)) fprintf(f, "%.*f", digits, x);
    else fputs("null", f);
}

void cli_json_sig(FILE *f, double x, int digits)
{
    if (isfinite(x)) fprintf(f, "%.*g", digits, x);
    else fputs("null", f);
}

void cli_tsv_field(FILE *f, const char *s, size_t len)
{
    /* only what would cut the field: words never hold these, and a word
     * with a backslash stays as the text has it */
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '\t') fputs("\\t", f);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\r') fputs("\\r", f);
        else fputc(c, f);
    }
}
