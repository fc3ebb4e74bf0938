/* Shared pieces of the `txlm` command-line tool. */
#ifndef TXLM_CLI_H
#define TXLM_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "txlm.h"

int cmd_devices(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_logprobs(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_chat(int argc, char **argv);
int cmd_attention(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_score(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/* Monotonic wall-clock seconds, for rates and timings. */
double cli_now(void);

/* Prints "txlm: <message>" to stderr and returns 1 (the exit status). */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, with the library's last error appended. */
int cli_lib_error(txlm_status st, const char *what);
/* Parses "a,b,c" of non-negative integers; *out is malloc'd. */
int cli_parse_list(const char *s, int32_t **out, uint32_t *n, const char *what);
/* *slot = v for a flag given at most once (as -m MODEL): 1 after printing
 * why when it was given before. */
int cli_set_once(const char **slot, const char *v, const char *flag);
/* Above this share of <unk> tokens a figure (or a continuation) says
 * little: the text is mostly words the model cannot represent. */
#define CLI_UNK_WARN_RATE 0.05
/* A warning on stderr when unk of the n tokens of `what` are above that
 * share; `why` says what follows from it. */
void cli_warn_unk(uint64_t unk, uint64_t n, const char *what, const char *why);
/* Returns the value after a flag or NULL (and prints an error). */
const char *cli_value(int argc, char **argv, int *i);
/* The value after argv[*i] when the command knows it as a flag taking a
 * value (flags: NULL-terminated; the session options are added), else
 * NULL after printing "CMD: unknown option": an unknown flag in last
 * position is unknown, not one that "needs a value"; a bare word (a
 * model named without -m) is told to be no option. */
const char *cli_option_value(int argc, char **argv, int *i, const char *cmd, const char *const *flags);
/* Parses an integer in [lo, hi], printing an error (with the range) on failure. */
int cli_parse_range(const char *s, const char *flag, int32_t lo, int32_t hi, int32_t *out);
/* The same for [0, INT32_MAX] and for any int32. */
int cli_parse_u32(const char *s, const char *flag, uint32_t *out);
int cli_parse_i32(const char *s, const char *flag, int32_t *out);
/* Context options from the environment (TXLM_DEVICE is read by the library). */
txlm_status cli_open_context(txlm_context **ctx);
/* 0 when path opens as a regular file, else 1 after printing why (prefixed
 * with what): a missing or special file fails before the device starts,
 * which takes seconds. */
int cli_check_input(const char *path, const char *what);
/* The device, then the model at path; prints why either failed (except a
 * load cancelled through mo's progress callback) and returns the status. */
txlm_status cli_open_model(const char *path, const txlm_model_options *mo, txlm_context **ctx, txlm_model **m);
/* 0, or 1 after printing how many Vulkan validation messages ctx counted. */
int cli_validation_status(const txlm_context *ctx);
/* An input file to read: "-" is stdin, anything else must be a regular
 * file (never a FIFO, which could block forever); NULL after printing why. */
FILE *cli_open_input(const char *path);
/* A session's state from a file, or from standard input for "-": 0, or 1
 * after printing why (what: the flag, for the message). */
int cli_restore_state(txlm_session *s, const char *path, const char *what);
/* Closes what cli_open_input opened (stdin stays open). */
void cli_close_input(FILE *f);
/* A whole file ("-": stdin), NUL-terminated (malloc'd), or NULL after printing why. */
char *cli_read_file(const char *path, size_t *len);
/* The session options of every command that runs a model (--mem-len,
 * --clamp-len, --same-length 0|1): 0 when `flag` is one and `v` parses,
 * 1 after printing an error, -1 when `flag` is none of them. */
int cli_session_option(const char *flag, const char *v, txlm_session_options *so);
/* ---- text inputs (cli_text_check.c) ---- */
/* What is judged of an input meant as text: its first block. */
#define CLI_TEXT_BLOCK 4096
/* Why text[0..n) (an input's first block; cut: more follows it, so a
 * character may be cut at its end) is plainly not text, written into why
 * (cap bytes) and returned, or NULL: a NUL byte, or more than half of its
 * bytes in no text (not UTF-8, or control bytes other than whitespace and
 * escape). */
const char *cli_binary_why(const char *text, size_t n, int cut, char *why, size_t cap);
/* 0 when binary_ok or the start of the input at path (text[0..n), n may
 * run past the block) may be text; else 1 after printing "PATH: not text
 * (why); --binary-ok reads it anyway". */
int cli_refuse_binary(const char *path, const char *text, size_t n, int binary_ok);
/* The same for a file that is read later (after the model loads): its
 * first block read now. "-" is left to its reader. */
int cli_check_text_file(const char *path, int binary_ok);
/* The ids of `len` bytes of text in a malloc'd array (free()), or 1 after
 * printing an error naming `what` (failure, or no tokens at all). */
int cli_tokenize(txlm_model *m, const char *text, size_t len, const char *what, int32_t **ids, uint32_t *n);

#endif
