/* Helpers of the tests of txlm score, eval and compare: running txlm,
 * writing texts, reading what it wrote. */
#ifndef TXLM_TEST_SCORING_UTIL_H
#define TXLM_TEST_SCORING_UTIL_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "../text/text_util.h" /* TCHECK, run_tool, pack_case, golden_stream, make_tmp_dir */

extern const char *sc_txlm, *sc_pack, *sc_golden, *sc_dir;

/* A test's start: argv is TXLM TXLM_PACK GOLDEN_DIR; sets the globals and
 * makes sc_dir. 1 (after printing why) when it cannot run. */
int sc_start(int argc, char **argv);
/* Removes sc_dir, prints the failures; the exit status. */
int sc_finish(void);
/* sc_dir/name (one of 8 rotating buffers). */
const char *sc_path(const char *name);
/* Writes len bytes to path; 0 on success. */
int sc_write(const char *path, const char *data, size_t len);
/* A golden case's token stream as text: symbols joined by spaces, <eos> as line ends. */
int sc_write_stream(const char *path, const int32_t *t, size_t n);
/* txlm with args (NULL-terminated, after the program); the exit status,
 * *out and *err (may be NULL) what it printed (malloc'd). */
int sc_txlm_run(const char *const *args, char **out, char **err);
/* The JSON objects of JSON lines (a cJSON array), NULL if a line is not one. */
cJSON *sc_jsonl(const char *text);
/* A file of little-endian float32 (malloc'd), *n values; NULL when unreadable. */
float *sc_read_f32(const char *path, size_t *n);
/* Packs golden case `name` with another vocabulary file and tokenizer; 0 on success. */
int sc_pack_vocab(const char *name, const char *vocab, const char *tokenizer, const char *out, const char *dtype);
/* Ctrl-C: txlm with args (after the program) reads an endless text of
 * lines of golden symbols from a pipe on its standard input, writing to
 * out_path and err_path; once err_path holds `ready`, SIGINT. Returns its
 * exit status (128 + signal when killed, -1 when it did not run or
 * `ready` never came). */
int sc_interrupt(const char *const *args, const char *out_path, const char *err_path, const char *ready);
/* Whether the file holds needle (in its first 64 KiB). */
int sc_file_has(const char *path, const char *needle);
/* A number field of a JSON object, NAN when missing or not a number. */
double sc_num(const cJSON *o, const char *key);

#endif
