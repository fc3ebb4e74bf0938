/* The entry point every fuzz target defines: libFuzzer calls it with each
 * input; replay.c calls it with the saved corpus and regression inputs. */
#ifndef TXLM_FUZZ_H
#define TXLM_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "pack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts with a message when an accepted input breaks an invariant, so
 * both libFuzzer and the replay test report it as a failure. */
void fuzz_require(int cond, const char *what);

/* Checks a vocabulary reader's outcome: a refusal carries a status and a
 * message; an accepted vocabulary passes the .txlm writer's check (and is freed). */
void fuzz_vocab_result(int rc, txlm_vocab_buf *b, const txlm_err *err);

/* The input as a file for readers that take a path: an in-memory file
 * (memfd) reached through /proc/self/fd, rewritten on every call. */
const char *fuzz_as_file(const uint8_t *data, size_t size);

#endif
