/* txlm logprobs: token ids in, log-probabilities out, through one session. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_batch.h"
#include "cli_files.h"
#include "logprobs_streams.h"

static void usage(void)
{
    printf("usage: txlm logprobs -m MODEL (--tokens 3,17,5,...[;4,9,...] | -f FILE) [--segments 8,8,...[;...]] -o OUT.f32\n"
           "                     [--mem-len M] [--clamp-len C] [--same-length 0|1] [--zero-memory 0|1] [--no-verify]\n"
           "                     [--binary-ok]\n\n"
           "-f FILE (also --file, --text) tokenizes FILE with the model's tokenizer (its ids are then the tokens);\n"
           "a FILE that is plainly not text (a NUL byte, or mostly not UTF-8, in its first 4 KiB) is refused before\n"
           "the model loads (--binary-ok reads it).\n"
           "Feeds the tokens through ONE session in segments of the given lengths (default: the model's\n"
           "tgt_len), carrying the memory, and writes little-endian float32 [tokens, n_token]\n"
           "log-probabilities, rows in input order.\n\n"
           "Several streams: --tokens 3,17,5;8,2;4 (streams separated by ';'), each with its own session and\n"
           "memory, their segments fed together as one batch per step (a stream whose segments ran out leaves\n"
           "it). --segments is then one list for every stream or one per stream, ';'-separated the same way.\n"
           "The output is float32 [stream][token][n_token], streams in the order given.\n\n"
           "-o - writes standard output (never a terminal). OUT must not be the model or the text.\n");
}

static const char *const logprobs_flags[] = {"-m", "--model", "--tokens", "-f", "--file", "--text", "--segments", "-o", "--output", NULL};

/* Group k of --segments (or the one shared group): no zero length, its
 * sum equal to stream k's length; *longest raised to its longest. */
static int check_segments(const int32_t *segs, uint32_t n_segs, uint32_t k, uint32_t n_streams, uint32_t n_tokens,
                          uint32_t *longest)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n_segs; i++) {
        if (segs[i] == 0) return cli_error("--segments: a segment of length 0");
        sum += (uint32_t)segs[i];
        if ((uint32_t)segs[i] > *longest) *longest = (uint32_t)segs[i];
    }
    if (sum == n_tokens) return 0;
    if (n_streams == 1) return cli_error("--segments add up to %llu but %u tokens were given", (unsigned long long)sum, n_tokens);
    return cli_error("--segments add up to %llu but stream %u has %u tokens", (unsigned long long)sum, k, n_tokens);
}

/* The tokens through one session in segments (segs, or seg_len each), their log-probabilities into lp. */
static int feed_all(txlm_session *s, const int32_t *tokens, uint32_t n_tokens, const int32_t *segs, uint32_t seg_len,
                    uint32_t n_token, float *lp)
{
    for (uint32_t done = 0, k = 0; done < n_tokens; k++) {
        uint32_t len = segs ? (uint32_t)segs[k] : (n_tokens - done < seg_len ? n_tokens - done : seg_len);
        txlm_status st = txlm_session_feed(s, tokens + done, len, lp + (size_t)done * n_token);
        if (st) return cli_lib_error(st, "running the model");
        done += len;
    }
    return 0;
}

typedef struct logprobs_args {
    const char *model, *tokens, *segments, *out, *text_file;
    int binary_ok;        /* --binary-ok: a FILE that looks binary is read anyway */
    txlm_session_options so;
    txlm_model_options mo;
} logprobs_args;

/* 0, 1 after an error, 2 after --help. */
static int parse_args(int argc, char **argv, logprobs_args *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int r;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage();
            return 2;
        } else if (!strcmp(a, "--no-verify")) {
            o->mo.no_verify = 1;
            continue;
        } else if (!strcmp(a, "--binary-ok")) {
            o->binary_ok = 1;
            continue;
        }
        if (!(v = cli_option_value(argc, argv, &i, "logprobs", logprobs_flags))) return 1;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) { if (cli_set_once(&o->model, v, a)) return 1; }
        else if (!strcmp(a, "--tokens")) o->tokens = v;
        else if (!strcmp(a, "-f") || !strcmp(a, "--file") || !strcmp(a, "--text")) o->text_file = v;
        else if (!strcmp(a, "--segments")) o->segments = v;
        else if (!strcmp(a, "-o") || !strcmp(a, "--output")) o->out = v;
        else if ((r = cli_session_option(a, v, &o->so)) >= 0) { if (r) return 1; }
        else return cli_error("logprobs: unknown option \"%s\" (see txlm logprobs --help)", a);
    }
    if (!o->model || !(o->tokens || o->text_file) || !o->out)
        return cli_error("logprobs: -m MODEL, --tokens or -f FILE, and -o OUT are required");
    if (o->tokens && o->text_file) return cli_error("logprobs: give --tokens or -f FILE, not both");
    return 0;
}

/* The segment groups given to the streams (one shared by all, or one per
 * stream), each checked against its stream; *longest: the longest segment. */
static int assign_segments(lp_streams *x, int32_t **sg, uint32_t *sg_n, uint32_t n_sg, uint32_t *longest)
{
    if (n_sg > x->n) return cli_error("--segments: %u lists for %u streams", n_sg, x->n);
    if (n_sg != 1 && n_sg != x->n)
        return cli_error("--segments: %u lists for %u streams (give one for every stream, or one per stream)", n_sg, x->n);
    x->segs = malloc(x->n * sizeof *x->segs);
    x->n_segs = malloc(x->n * sizeof *x->n_segs);
    if (!x->segs || !x->n_segs) return cli_error("out of memory");
    for (uint32_t k = 0; k < x->n; k++) {
        x->segs[k] = sg[n_sg == 1 ? 0 : k], x->n_segs[k] = sg_n[n_sg == 1 ? 0 : k];
        if (check_segments(x->segs[k], x->n_segs[k], k, x->n, x->lens[k], longest)) return 1;
    }
    return 0;
}

/* Every id inside the vocabulary, named by stream and position when not. */
static int check_ids(const lp_streams *x, uint32_t n_token)
{
    for (uint32_t k = 0; k < x->n; k++)
        for (uint32_t i = 0; i < x->lens[k]; i++)
            if ((uint32_t)x->tokens[k][i] >= n_token) {
                if (x->n == 1) return cli_error("--tokens: id %d at %u is outside the vocabulary [0, %u)", x->tokens[k][i], i, n_token);
                return cli_error("--tokens: id %d at %u of stream %u is outside the vocabulary [0, %u)", x->tokens[k][i], i, k,
                                 n_token);
            }
    return 0;
}

/* -f FILE's tokens as the one stream. */
static int text_stream(txlm_model *m, const char *text, size_t len, const char *file, lp_streams *x)
{
    x->tokens = calloc(1, sizeof *x->tokens);
    x->lens = calloc(1, sizeof *x->lens);
    if (!x->tokens || !x->lens) return cli_error("out of memory");
    x->n = 1;
    return cli_tokenize(m, text, len, file, &x->tokens[0], &x->lens[0]);
}

typedef struct lp_run {
    txlm_context *ctx;
    txlm_model *m;
    txlm_model_params p;
    lp_streams x;
    int32_t **sg;       /* --segments' lists (x.segs points into them) */
    uint32_t *sg_n, n_sg;
    char *text;
    float *lp;
} lp_run;

/* The streams, checked, and their log-probabilities in r->lp; *total: their tokens. */
static int run_streams(lp_run *r, const logprobs_args *o, uint64_t *total)
{
    txlm_session_options so = o->so;
    uint32_t longest = 0;
    if (r->n_sg && assign_segments(&r->x, r->sg, r->sg_n, r->n_sg, &longest)) return 1;
    if (check_ids(&r->x, r->p.n_token)) return 1;
    r->x.seg_len = r->p.tgt_len ? r->p.tgt_len : 128;
    so.max_segment = r->n_sg ? longest : r->x.seg_len;
    *total = 0;
    for (uint32_t k = 0; k < r->x.n; k++) *total += r->x.lens[k];
    if (*total > SIZE_MAX / sizeof(float) / r->p.n_token || !(r->lp = malloc(*total * r->p.n_token * sizeof *r->lp)))
        return cli_error("out of memory for %llu x %u log-probabilities", (unsigned long long)*total, r->p.n_token);
    if (r->x.n > 1) return lp_streams_feed(r->m, &so, &r->x, r->p.n_token, r->lp);
    /* one stream: one session, as always */
    txlm_session *s = NULL;
    txlm_status st = txlm_session_create(r->m, &so, &s);
    if (st) return cli_lib_error(st, "creating a session");
    int rc = feed_all(s, r->x.tokens[0], r->x.lens[0], r->n_sg ? r->x.segs[0] : NULL, r->x.seg_len, r->p.n_token, r->lp);
    txlm_session_free(s);
    return rc;
}

int cmd_logprobs(int argc, char **argv)
{
    logprobs_args o = {.so = {.same_length = -1}};
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc == 2 ? 0 : 1;
    lp_run r = {0};
    cli_files io;
    cli_files_init(&io);
    cli_files_input(&io, "the model", o.model);
    cli_files_input(&io, "the text", o.text_file);
    int out = cli_files_output(&io, "-o", o.out, 1);
    rc = 1;
    if (cli_files_open(&io)) goto done;
    if (o.tokens && cli_parse_groups(o.tokens, "--tokens", &r.x.tokens, &r.x.lens, &r.x.n)) goto done;
    if (o.segments && cli_parse_groups(o.segments, "--segments", &r.sg, &r.sg_n, &r.n_sg)) goto done;
    /* the text first: a bad file fails before the device starts */
    size_t text_len = 0;
    if (o.text_file && (!(r.text = cli_read_file(o.text_file, &text_len)) ||
                        cli_refuse_binary(o.text_file, r.text, text_len, o.binary_ok)))
        goto done;
    if (cli_open_model(o.model, &o.mo, &r.ctx, &r.m)) goto done;
    txlm_model_get_params(r.m, &r.p);
    if (o.text_file && (rc = text_stream(r.m, r.text, text_len, o.text_file, &r.x))) goto done;
    uint64_t total = 0;
    if ((rc = run_streams(&r, &o, &total))) goto done;
    rc = cli_files_write(&io, out, r.lp, (size_t)total * r.p.n_token * sizeof *r.lp) || cli_files_commit(&io);
    if (!rc) rc = cli_validation_status(r.ctx);
done:
    cli_files_abort(&io);
    free(r.text);
    free(r.lp);
    free(r.x.segs);
    free(r.x.n_segs);
    cli_groups_free(r.x.tokens, r.x.lens, r.x.n);
    cli_groups_free(r.sg, r.sg_n, r.n_sg);
    txlm_model_free(r.m);
    txlm_context_destroy(r.ctx);
    return rc;
}
