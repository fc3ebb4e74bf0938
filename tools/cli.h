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
int cmd_bench(int argc, char **argv);

/* Prints "txlm: <message>" to stderr and returns 1 (the exit status). */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, with the library's last error appended. */
int cli_lib_error(txlm_status st, const char *what);
/* Parses "a,b,c" of non-negative integers; *out is malloc'd. */
int cli_parse_list(const char *s, int32_t **out, uint32_t *n, const char *what);
/* Writes a whole file atomically (temporary + rename). */
int cli_write_file(const char *path, const void *data, size_t size);
/* Returns the value after a flag or NULL (and prints an error). */
const char *cli_value(int argc, char **argv, int *i);
/* Parses an unsigned or signed integer in range, printing an error on failure. */
int cli_parse_u32(const char *s, const char *flag, uint32_t *out);
int cli_parse_i32(const char *s, const char *flag, int32_t *out);
/* Context options from the environment (TXLM_DEVICE is read by the library). */
txlm_status cli_open_context(txlm_context **ctx);

#endif
