#include "vk_buffer.h"

#include <stdint.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

static int find_memory_type(const txlm_vk *vk, uint32_t type_bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid)
{
    for (uint32_t i = 0; i < vk->mem_props.memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = vk->mem_props.memoryTypes[i].propertyFlags;
        if ((type_bits & (1u << i)) && (f & want) == want && !(f & avoid)) return (int)i;
    }
    return -1;
}

/* Memory-type preferences per kind, best first; the first type that
 * exists AND can be allocated wins (small ReBAR heaps run out early). */
static const VkMemoryPropertyFlags prefs[][3] = {
    [TXLM_BUF_DEVICE] = {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                         VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT},
    [TXLM_BUF_READBACK] = {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
                           VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                           VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT},
    [TXLM_BUF_STAGING] = {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                          VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT},
};

/* Counts n bytes against the budget, atomically: models and sessions of
 * one context may allocate from several threads. */
static int reserve(txlm_vk *vk, VkDeviceSize n, txlm_err *err)
{
    uint64_t used = __atomic_load_n(&vk->memory_used, __ATOMIC_RELAXED);
    for (;;) {
        if (vk->memory_budget && (n > vk->memory_budget || used > vk->memory_budget - n))
            return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY,
                             "device memory budget exceeded: %llu bytes in use, %llu more requested, budget %llu",
                             (unsigned long long)used, (unsigned long long)n, (unsigned long long)vk->memory_budget);
        if (__atomic_compare_exchange_n(&vk->memory_used, &used, used + n, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return 0;
    }
}

static void release(txlm_vk *vk, VkDeviceSize n) { __atomic_fetch_sub(&vk->memory_used, n, __ATOMIC_RELAXED); }

uint64_t txlm_vk_heap_bytes(const txlm_vk *vk)
{
    uint64_t local = 0, any = 0;
    for (uint32_t i = 0; i < vk->mem_props.memoryHeapCount; i++) {
        any += vk->mem_props.memoryHeaps[i].size;
        if (vk->mem_props.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) local += vk->mem_props.memoryHeaps[i].size;
    }
    return local ? local : any;
}

/* On a CPU device (lavapipe) device memory is host memory, mapped before
 * anything touches it: asking for transparent huge pages there makes the
 * first touch of a model's weights fault 2 MiB at a time instead of 4 KiB
 * (the faults were half of the load time) and leaves fewer TLB misses
 * when the kernels stream the weights. Advice only: failure changes
 * nothing. */
static void advise_huge_pages(const txlm_vk *vk, void *map, VkDeviceSize size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (vk->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU || size < 2 * huge) return;
    uintptr_t lo = ((uintptr_t)map + huge - 1) & ~(huge - 1), hi = ((uintptr_t)map + size) & ~(huge - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)vk, (void)map, (void)size;
#endif
}

/* The buffer object, charged to the budget at what the driver takes for
 * it: it may round the allocation up past size (req: its requirements). */
static int create_buffer(txlm_vk *vk, VkDeviceSize size, txlm_buf *out, VkMemoryRequirements *req, txlm_err *err)
{
    int rc = reserve(vk, size, err);
    if (rc) return rc;
    VkBufferCreateInfo bci = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
        .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    VkResult r = vkCreateBuffer(vk->device, &bci, NULL, &out->buf);
    if (r != VK_SUCCESS) {
        release(vk, size);
        return txlm_vk_fail(err, r, "vkCreateBuffer");
    }
    vkGetBufferMemoryRequirements(vk->device, out->buf, req);
    if (req->size > size && (rc = reserve(vk, req->size - size, err))) {
        release(vk, size);
        vkDestroyBuffer(vk->device, out->buf, NULL);
        out->buf = VK_NULL_HANDLE;
        return rc;
    }
    out->charged = req->size > size ? req->size : size;
    return 0;
}

/* The buffer's memory from the first of the kind's preferred types that
 * exists and can be allocated (prefs); *type is the one that served. On
 * failure the buffer and its charge are given back. */
static int alloc_memory(txlm_vk *vk, txlm_buf_kind kind, const VkMemoryRequirements *req, VkDeviceSize size,
                        txlm_buf *out, int *type, txlm_err *err)
{
    VkResult r = VK_ERROR_OUT_OF_DEVICE_MEMORY;
    *type = -1;
    /* Fault injection: this buffer's memory fails with every memory type. */
    int inject = txlm_debug_alloc_fails(vk->debug);
    for (int p = 0; p < 3 && r != VK_SUCCESS; p++) {
        VkMemoryPropertyFlags avoid = 0;
        *type = find_memory_type(vk, req->memoryTypeBits, prefs[kind][p], avoid);
        if (*type < 0) continue;
        VkMemoryAllocateInfo mai = {
            .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
            .allocationSize = req->size,
            .memoryTypeIndex = (uint32_t)*type,
        };
        r = inject ? VK_ERROR_OUT_OF_DEVICE_MEMORY : vkAllocateMemory(vk->device, &mai, NULL, &out->mem);
    }
    if (r == VK_SUCCESS) return 0;
    release(vk, out->charged);
    vkDestroyBuffer(vk->device, out->buf, NULL);
    memset(out, 0, sizeof *out);
    if (*type < 0) return txlm_fail(err, TXLM_ERR_VULKAN, "no suitable memory type for a %llu-byte buffer", (unsigned long long)size);
    return txlm_vk_fail(err, r, "vkAllocateMemory");
}

/* Host-visible memory stays mapped for the buffer's life: uploads and
 * read-backs then need no map call of their own. */
static int bind_and_map(txlm_vk *vk, txlm_buf *out, int type, VkDeviceSize size, txlm_err *err)
{
    VkResult r = vkBindBufferMemory(vk->device, out->buf, out->mem, 0);
    out->size = size;
    VkMemoryPropertyFlags f = vk->mem_props.memoryTypes[type].propertyFlags;
    out->coherent = (f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
    if (r == VK_SUCCESS && (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
        r = vkMapMemory(vk->device, out->mem, 0, VK_WHOLE_SIZE, 0, &out->map);
    if (r != VK_SUCCESS) {
        txlm_buf_destroy(vk, out);
        return txlm_vk_fail(err, r, "binding or mapping device memory");
    }
    if (out->map) advise_huge_pages(vk, out->map, size);
    return 0;
}

int txlm_buf_create(txlm_vk *vk, VkDeviceSize size, txlm_buf_kind kind, txlm_buf *out, txlm_err *err)
{
    memset(out, 0, sizeof *out);
    if (size == 0) size = 16;
    /* Checked before rounding up, which would wrap for sizes near 2^64. */
    if (size > vk->max_alloc)
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "buffer of %llu bytes exceeds the device's largest allocation (%llu)",
                         (unsigned long long)size, (unsigned long long)vk->max_alloc);
    /* Whole 16-byte texels: texel views round their range up to them. */
    size = (size + 15) & ~(VkDeviceSize)15;
    VkMemoryRequirements req;
    int type = -1;
    int rc = create_buffer(vk, size, out, &req, err);
    if (!rc) rc = alloc_memory(vk, kind, &req, size, out, &type, err);
    if (!rc) rc = bind_and_map(vk, out, type, size, err);
    return rc;
}

void txlm_buf_destroy(txlm_vk *vk, txlm_buf *b)
{
    if (b->map) vkUnmapMemory(vk->device, b->mem);
    if (b->buf) vkDestroyBuffer(vk->device, b->buf, NULL);
    if (b->mem) vkFreeMemory(vk->device, b->mem, NULL);
    if (b->charged) release(vk, b->charged);
    memset(b, 0, sizeof *b);
}

int txlm_buf_flush(txlm_vk *vk, txlm_buf *b, txlm_err *err)
{
    if (!b->map || b->coherent) return 0;
    VkMappedMemoryRange range = {.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, .memory = b->mem, .size = VK_WHOLE_SIZE};
    VkResult r = vkFlushMappedMemoryRanges(vk->device, 1, &range);
    return r == VK_SUCCESS ? 0 : txlm_vk_fail(err, r, "vkFlushMappedMemoryRanges");
}

int txlm_buf_invalidate(txlm_vk *vk, txlm_buf *b, txlm_err *err)
{
    if (!b->map || b->coherent) return 0;
    VkMappedMemoryRange range = {.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, .memory = b->mem, .size = VK_WHOLE_SIZE};
    VkResult r = vkInvalidateMappedMemoryRanges(vk->device, 1, &range);
    return r == VK_SUCCESS ? 0 : txlm_vk_fail(err, r, "vkInvalidateMappedMemoryRanges");
}

/* Transfers through a staging buffer, for device-local memory that is
 * not mappable: upload (to_device) or download. */
static int staged_copy(txlm_vk *vk, txlm_buf *dev, VkDeviceSize off, void *host, VkDeviceSize n, int to_device,
                       txlm_err *err)
{
    const VkDeviceSize chunk = (VkDeviceSize)64 << 20;
    txlm_buf stage;
    int rc = txlm_buf_create(vk, n < chunk ? n : chunk, TXLM_BUF_STAGING, &stage, err);
    if (rc) return rc;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = vk->queue_family};
    VkResult r = vkCreateCommandPool(vk->device, &pci, NULL, &pool);
    if (r == VK_SUCCESS) {
        VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pool,
                                           .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
        r = vkAllocateCommandBuffers(vk->device, &cai, &cmd);
    }
    if (r == VK_SUCCESS) {
        VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        r = vkCreateFence(vk->device, &fci, NULL, &fence);
    }
    for (VkDeviceSize done = 0; r == VK_SUCCESS && done < n; done += chunk) {
        VkDeviceSize len = n - done < chunk ? n - done : chunk;
        if (to_device) {
            memcpy(stage.map, (const char *)host + done, len);
            if ((rc = txlm_buf_flush(vk, &stage, err))) break;
        }
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        vkResetCommandBuffer(cmd, 0);
        vkBeginCommandBuffer(cmd, &bi);
        if (to_device) {
            VkBufferCopy region = {.srcOffset = 0, .dstOffset = off + done, .size = len};
            vkCmdCopyBuffer(cmd, stage.buf, dev->buf, 1, &region);
        } else {
            VkBufferCopy region = {.srcOffset = off + done, .dstOffset = 0, .size = len};
            vkCmdCopyBuffer(cmd, dev->buf, stage.buf, 1, &region);
            VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                                  .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
            vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
        }
        vkEndCommandBuffer(cmd);
        r = txlm_vk_submit_wait(vk, cmd, fence);
        if (r == VK_SUCCESS && !to_device) {
            if ((rc = txlm_buf_invalidate(vk, &stage, err))) break;
            memcpy((char *)host + done, stage.map, len);
        }
    }
    if (r != VK_SUCCESS && !rc) rc = txlm_vk_fail(err, r, to_device ? "uploading to the device" : "reading from the device");
    if (fence) vkDestroyFence(vk->device, fence, NULL);
    if (pool) vkDestroyCommandPool(vk->device, pool, NULL);
    txlm_buf_destroy(vk, &stage);
    return rc;
}

int txlm_buf_upload(txlm_vk *vk, txlm_buf *dst, VkDeviceSize off, const void *src, VkDeviceSize n, txlm_err *err)
{
    if (off > dst->size || n > dst->size - off)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "upload of %llu bytes at %llu exceeds a %llu-byte buffer",
                         (unsigned long long)n, (unsigned long long)off, (unsigned long long)dst->size);
    if (n == 0) return 0;
    if (dst->map) {
        memcpy((char *)dst->map + off, src, n);
        return txlm_buf_flush(vk, dst, err);
    }
    return staged_copy(vk, dst, off, (void *)src, n, 1, err);
}

int txlm_buf_download(txlm_vk *vk, txlm_buf *src, VkDeviceSize off, void *dst, VkDeviceSize n, txlm_err *err)
{
    if (off > src->size || n > src->size - off)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "download of %llu bytes at %llu exceeds a %llu-byte buffer",
                         (unsigned long long)n, (unsigned long long)off, (unsigned long long)src->size);
    if (n == 0) return 0;
    if (src->map) {
        int rc = txlm_buf_invalidate(vk, src, err);
        if (!rc) memcpy(dst, (const char *)src->map + off, n);
        return rc;
    }
    return staged_copy(vk, src, off, dst, n, 0, err);
}
