/* Kept recordings (docs/architecture.md, "Kept recordings"): once the
 * memory is full, a segment that asks for no output records the same
 * commands as the last one of its length whose tokens fell in the same
 * embedding clusters, but for where the ring has turned to. Those two
 * values are not recorded: they go through the step buffer
 * (shaders/step.glsl), which the host writes before each submission and
 * each recording copies to device memory first. This module owns the
 * keys, which recorder slot each took, and the step buffer; the recorder
 * (vk/recorder.c) keeps the command buffers. */
#ifndef TXLM_REPLAY_H
#define TXLM_REPLAY_H

#include "recorder.h"

typedef struct txlm_seg_key {
    uint32_t qlen, mlen, parts; /* parts: bit c, a token in embedding cluster c */
} txlm_seg_key;

typedef struct txlm_replay {
    txlm_buf step_host;            /* [4] uint, host-written before each submission (a batch's: and the streams' entries) */
    txlm_buf step;                 /* the same in device memory, copied by each recording first */
    txlm_seg_key kept[TXLM_REC_KEPT]; /* what the recorder's slot i + 1 was made for */
    uint64_t *pass_kept[TXLM_REC_KEPT]; /* a batch's: the pass slot i + 1 was made for (txlm_replay_pass_slot) */
    uint32_t next;                 /* the slot a new key takes, in turn */
} txlm_replay;

typedef struct txlm_session txlm_session;

/* The segment's values its recording reads from the step buffer: where
 * the memory starts in the ring, and where this segment's keys and values
 * go. */
int txlm_replay_write_step(txlm_session *s, txlm_err *err);
/* Records the copy of the step values to device memory (a recording's first commands). */
void txlm_replay_record_step(txlm_session *s);
/* Which kept recording can run this segment: its slot, or the slot to
 * record it into (negated), or 0 where it cannot be kept. */
int txlm_replay_slot(txlm_session *s, const int32_t *tokens, uint32_t qlen, uint32_t want);
/* The same for a pass of several streams (a batch's, p->w its shared
 * rows) attending in shared dispatches, whose entries in the step buffer
 * give each ring's turn. Keyable: no output asked for, every stream's
 * memory full, no stream growing its position keys; such a pass embeds
 * through every cluster (txlm_pass.all_clusters), so that its commands do
 * not depend on its tokens. Its key: each session (its serial), segment
 * length, memory rows and position-key rows. */
struct txlm_pass;
int txlm_replay_pass_keyable(const struct txlm_pass *p, uint32_t want);
int txlm_replay_pass_slot(const struct txlm_pass *p);
/* Frees the keys of a batch's passes. */
void txlm_replay_free(txlm_replay *r);

#endif
