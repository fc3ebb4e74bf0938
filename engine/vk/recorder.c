#include "recorder.h"

#include <string.h>

#include <stb/stb_ds.h>

/* A recording's descriptor sets come from pools of POOL_SETS sets, as
 * many as its dispatches need: a set per dispatch, counted as they are
 * made, and a pool more whenever one is used up (kept for the recording's
 * next use; reset when it is recorded again). */
#define POOL_SETS 64u

static VkResult make_dpool(txlm_rec *r, VkDescriptorPool *out)
{
    VkDescriptorPoolSize ps[2] = {
        {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = POOL_SETS * TXLM_MAX_BINDINGS},
        {.type = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, .descriptorCount = POOL_SETS * TXLM_MAX_BINDINGS},
    };
    VkDescriptorPoolCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = POOL_SETS,
                                      .poolSizeCount = r->vk->texel_ok ? 2 : 1, .pPoolSizes = ps};
    return vkCreateDescriptorPool(r->vk->device, &dci, NULL, out);
}

/* The pool the recording's next set comes from: the current one, or the
 * next once it holds POOL_SETS sets (made when first needed). */
static VkDescriptorPool next_pool(txlm_rec *r, txlm_rec_cmd *c)
{
    if (c->sets_in_pool == POOL_SETS) c->pool++, c->sets_in_pool = 0;
    if (c->pool == (uint32_t)arrlen(c->pools)) {
        VkDescriptorPool p;
        if (make_dpool(r, &p) != VK_SUCCESS) return VK_NULL_HANDLE;
        arrput(c->pools, p);
    }
    c->sets_in_pool++;
    return c->pools[c->pool];
}

/* Piece i of c's command buffers, made on first use. */
static VkResult make_piece(txlm_rec *r, txlm_rec_cmd *c, uint32_t i)
{
    if (i < (uint32_t)arrlen(c->pieces)) return VK_SUCCESS;
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = r->pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    VkCommandBuffer cmd;
    VkResult res = vkAllocateCommandBuffers(r->vk->device, &cai, &cmd);
    if (res == VK_SUCCESS) arrput(c->pieces, cmd), arrput(c->piece_dispatches, 0);
    return res;
}

/* The recording's identity for the debug counters: its first piece. */
static VkCommandBuffer rec_key(const txlm_rec_cmd *c) { return c->pieces[0]; }

/* Piece i of c reset and begun; kept recordings are submitted again, so
 * only the one-time one (cmds[0]) is ONE_TIME_SUBMIT. */
static VkResult begin_piece(txlm_rec *r, txlm_rec_cmd *c, uint32_t i)
{
    VkResult res = make_piece(r, c, i);
    if (res == VK_SUCCESS) res = vkResetCommandBuffer(c->pieces[i], 0);
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = c == &r->cmds[0] ? VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT : 0};
    if (res == VK_SUCCESS) res = vkBeginCommandBuffer(c->pieces[i], &bi);
    if (res == VK_SUCCESS) c->cmd = c->pieces[i], c->n_pieces = i + 1, c->piece_dispatches[i] = 0;
    return res;
}

int txlm_rec_init(txlm_rec *r, txlm_vk *vk, txlm_kernels *ks, txlm_view step, txlm_err *err)
{
    memset(r, 0, sizeof *r);
    r->vk = vk;
    r->ks = ks;
    r->step = step;
    r->cur = &r->cmds[0];
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = vk->queue_family};
    VkResult res = vkCreateCommandPool(vk->device, &pci, NULL, &r->pool);
    if (res == VK_SUCCESS) res = make_piece(r, &r->cmds[0], 0);
    if (res == VK_SUCCESS) {
        VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        res = vkCreateFence(vk->device, &fci, NULL, &r->fence);
    }
    if (res != VK_SUCCESS) {
        txlm_rec_destroy(r);
        return txlm_vk_fail(err, res, "creating a command recorder");
    }
    r->prof = txlm_rec_profile_create(vk);
    return 0;
}

static void drop_texel_views(txlm_rec *r, txlm_rec_cmd *c)
{
    for (ptrdiff_t i = 0; i < arrlen(c->texel_views); i++) vkDestroyBufferView(r->vk->device, c->texel_views[i].view, NULL);
    arrsetlen(c->texel_views, 0);
}

void txlm_rec_destroy(txlm_rec *r)
{
    if (!r->vk) return;
    VkDevice d = r->vk->device;
    for (uint32_t i = 0; i <= TXLM_REC_KEPT; i++) {
        drop_texel_views(r, &r->cmds[i]);
        arrfree(r->cmds[i].texel_views);
        for (ptrdiff_t p = 0; p < arrlen(r->cmds[i].pools); p++) vkDestroyDescriptorPool(d, r->cmds[i].pools[p], NULL);
        arrfree(r->cmds[i].pools);
        arrfree(r->cmds[i].pieces);
        arrfree(r->cmds[i].piece_dispatches);
    }
    txlm_rec_profile_destroy(r->prof, r->ks);
    if (r->fence) vkDestroyFence(d, r->fence, NULL);
    if (r->pool) vkDestroyCommandPool(d, r->pool, NULL); /* frees the command buffers */
    memset(r, 0, sizeof *r);
}

static int begin_cmd(txlm_rec *r, uint32_t i, txlm_err *err)
{
    txlm_rec_cmd *c = &r->cmds[i];
    c->ready = 0;
    drop_texel_views(r, c);
    VkResult res = VK_SUCCESS;
    for (ptrdiff_t p = 0; res == VK_SUCCESS && p < arrlen(c->pools); p++)
        res = vkResetDescriptorPool(r->vk->device, c->pools[p], 0);
    c->pool = c->sets_in_pool = 0;
    if (res == VK_SUCCESS) res = begin_piece(r, c, 0);
    if (res != VK_SUCCESS) return txlm_vk_fail(err, res, "beginning a command buffer");
    r->cur = c;
    txlm_rec_profile_begin(r->prof, c->cmd);
    if (txlm_debug_watching(r->vk->debug)) txlm_debug_begin(r->vk->debug, rec_key(c));
    r->recording = 1;
    r->failed = 0;
    return 0;
}

int txlm_rec_begin(txlm_rec *r, txlm_err *err) { return begin_cmd(r, 0, err); }

int txlm_rec_can_keep(const txlm_rec *r) { return r->prof == NULL && !r->vk->debug->no_replay; }

int txlm_rec_begin_kept(txlm_rec *r, uint32_t slot, txlm_err *err)
{
    if (slot < 1 || slot > TXLM_REC_KEPT || !txlm_rec_can_keep(r))
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "internal: no kept recording %u", slot);
    return begin_cmd(r, slot, err);
}

int txlm_rec_kept_ready(const txlm_rec *r, uint32_t slot)
{
    return slot >= 1 && slot <= TXLM_REC_KEPT && r->cmds[slot].ready;
}

void txlm_rec_kept_drop(txlm_rec *r, uint32_t slot)
{
    if (slot >= 1 && slot <= TXLM_REC_KEPT) r->cmds[slot].ready = 0;
}

static void latch(txlm_rec *r, int code, const char *msg)
{
    if (r->failed) return;
    r->failed = 1;
    txlm_fail(&r->first_err, code, "%s", msg);
}

int txlm_rec_texel_fits(const txlm_rec *r, txlm_view v)
{
    return r->vk->texel_ok && v.off % r->vk->texel_align == 0 && (v.size + 15) / 16 <= r->vk->max_texel_elems;
}

/* The RGBA32_UINT view of range v, made once per recording. Buffers are
 * allocated in multiples of 16 bytes and views start 16-aligned, so the
 * range rounded up to whole texels stays inside the buffer. */
static VkBufferView texel_view(txlm_rec *r, txlm_view v)
{
    txlm_texel_view *tv = r->cur->texel_views;
    for (ptrdiff_t i = arrlen(tv) - 1; i >= 0; i--)
        if (!memcmp(&tv[i].range, &v, sizeof v)) return tv[i].view;
    VkBufferViewCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO, .buffer = v.buf,
                                 .format = VK_FORMAT_R32G32B32A32_UINT, .offset = v.off, .range = (v.size + 15) & ~(VkDeviceSize)15};
    VkBufferView view;
    if (vkCreateBufferView(r->vk->device, &ci, NULL, &view) != VK_SUCCESS) return VK_NULL_HANDLE;
    txlm_texel_view e = {v, view};
    arrput(r->cur->texel_views, e);
    return view;
}

/* What would make the device refuse a dispatch, checked before a
 * descriptor set is spent on it. */
static int dispatch_fits(txlm_rec *r, const txlm_kernel *k, uint32_t gx, uint32_t gy, uint32_t gz)
{
    const VkPhysicalDeviceLimits *lim = &r->vk->props.limits;
    if (gx > lim->maxComputeWorkGroupCount[0] || gy > lim->maxComputeWorkGroupCount[1] ||
        gz > lim->maxComputeWorkGroupCount[2]) {
        latch(r, TXLM_ERR_LIMIT, "a dispatch exceeds the device's workgroup-count limits (sequence too long for this device)");
        return 0;
    }
    if (k->step && !r->step.buf) {
        latch(r, TXLM_ERR_INVALID_ARGUMENT, "internal: a kernel with a step binding on a recorder without one");
        return 0;
    }
    return 1;
}

/* Binding i read as texels: a view of v made (or found) for this recording. */
static int write_texel(txlm_rec *r, VkDescriptorSet set, uint32_t i, txlm_view v, VkBufferView *tv,
                       VkWriteDescriptorSet *w)
{
    if (!txlm_rec_texel_fits(r, v)) {
        latch(r, TXLM_ERR_LIMIT, "internal: a texel buffer view is misaligned or exceeds maxTexelBufferElements");
        return -1;
    }
    if (!(*tv = texel_view(r, v))) {
        latch(r, TXLM_ERR_VULKAN, "vkCreateBufferView failed");
        return -1;
    }
    *w = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = set, .dstBinding = i,
                                .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
                                .pTexelBufferView = tv};
    return 0;
}

/* A storage binding: the range must fit the device's limits as it is,
 * since the kernel indexes from the start of the binding. */
static int write_storage(txlm_rec *r, VkDescriptorSet set, uint32_t binding, const txlm_view *v,
                         VkDescriptorBufferInfo *bi, VkWriteDescriptorSet *w)
{
    if (v->size > r->vk->max_storage_range || v->off % r->vk->storage_align) {
        latch(r, TXLM_ERR_LIMIT, "internal: a buffer view exceeds maxStorageBufferRange or is misaligned");
        return -1;
    }
    *bi = (VkDescriptorBufferInfo){v->buf, v->off, v->size};
    *w = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = set, .dstBinding = binding,
                                .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                .pBufferInfo = bi};
    return 0;
}

/* A descriptor set from the recording's pool holding the kernel's views,
 * then the step binding when the kernel has one; VK_NULL_HANDLE after
 * latching the error. */
static VkDescriptorSet bind_views(txlm_rec *r, const txlm_kernel *k, txlm_kernel_id id, const txlm_view *views)
{
    const txlm_kernel_desc *d = &txlm_kernel_descs[id];
    VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = next_pool(r, r->cur), .descriptorSetCount = 1, .pSetLayouts = &k->dsl};
    VkDescriptorSet set;
    if (!ai.descriptorPool || vkAllocateDescriptorSets(r->vk->device, &ai, &set) != VK_SUCCESS) {
        latch(r, TXLM_ERR_VULKAN, "a descriptor set could not be allocated");
        return VK_NULL_HANDLE;
    }
    VkDescriptorBufferInfo bi[TXLM_MAX_BINDINGS];
    VkBufferView tv[TXLM_MAX_BINDINGS];
    VkWriteDescriptorSet w[TXLM_MAX_BINDINGS];
    uint32_t at[TXLM_MAX_BINDINGS], n_writes = txlm_kernel_bindings(d, at);
    for (uint32_t i = 0; i < n_writes; i++) {
        const txlm_view *v = at[i] == TXLM_STEP_BINDING ? &r->step : &views[i];
        int rc = txlm_kernel_texel(d, at[i]) ? write_texel(r, set, at[i], *v, &tv[i], &w[i])
                                             : write_storage(r, set, at[i], v, &bi[i], &w[i]);
        if (rc) return VK_NULL_HANDLE;
    }
    vkUpdateDescriptorSets(r->vk->device, n_writes, w, 0, NULL);
    return set;
}

/* Counts and traces (debug.h): the views' offsets and sizes, never their buffers. */
static void note_dispatch(txlm_rec *r, txlm_kernel_id id, const txlm_view *views, const uint8_t *push, const uint32_t *grid)
{
    uint32_t at[TXLM_MAX_BINDINGS], n = txlm_kernel_bindings(&txlm_kernel_descs[id], at);
    VkDeviceSize ranges[2 * TXLM_MAX_BINDINGS];
    for (uint32_t i = 0; i < n; i++) {
        const txlm_view *v = at[i] == TXLM_STEP_BINDING ? &r->step : &views[i];
        ranges[2 * i] = v->off, ranges[2 * i + 1] = v->size;
    }
    txlm_debug_dispatch(r->vk->debug, rec_key(r->cur), id, grid, push, TXLM_PUSH_BYTES, ranges, 2 * n);
}

/* The next piece begun where the current one holds the context's
 * budget of dispatches (recorder.h). */
static int next_piece_if_full(txlm_rec *r)
{
    txlm_rec_cmd *c = r->cur;
    uint32_t budget = r->vk->submit_dispatches;
    if (!budget || c->piece_dispatches[c->n_pieces - 1] < budget) return 0;
    /* the next begun first: where that fails, c->cmd is still the one
     * recording, which submit ends before reporting the error */
    VkCommandBuffer full = c->cmd;
    VkResult res = begin_piece(r, c, c->n_pieces);
    if (res == VK_SUCCESS) res = vkEndCommandBuffer(full);
    if (res != VK_SUCCESS) latch(r, TXLM_ERR_VULKAN, "a command buffer for the next piece of a recording failed");
    return res != VK_SUCCESS;
}

void txlm_rec_dispatch(txlm_rec *r, txlm_kernel_id id, const txlm_view *views, const void *push, uint32_t push_size,
                       uint32_t gx, uint32_t gy, uint32_t gz)
{
    if (r->failed || gx == 0 || gy == 0 || gz == 0) return;
    txlm_err kerr = {0};
    const txlm_kernel *k = txlm_kernel_get(r->ks, id, &kerr);
    if (!k) {
        latch(r, kerr.code, kerr.msg);
        return;
    }
    if (!dispatch_fits(r, k, gx, gy, gz) || next_piece_if_full(r)) return;
    VkDescriptorSet set = bind_views(r, k, id, views);
    if (!set) return;
    /* Every kernel's layout declares the full push-constant block: a
     * shorter argument struct is padded with zeros. */
    uint8_t pc[TXLM_PUSH_BYTES] = {0};
    memcpy(pc, push, push_size < TXLM_PUSH_BYTES ? push_size : TXLM_PUSH_BYTES);
    vkCmdBindPipeline(r->cur->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
    vkCmdBindDescriptorSets(r->cur->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1, &set, 0, NULL);
    vkCmdPushConstants(r->cur->cmd, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, TXLM_PUSH_BYTES, pc);
    vkCmdDispatch(r->cur->cmd, gx, gy, gz);
    r->cur->piece_dispatches[r->cur->n_pieces - 1]++;
    txlm_rec_profile_mark(r->prof, r->cur->cmd, id);
    if (txlm_debug_watching(r->vk->debug)) note_dispatch(r, id, views, pc, (uint32_t[3]){gx, gy, gz});
}

void txlm_rec_barrier(txlm_rec *r)
{
    if (r->failed) return;
    VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                         VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT,
    };
    VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    vkCmdPipelineBarrier(r->cur->cmd, stages, stages | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    if (txlm_debug_watching(r->vk->debug)) txlm_debug_command(r->vk->debug, rec_key(r->cur), TXLM_TRACE_BARRIER, 0, 0, 0);
}

void txlm_rec_copy(txlm_rec *r, VkBuffer src, VkDeviceSize src_off, VkBuffer dst, VkDeviceSize dst_off, VkDeviceSize size)
{
    if (r->failed || size == 0) return;
    VkBufferCopy c = {.srcOffset = src_off, .dstOffset = dst_off, .size = size};
    vkCmdCopyBuffer(r->cur->cmd, src, dst, 1, &c);
    txlm_rec_profile_mark(r->prof, r->cur->cmd, TXLM_K_COUNT);
    if (txlm_debug_watching(r->vk->debug)) txlm_debug_command(r->vk->debug, rec_key(r->cur), TXLM_TRACE_COPY, src_off, dst_off, size);
}

void txlm_rec_copy_regions(txlm_rec *r, VkBuffer src, VkBuffer dst, const VkBufferCopy *regions, uint32_t n)
{
    if (r->failed || n == 0) return;
    vkCmdCopyBuffer(r->cur->cmd, src, dst, n, regions);
    txlm_rec_profile_mark(r->prof, r->cur->cmd, TXLM_K_COUNT);
    for (uint32_t i = 0; i < n && txlm_debug_watching(r->vk->debug); i++)
        txlm_debug_command(r->vk->debug, rec_key(r->cur), TXLM_TRACE_COPY, regions[i].srcOffset, regions[i].dstOffset, regions[i].size);
}

void txlm_rec_fill_zero(txlm_rec *r, VkBuffer buf, VkDeviceSize off, VkDeviceSize size)
{
    if (r->failed || size == 0) return;
    vkCmdFillBuffer(r->cur->cmd, buf, off, size, 0);
    txlm_rec_profile_mark(r->prof, r->cur->cmd, TXLM_K_COUNT);
    if (txlm_debug_watching(r->vk->debug)) txlm_debug_command(r->vk->debug, rec_key(r->cur), TXLM_TRACE_FILL, off, size, 0);
}

void txlm_rec_wait_queue(txlm_rec *r)
{
    if (r->failed) return;
    vkCmdPipelineBarrier(r->cur->cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL, 0, NULL, 0, NULL);
}

/* The recording's pieces submitted in turn, each waited for. */
static VkResult submit_pieces(txlm_rec *r, txlm_rec_cmd *c)
{
    VkResult res = VK_SUCCESS;
    for (uint32_t i = 0; i < c->n_pieces && res == VK_SUCCESS; i++) {
        res = txlm_vk_submit_wait(r->vk, c->pieces[i], r->fence);
        if (res == VK_SUCCESS && txlm_debug_watching(r->vk->debug)) txlm_debug_submitted(r->vk->debug, c->piece_dispatches[i]);
    }
    return res;
}

int txlm_rec_submit(txlm_rec *r, txlm_err *err)
{
    if (!r->recording) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "internal: submit without begin");
    r->recording = 0;
    VkResult res = vkEndCommandBuffer(r->cur->cmd);
    if (r->failed) {
        if (err) *err = r->first_err;
        return r->first_err.code;
    }
    if (res != VK_SUCCESS) return txlm_vk_fail(err, res, "vkEndCommandBuffer");
    res = submit_pieces(r, r->cur);
    if (res != VK_SUCCESS) return txlm_vk_fail(err, res, "running a segment on the device");
    r->cur->ready = 1;
    txlm_rec_profile_collect(r->prof);
    return 0;
}

int txlm_rec_replay(txlm_rec *r, uint32_t slot, txlm_err *err)
{
    if (!txlm_rec_kept_ready(r, slot))
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "internal: kept recording %u is not ready", slot);
    if (r->recording) {
        /* one left open by an error before its submit: never to be submitted */
        vkEndCommandBuffer(r->cur->cmd);
        r->cur->ready = 0;
        r->recording = 0;
    }
    txlm_rec_cmd *c = &r->cmds[slot];
    r->cur = c;
    VkResult res = submit_pieces(r, c);
    if (res != VK_SUCCESS) return txlm_vk_fail(err, res, "running a segment on the device");
    if (txlm_debug_watching(r->vk->debug)) txlm_debug_replay(r->vk->debug, rec_key(c), slot);
    return 0;
}
