/* What the commands that run several streams in one pass share (txlm
 * logprobs with several --tokens streams, eval --batch, generate
 * --streams, bench --batch): lists of streams on the command line, and a
 * batch with its sessions, refused before anything is allocated when the
 * plan does not fit the device. Only the public API (txlm.h). */
#ifndef TXLM_CLI_BATCH_H
#define TXLM_CLI_BATCH_H

#include <stdint.h>

#include "txlm.h"

/* The most streams a command takes: the host arrays stay small and an
 * absurd count fails at once, before the plan is even asked. */
#define CLI_MAX_STREAMS 4096u

/* ";"-separated groups of comma-separated non-negative integers ("3,4;5"):
 * n groups, group k lists[k][0..lens[k]) (all malloc'd: cli_groups_free).
 * An empty group is refused, named by its number (from 1). 0, or 1 after
 * printing why, naming `what`. */
int cli_parse_groups(const char *s, const char *what, int32_t ***lists, uint32_t **lens, uint32_t *n);
void cli_groups_free(int32_t **lists, uint32_t *lens, uint32_t n);

typedef struct cli_batch {
    txlm_batch *b;
    txlm_session **s; /* n sessions, one per stream */
    uint32_t n;
    txlm_batch_sizes z; /* the plan it was made from */
} cli_batch;

/* txlm_batch_plan for n streams of so's sessions: 0 when its total fits
 * what is available, else 1 after printing what it needs and what is free. */
int cli_batch_plan(txlm_model *m, uint32_t n, const txlm_session_options *so, txlm_batch_sizes *z);
/* The plan checked, then a batch of n streams and a session for each (so:
 * their options). 0, or 1 after printing why (cb freed). */
int cli_batch_open(cli_batch *cb, txlm_model *m, uint32_t n, const txlm_session_options *so);
void cli_batch_free(cli_batch *cb);

#endif
