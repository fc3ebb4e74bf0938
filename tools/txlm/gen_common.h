/* What txlm generate and txlm chat share: the generation options
 * (sampling, stop strings, repetition penalty, length, seed) and a reply
 * streamed token by token through the detokenizer and the stop strings.
 * Only the public API (txlm.h). */
#ifndef TXLM_GEN_COMMON_H
#define TXLM_GEN_COMMON_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "txlm.h"

#define GEN_MAX_STOPS 32

typedef struct gen_opts {
    txlm_sampling samp;
    float repeat_penalty;              /* 1: off */
    uint32_t repeat_last_n;            /* tokens the penalty looks back over (llama.cpp's default, 64) */
    char *stops[GEN_MAX_STOPS];        /* --stop, repeatable (owned: gen_free) */
    size_t n_stops;
    int64_t n_gen;                     /* tokens to generate; -1: no limit */
    uint64_t seed;
    int seed_given;
} gen_opts;

/* Ctrl-C: gen_on_sigint (the SIGINT handler) sets gen_interrupted;
 * gen_stop_requested, a progress callback, then cancels loading and long
 * feeds, and a reply stops after its current token. */
extern volatile sig_atomic_t gen_interrupted;
void gen_on_sigint(int sig);
int gen_stop_requested(void *user, double fraction);

/* The generation flags that take a value, for cli_option_value. */
extern const char *const gen_flags[];
/* Help lines for them. */
extern const char gen_help[];

/* The options against the model, once it is open and before any work:
 * the library's rule for --top-k (at most the vocabulary's size, as
 * txlm serve's top_k), so that nothing is fed before it refuses. 0, or 1
 * after printing why. */
int gen_check_model(const gen_opts *g, const txlm_model *m);
/* Defaults: temperature 1, no top-k/top-p, no penalty (window 64), no stop strings, n_gen tokens. */
void gen_defaults(gen_opts *g, int64_t n_gen);
/* Frees the stop strings. */
void gen_free(gen_opts *g);
/* Adds a stop string (escapes \n, \t, \\ read): 0, or 1 after printing why not. */
int gen_add_stop(gen_opts *g, const char *s);
/* 1 when flag a (value v) is a generation option and parses, 0 when it is
 * not one, -1 after printing why its value is refused. */
int gen_option(const char *a, const char *v, gen_opts *g);
/* --seed's seed, else one drawn from the clock and the process, told on
 * stderr so the text can be made again. */
uint64_t gen_seed(const gen_opts *g);

/* A reply in the making. */
typedef struct gen_stream {
    txlm_detokenizer *d;
    txlm_stopper *stop;
    size_t skip;                       /* bytes of the prompt's own text the detokenizer gives back, not printed again */
    int32_t *window;                   /* the last tokens, for the repetition penalty */
    uint32_t n_window, cap_window;
    FILE *out;                         /* where the text goes (gen_stream_open: stdout) */
    size_t passed;                     /* bytes of the reply the detokenizer gave so far (before the stop strings) */
    const char *piece;                 /* the last token's text from the detokenizer (the prompt's left out), */
    size_t piece_len;                  /* valid until the next call; it begins at byte passed - piece_len */
} gen_stream;

/* 0, or 1 after printing why not. */
int gen_stream_open(gen_stream *st, txlm_model *m, const gen_opts *g);
void gen_stream_close(gen_stream *st);
/* Tokens already in the session (a prompt): into the penalty window. */
void gen_stream_remember(gen_stream *st, const int32_t *ids, size_t n);
/* The prompt's last line (ids[from..n)) through the detokenizer, so the
 * reply's spacing and punctuation join up; its text is already on the
 * screen and is not printed again. 0, or 1 after printing why not. */
int gen_stream_prompt(gen_stream *st, txlm_model *m, const int32_t *ids, size_t from, size_t n);
/* A token drawn and fed: into the penalty window and, through the
 * detokenizer and the stop strings, out; *stopped once a stop string
 * completed. 0, or 1 after printing why. */
int gen_stream_take(gen_stream *st, int32_t tok, int *stopped);
/* The end of a reply: what the detokenizer and the stop strings held back
 * goes out, and a new reply may start. 0, or 1 after printing why. */
int gen_stream_finish(gen_stream *st);
/* Draws, feeds and prints up to g->n_gen tokens (-1: no limit) until a
 * stop string completes or *interrupted is set; then prints what the
 * detokenizer and the stop strings held back and starts a new stream.
 * *made counts the tokens drawn (and fed). 0, or 1 after printing why. */
int gen_stream_run(gen_stream *st, txlm_session *s, const gen_opts *g, volatile sig_atomic_t *interrupted, size_t *made);

#endif
