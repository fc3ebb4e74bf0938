/* Kept recordings (docs/architecture.md, "Kept recordings"): a pass
 * whose commands do not depend on its tokens nor on where the streams'
 * rings have turned to is recorded once into a kept slot of the
 * recorder and submitted again for every later pass of the same key.
 * What changes from pass to pass goes through the step buffer
 * (shaders/contract.h): a stream's entry (its ring's first row, its
 * lengths) and a lone stream's k|v row, written by the host before each
 * submission, copied to device memory by each recording first.
 *
 * One entry, txlm_replay_begin, owns the key, the step buffer's write and
 * the begin or replay; the recorder (vk/recorder.c) keeps the command
 * buffers. A pass is kept when it asks for no output, captures nothing,
 * every stream's memory is full and its position keys exist, and its
 * keys and values reach the rings without copy commands (whose offsets
 * would be recorded); it then embeds through every cluster, so that its
 * commands do not depend on its tokens. Its key: its route for keys and
 * values, and per stream its serial, segment length, memory rows and
 * position-key rows. */
#ifndef TXLM_REPLAY_H
#define TXLM_REPLAY_H

#include "recorder.h"

typedef struct txlm_replay {
    uint64_t *keys[TXLM_REC_KEPT]; /* the key the recorder's slot i + 1 was made for (malloc'd), or NULL */
    uint32_t next;                 /* the slot a new key takes, in turn */
} txlm_replay;

struct txlm_pass;
/* Writes the pass's step words, then submits its kept recording again
 * (*replayed 1: the pass has run) or begins recording it (*replayed 0:
 * into a kept slot when it is kept, else the one-time command buffer),
 * the copy of the step words to device memory its first command. */
int txlm_replay_begin(struct txlm_pass *p, int *replayed, txlm_err *err);
/* Drops every kept recording (their buffers are about to change). */
void txlm_replay_drop(txlm_replay *r, txlm_rec *rec);
void txlm_replay_free(txlm_replay *r);

#endif
