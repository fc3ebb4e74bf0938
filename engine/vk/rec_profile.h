/* Device time per kernel, from timestamps written after every command of
 * a recording: TXLM_PROFILE=1 turns it on for every recorder a process
 * makes, and each recorder prints its table to stderr when destroyed.
 * For finding where a segment's time goes in the real forward pass (the
 * benchmarks time ops one at a time); off, it costs nothing. */
#ifndef TXLM_REC_PROFILE_H
#define TXLM_REC_PROFILE_H

#include "kernels.h"
#include "vk_context.h"

typedef struct txlm_rec_profile txlm_rec_profile;

/* NULL when TXLM_PROFILE is unset or the queue has no timestamps. */
txlm_rec_profile *txlm_rec_profile_create(txlm_vk *vk);
/* At the start of a recording, after each command, and once the fence says the device is done. */
void txlm_rec_profile_begin(txlm_rec_profile *p, VkCommandBuffer cmd);
void txlm_rec_profile_mark(txlm_rec_profile *p, VkCommandBuffer cmd, uint32_t kernel_or_count);
void txlm_rec_profile_collect(txlm_rec_profile *p);
/* Prints the table (kernels by time; TXLM_K_COUNT is copies and fills) and frees. */
void txlm_rec_profile_destroy(txlm_rec_profile *p, const txlm_kernels *ks);

#endif
