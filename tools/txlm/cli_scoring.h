/* What txlm eval, score and compare share: the options that segment a
 * text, opening the model and the text, the queue of tokens scored in
 * segments, Ctrl-C, the progress bar, running statistics and JSON values.
 * Only the public API (txlm.h) is used. */
#ifndef TXLM_CLI_SCORING_H
#define TXLM_CLI_SCORING_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli_files.h"
#include "txlm.h"

/* ---- options and opening ---------------------------------------------- */

typedef struct cli_text_run {
    const char *model[2];        /* -m MODEL, in order given */
    int n_models;
    const char *file;            /* the text ("-": standard input) */
    uint32_t tgt_len;            /* 0: the model's tgt_len (128 if it has none) */
    int progress;                /* 1: the progress bar even when stderr is not a terminal */
    int binary_ok;               /* --binary-ok: a text that looks binary is read anyway */
    txlm_session_options so;     /* --mem-len, --clamp-len, --same-length, --zero-memory */
    txlm_model_options mo;       /* --no-verify */
    FILE *in;
    char *head;                  /* the text's first block to the end of its line, read ahead for the binary check */
    FILE *head_f;                /* lines are read from it first, then from in */
    double in_bytes;             /* the text's size when known (else 0), for the progress bar */
    double done_bytes;           /* read so far */
    cli_files io;                /* the models and the text as inputs; the command adds its outputs */
} cli_text_run;

/* The arguments every scoring command takes: -m MODEL (up to two), FILE,
 * -f FILE, --tgt-len, the session options, --no-verify, --progress,
 * --binary-ok. */
/* A command's own argument at argv[*i] (cli_value takes a value): 0 when
 * taken, 1 after printing an error, -1 when it is not one. */
typedef int (*cli_arg_fn)(void *user, int argc, char **argv, int *i);
/* All of argv: --help (prints usage, returns -1), the options above and
 * the command's own (own); then exactly `models` -m and a FILE, r->io
 * given them as inputs, and cli_text_run_start. 0, or 1 after printing
 * what is wrong. r is initialised first. */
int cli_text_run_parse(cli_text_run *r, int argc, char **argv, const char *cmd, int models, void (*usage)(void),
                       cli_arg_fn own, void *user);
/* --json (1 in *json) and --per-token FILE (*per_token), which eval and
 * compare both take, at argv[*i]: answers as a cli_arg_fn does. */
int cli_report_option(int argc, char **argv, int *i, int *json, const char **per_token);
/* After parsing: opens the text and reads its first block (before the
 * device: a bad file, or one that is plainly not text, fails fast:
 * cli_refuse_binary) and catches Ctrl-C, which also cancels loading a
 * model. 0 or 1 after printing why. */
int cli_text_run_start(cli_text_run *r);
/* The outputs added to r->io checked and their temporaries created
 * (cli_files_open): 0, or 1 after printing why. */
int cli_text_run_outputs(cli_text_run *r);
/* The end: stdout flushed, Ctrl-C reported (exit status 130), SIGINT
 * restored, the text closed, outputs not committed dropped. Returns the
 * exit status given rc. */
int cli_text_run_finish(cli_text_run *r, int rc);
/* The segment length for model params p, and so.max_segment set to it. */
uint32_t cli_text_run_segment(cli_text_run *r, const txlm_model_params *p);

/* One line of the text (with its '\n', if any) into *line; its length, or
 * -1 at the end, on a read error (1 in *error after printing why) or on Ctrl-C. */
long cli_read_line(cli_text_run *r, char **line, size_t *cap, int *error);
/* fn on every line of the text in turn: 0 at the end or on Ctrl-C
 * (cli_interrupted set), 1 on a read error or when fn returned non-zero. */
typedef int (*cli_line_fn)(void *user, const char *line, size_t len);
int cli_each_line(cli_text_run *r, cli_line_fn fn, void *user);
/* The part of the text read, or -1 when its size is unknown (a pipe). */
double cli_text_run_fraction(const cli_text_run *r);

/* ---- tokens scored in segments ----------------------------------------- */

/* Pending tokens: buf[0] is the input of the next segment, the tokens after
 * it its targets, as txlm eval's protocol feeds them. */
typedef struct cli_segments {
    uint32_t seg;
    int32_t *buf;
    size_t n, cap;
} cli_segments;

int cli_segments_push(cli_segments *q, const int32_t *ids, size_t n);
/* The tokens of len bytes of text (m's tokenizer) pushed; 1 after printing why not. */
int cli_segments_push_text(cli_segments *q, txlm_model *m, const char *text, size_t len);
/* The length of the next segment to run (inputs buf[0..len), targets
 * buf[1..len]), or 0 while fewer than seg + 1 tokens wait (at the end,
 * final: whatever is left). */
uint32_t cli_segments_next(const cli_segments *q, int final);
/* Drops the len inputs run; the last target becomes the next input. */
void cli_segments_done(cli_segments *q, uint32_t len);
void cli_segments_free(cli_segments *q);

/* ---- one model scoring a text -------------------------------------------- */

typedef struct cli_scorer {
    txlm_context *ctx;
    txlm_model *m;
    txlm_model_params p;
    txlm_session *s;
    cli_segments q;   /* q.seg: the segment length */
    float *lp;        /* [q.seg] one segment's target log-probabilities */
} cli_scorer;

/* The device, r's first model and a session segmenting as r says. 0, or 1
 * after printing why (nothing for a load cancelled by Ctrl-C). */
int cli_scorer_open(cli_scorer *sc, cli_text_run *r);
/* Scores the next full segment (final: whatever is left): its length, 0
 * when there is none (or on Ctrl-C), -1 after printing an error. The
 * targets are q.buf[1..len], their log-probabilities lp[0..len); call
 * cli_segments_done(&sc->q, len) when they are used. */
long cli_scorer_next(cli_scorer *sc, int final);
void cli_scorer_free(cli_scorer *sc);

/* ---- Ctrl-C ------------------------------------------------------------- */

extern volatile sig_atomic_t cli_interrupted;
/* SIGINT sets cli_interrupted (and interrupts a blocked read) until restored. */
void cli_sigint_catch(void);
void cli_sigint_restore(void);
/* A txlm_progress_fn that cancels once Ctrl-C was pressed (model loading). */
int cli_cancel_on_sigint(void *user, double fraction);

/* ---- progress ----------------------------------------------------------- */

typedef struct cli_progress {
    int on;
    double t0, last;
} cli_progress;

/* On when stderr is a terminal or `force`. */
void cli_progress_start(cli_progress *pb, int force);
/* At most 4 times a second (always when `final`): fraction done (< 0:
 * unknown, as for a pipe), tokens, rate, time left and `extra` (a running
 * figure). A terminal gets one line redrawn; anything else one line per
 * update. */
void cli_progress_show(cli_progress *pb, double fraction, uint64_t tokens, const char *extra, int final);
/* Ends the terminal's line. */
void cli_progress_end(cli_progress *pb);

/* ---- statistics --------------------------------------------------------- */

/* Mean and standard error of a stream of values (Welford's updates). */
typedef struct cli_stats {
    uint64_t n;
    double mean, m2;
} cli_stats;

void cli_stats_add(cli_stats *s, double x);
/* The standard error of the mean, sqrt(var / n) with the sample variance
 * (n - 1), as llama.cpp's perplexity reports it; 0 for fewer than 2 values. */
double cli_stats_se(const cli_stats *s);

/* ---- output ------------------------------------------------------------- */

/* A JSON string literal of s[0..len) (control bytes, quotes, backslashes escaped). */
void cli_json_string(FILE *f, const char *s, size_t len);
/* A JSON number with the given printf precision, or null when not finite. */
void cli_json_number(FILE *f, double x, int digits);
/* The same with the given number of significant digits (small values such
 * as a KL divergence keep their precision). */
void cli_json_sig(FILE *f, double x, int digits);
/* A TSV field: tab, newline and carriage return written as \t \n \r
 * (only a character model's token can hold them). */
void cli_tsv_field(FILE *f, const char *s, size_t len);

#endif
