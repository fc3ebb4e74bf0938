/* Records dispatches into one command buffer and submits it: the unit of
 * GPU work for a segment. Where the context bounds the work in one
 * submission (txlm_vk.submit_dispatches), a recording is cut into pieces
 * of at most that many dispatches, each its own command buffer, and
 * submitted piece by piece, each waited for before the next: the same
 * commands in the same order, so the same numbers, with the queue free
 * between pieces for other work (a renderer's frames, the display). Every
 * dispatch binds its own pipeline, set and push constants and is followed
 * by a barrier, whose second scope reaches into the next piece (later in
 * submission order on the queue), so nothing carries state across a cut. Descriptor sets come from the command buffer's
 * pools, as many as its dispatches need, reset when it is recorded again. Besides the one-time command buffer, a recorder keeps
 * TXLM_REC_KEPT recordings that can be submitted again as they are
 * (txlm_rec_begin_kept, txlm_rec_replay): a generated token's step is the
 * same commands every time once the memory is full. */
#ifndef TXLM_RECORDER_H
#define TXLM_RECORDER_H

#include "kernels.h"
#include "rec_profile.h"
#include "vk_buffer.h"

/* A byte range of a buffer bound to one shader binding. */
typedef struct txlm_view {
    VkBuffer buf;
    VkDeviceSize off;
    VkDeviceSize size;
} txlm_view;

static inline txlm_view txlm_view_of(const txlm_buf *b) { return (txlm_view){b->buf, 0, b->size}; }

/* A texel view made for this recording (kernels with texel bindings). */
typedef struct txlm_texel_view {
    txlm_view range;
    VkBufferView view;
} txlm_texel_view;

/* A recording, its command buffers and what its commands refer to,
 * alive until it is recorded again. */
typedef struct txlm_rec_cmd {
    VkCommandBuffer *pieces;      /* stb_ds array: the recording's command buffers, submitted in turn (made as needed, kept) */
    uint32_t *piece_dispatches;   /* stb_ds array: the dispatches each holds */
    uint32_t n_pieces;            /* pieces the recording uses */
    VkCommandBuffer cmd;          /* the piece being recorded: pieces[n_pieces - 1] */
    VkDescriptorPool *pools;      /* stb_ds array, grown as the recording needs sets */
    uint32_t pool, sets_in_pool;  /* the pool sets come from now, and how many it has given */
    txlm_texel_view *texel_views; /* stb_ds array */
    int ready;                    /* ended without error: a kept one can be replayed */
} txlm_rec_cmd;

#define TXLM_REC_KEPT 4

typedef struct txlm_rec {
    txlm_vk *vk;
    txlm_kernels *ks;
    VkCommandPool pool;
    VkFence fence;
    txlm_view step;                       /* txlm_rec_init's step */
    txlm_rec_cmd cmds[1 + TXLM_REC_KEPT]; /* [0] one-time, then the kept ones */
    txlm_rec_cmd *cur;                    /* the one being recorded or last submitted */
    int recording;
    int failed;        /* a recording error happened; submit reports it */
    txlm_err first_err;
    txlm_rec_profile *prof; /* TXLM_PROFILE: device time per kernel (rec_profile.h); else NULL */
} txlm_rec;

/* step: the buffer bound at TXLM_STEP_BINDING in every dispatch of a
 * kernel that has it (shaders/step.glsl; 16 bytes or more; read only
 * under DYN_Y or kv_dyn); NULL buf for a recorder of copies only. */
int txlm_rec_init(txlm_rec *r, txlm_vk *vk, txlm_kernels *ks, txlm_view step, txlm_err *err);
void txlm_rec_destroy(txlm_rec *r);
int txlm_rec_begin(txlm_rec *r, txlm_err *err);
/* Whether kept recordings are available (not while TXLM_PROFILE times
 * each recording's commands, nor while the context's debug option
 * no_replay asks for every segment recorded afresh). */
int txlm_rec_can_keep(const txlm_rec *r);
/* Begins recording kept slot 1..TXLM_REC_KEPT, dropping what it held. */
int txlm_rec_begin_kept(txlm_rec *r, uint32_t slot, txlm_err *err);
/* Whether a kept slot holds a finished recording. */
int txlm_rec_kept_ready(const txlm_rec *r, uint32_t slot);
/* Marks a kept slot empty (its key is being reassigned). */
void txlm_rec_kept_drop(txlm_rec *r, uint32_t slot);
/* Submits kept slot's recording again and waits. Values its commands
 * read from buffers (shaders/step.glsl) are the caller's to update first. */
int txlm_rec_replay(txlm_rec *r, uint32_t slot, txlm_err *err);
/* Records a dispatch: views in the order of txlm_kernel_bindings (the
 * kernel's bindings, then binding 1's further slots). Errors (no descriptor set, bad view) are
 * latched and returned by txlm_rec_submit, so op code stays linear. */
void txlm_rec_dispatch(txlm_rec *r, txlm_kernel_id k, const txlm_view *views, const void *push, uint32_t push_size,
                       uint32_t gx, uint32_t gy, uint32_t gz);
/* Whether v can be bound as a texel buffer on this device (offset
 * alignment, element count); op functions check before choosing a texel kernel. */
int txlm_rec_texel_fits(const txlm_rec *r, txlm_view v);
/* Full compute/transfer memory barrier: every later command sees every earlier write. */
void txlm_rec_barrier(txlm_rec *r);
void txlm_rec_copy(txlm_rec *r, VkBuffer src, VkDeviceSize src_off, VkBuffer dst, VkDeviceSize dst_off, VkDeviceSize size);
void txlm_rec_copy_regions(txlm_rec *r, VkBuffer src, VkBuffer dst, const VkBufferCopy *regions, uint32_t n);
void txlm_rec_fill_zero(txlm_rec *r, VkBuffer buf, VkDeviceSize off, VkDeviceSize size);
/* Ends, submits, waits (piece by piece). */
int txlm_rec_submit(txlm_rec *r, txlm_err *err);
/* An execution dependency on every command submitted to the queue
 * before this recording: its later commands wait for them (a buffer the
 * program's commands may still be reading, txlm_vulkan.h). */
void txlm_rec_wait_queue(txlm_rec *r);

#endif
