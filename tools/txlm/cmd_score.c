/* txlm score: the surprisal of every token of a text (or of every word of
 * it, the tokens' surprisals summed back onto the text's own words), with
 * the memory carried across segments as txlm eval carries it. Lines are
 * held until all their tokens are scored, then printed in order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_scoring.h"

static void usage(void)
{
    printf("usage: txlm score -m MODEL (FILE | -f FILE | -) [--words] [--format tsv|jsonl] [--nats] [--eos-per-line]\n"
           "                  [--tgt-len L] [--mem-len M] [--clamp-len C] [--same-length 0|1] [--zero-memory 0|1]\n"
           "                  [--progress] [--no-verify] [--binary-ok]\n\n"
           "Prints the surprisal -log2 p(token | everything before it) of every token of FILE, scored as\n"
           "txlm eval scores it (segments of L tokens, memory of M), one row a token:\n"
           "  sentence_id  token_id  token  surprisal        (TSV with a header; ids count from 1)\n"
           "sentence_id is the line of FILE, token the vocabulary symbol. --words sums the tokens'\n"
           "surprisals onto the words of the original text (its runs of non-whitespace, traced back\n"
           "through the tokenizer's normalisation):\n"
           "  sentence_id  word_id  word  surprisal  tokens\n"
           "--format jsonl prints one JSON object a row, with the byte offsets [begin, end) of the\n"
           "token or word in FILE. --nats: natural log instead of bits. The first token of the text has\n"
           "no context: its surprisal is NA (null). --eos-per-line follows the corpus convention of\n"
           "WikiText-103: the text starts after an <eos> (so its first token is scored too) and every\n"
           "line, the last included, ends with one. docs/research.md has the alignment rules.\n"
           "A text over 5%% <unk> is warned about. A FILE that is plainly not text (a NUL byte, or mostly\n"
           "not UTF-8, in its first 4 KiB: a model given as the text) is refused at once; --binary-ok reads it.\n");
}

typedef struct score_opts {
    int words, jsonl, nats, eos_per_line;
    cli_text_run run;
} score_opts;

/* One line of the text, held until every token of it is scored. */
typedef struct score_line {
    uint64_t sentence; /* the line's number, from 1 */
    size_t offset;     /* where it starts in the text */
    char *text;
    size_t len;
    txlm_token_spans t;
    size_t n;          /* tokens: t.n, and one more for an <eos> added after a last line */
    double *lp;        /* [n] natural log-probabilities; NAN for the text's first token */
    size_t scored;
} score_line;

typedef struct score_state {
    score_opts *o;
    cli_scorer sc;
    score_line *lines; /* lines[head..n) wait for their scores */
    size_t head, n, cap;
    uint64_t sentences, scored;
    uint64_t tokens, unk; /* the text's tokens, and how many are <unk> */
    size_t offset;
    cli_progress *pb;
} score_state;

static int own_option(void *user, int argc, char **argv, int *i)
{
    score_opts *o = user;
    const char *a = argv[*i], *v;
    if (!strcmp(a, "--words")) return o->words = 1, 0;
    if (!strcmp(a, "--nats")) return o->nats = 1, 0;
    if (!strcmp(a, "--eos-per-line")) return o->eos_per_line = 1, 0;
    if (strcmp(a, "--format")) return -1;
    if (!(v = cli_value(argc, argv, i))) return 1;
    if (strcmp(v, "tsv") && strcmp(v, "jsonl")) return cli_error("--format must be tsv or jsonl, not \"%s\"", v);
    o->jsonl = !strcmp(v, "jsonl");
    return 0;
}

/* ---- printing ------------------------------------------------------------ */

static void print_value(const score_opts *o, double lp)
{
    double v = -lp / (o->nats ? 1.0 : log(2.0));
    if (o->jsonl) cli_json_number(stdout, v, 6);
    else if (isfinite(v)) printf("%.6f", v);
    else fputs("NA", stdout);
}

static void print_header(const score_opts *o)
{
    if (o->jsonl) return;
    if (o->words) printf("sentence_id\tword_id\tword\tsurprisal\ttokens\n");
    else printf("sentence_id\ttoken_id\ttoken\tsurprisal\n");
}

static void print_tokens(const score_state *e, const score_line *l)
{
    const score_opts *o = e->o;
    for (size_t k = 0; k < l->n; k++) {
        int32_t id = k < l->t.n ? l->t.ids[k] : e->sc.p.eos_id;
        size_t sl = 0, b = k < l->t.n ? l->t.spans[k].begin : l->len, end = k < l->t.n ? l->t.spans[k].end : b;
        const char *sym = txlm_token_symbol(e->sc.m, id, &sl);
        if (!o->jsonl) {
            printf("%llu\t%zu\t", (unsigned long long)l->sentence, k + 1);
            cli_tsv_field(stdout, sym, sl);
            putchar('\t');
            print_value(o, l->lp[k]);
            putchar('\n');
            continue;
        }
        printf("{\"sentence_id\": %llu, \"token_id\": %zu, \"token\": ", (unsigned long long)l->sentence, k + 1);
        cli_json_string(stdout, sym, sl);
        printf(", \"text\": ");
        cli_json_string(stdout, l->text + b, end - b);
        printf(", \"begin\": %zu, \"end\": %zu, \"surprisal\": ", l->offset + b, l->offset + end);
        print_value(o, l->lp[k]);
        printf("}\n");
    }
}

/* Each word's surprisal is the sum of its tokens' (NAN when one has none). */
static int print_words(const score_state *e, const score_line *l)
{
    const score_opts *o = e->o;
    size_t nw = l->t.n_words;
    double *sum = calloc(nw + 1, sizeof *sum);
    size_t *count = calloc(nw + 1, sizeof *count);
    if (!sum || !count) return free(sum), free(count), cli_error("out of memory");
    for (size_t k = 0; k < l->t.n; k++)
        if (l->t.word[k] != TXLM_NO_WORD) sum[l->t.word[k]] += l->lp[k], count[l->t.word[k]]++;
    for (size_t w = 0; w < nw; w++) {
        txlm_span sp = l->t.words[w];
        if (!o->jsonl) {
            printf("%llu\t%zu\t", (unsigned long long)l->sentence, w + 1);
            cli_tsv_field(stdout, l->text + sp.begin, sp.end - sp.begin);
            putchar('\t');
            print_value(o, sum[w]);
            printf("\t%zu\n", count[w]);
            continue;
        }
        printf("{\"sentence_id\": %llu, \"word_id\": %zu, \"word\": ", (unsigned long long)l->sentence, w + 1);
        cli_json_string(stdout, l->text + sp.begin, sp.end - sp.begin);
        printf(", \"begin\": %zu, \"end\": %zu, \"tokens\": %zu, \"surprisal\": ", l->offset + sp.begin,
               l->offset + sp.end, count[w]);
        print_value(o, sum[w]);
        printf("}\n");
    }
    free(sum);
    free(count);
    return 0;
}

static void line_free(score_line *l)
{
    free(l->text);
    free(l->lp);
    txlm_token_spans_free(&l->t);
}

/* Prints and frees the lines at the head whose tokens are all scored. */
static int flush_lines(score_state *e)
{
    int rc = 0;
    while (!rc && e->head < e->n && e->lines[e->head].scored == e->lines[e->head].n) {
        score_line *l = &e->lines[e->head++];
        if (e->o->words) rc = print_words(e, l);
        else print_tokens(e, l);
        line_free(l);
    }
    if (e->head > 64 && e->head * 2 > e->n) { /* a long text keeps a few lines pending at all times */
        memmove(e->lines, e->lines + e->head, (e->n - e->head) * sizeof *e->lines);
        e->n -= e->head, e->head = 0;
    }
    return rc;
}

/* The next token without a score gets lp. */
static void assign(score_state *e, double lp)
{
    for (size_t i = e->head; i < e->n; i++)
        if (e->lines[i].scored < e->lines[i].n) {
            e->lines[i].lp[e->lines[i].scored++] = lp;
            return;
        }
}

static int run_segments(score_state *e, int final)
{
    long len;
    while ((len = cli_scorer_next(&e->sc, final)) > 0) {
        for (long i = 0; i < len; i++) assign(e, e->sc.lp[i]);
        e->scored += (uint64_t)len;
        cli_segments_done(&e->sc.q, (uint32_t)len);
    }
    return len < 0 || flush_lines(e);
}

/* Tokenizes one line and queues it; its tokens join the stream. */
static int add_line(score_state *e, const char *text, size_t len)
{
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 16;
        score_line *b = realloc(e->lines, cap * sizeof *b);
        if (!b) return cli_error("out of memory");
        e->lines = b, e->cap = cap;
    }
    score_line *l = &e->lines[e->n];
    memset(l, 0, sizeof *l);
    txlm_status st = txlm_tokenize_spans(e->sc.m, text, len, &l->t);
    if (st) return cli_lib_error(st, "tokenizing");
    for (size_t k = 0; k < l->t.n; k++) e->unk += l->t.ids[k] == e->sc.p.unk_id;
    e->tokens += l->t.n;
    int add_eos = e->o->eos_per_line && (len == 0 || text[len - 1] != '\n');
    l->n = l->t.n + (size_t)add_eos;
    l->sentence = ++e->sentences;
    l->offset = e->offset;
    e->offset += len;
    l->lp = malloc((l->n ? l->n : 1) * sizeof *l->lp);
    l->text = malloc(len + 1);
    if (!l->lp || !l->text) return line_free(l), cli_error("out of memory");
    memcpy(l->text, text, len);
    l->text[len] = 0;
    l->len = len;
    e->n++;
    int first = e->sc.q.n == 0 && l->n > 0; /* only before the first token: later the queue keeps one input */
    if (cli_segments_push(&e->sc.q, l->t.ids, l->t.n) || (add_eos && cli_segments_push(&e->sc.q, &e->sc.p.eos_id, 1))) return 1;
    if (first) assign(e, NAN); /* the text's first token has no context */
    return 0;
}

static int score_line_fn(void *user, const char *line, size_t len)
{
    score_state *e = user;
    int rc = add_line(e, line, len) || run_segments(e, 0);
    cli_progress_show(e->pb, cli_text_run_fraction(&e->o->run), e->scored, "", 0);
    return rc;
}

static int score_text(score_state *e)
{
    if (e->o->eos_per_line && cli_segments_push(&e->sc.q, &e->sc.p.eos_id, 1)) return 1;
    if (cli_each_line(&e->o->run, score_line_fn, e)) return 1;
    return cli_interrupted ? 0 : run_segments(e, 1);
}

int cmd_score(int argc, char **argv)
{
    score_opts o = {0};
    int rc = cli_text_run_parse(&o.run, argc, argv, "score", 1, usage, own_option, &o);
    if (rc) return rc < 0 ? 0 : rc;
    score_state e = {.o = &o};
    cli_progress pb;
    rc = cli_text_run_outputs(&o.run) || cli_scorer_open(&e.sc, &o.run);
    if (rc) goto done;
    if (o.eos_per_line && e.sc.p.eos_id < 0) {
        rc = cli_error("score: --eos-per-line, but the model's vocabulary has no <eos>");
        goto done;
    }
    print_header(&o);
    cli_progress_start(&pb, o.run.progress);
    e.pb = &pb;
    rc = score_text(&e);
    cli_progress_show(&pb, cli_text_run_fraction(&o.run), e.scored, "", 1);
    cli_progress_end(&pb);
    if (!rc) cli_warn_unk(e.unk, e.tokens, "the text's tokens", "their surprisals say little about its words");
    if (!rc) rc = cli_validation_status(e.sc.ctx);
done:
    rc = cli_text_run_finish(&o.run, rc);
    for (size_t i = e.head; i < e.n; i++) line_free(&e.lines[i]);
    free(e.lines);
    cli_scorer_free(&e.sc);
    return rc;
}
