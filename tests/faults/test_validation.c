/* The validation message counter works, and synchronization validation is
 * on: a deliberate API misuse and a deliberately missing barrier are each
 * counted, the same commands with the barrier are not, and a forward pass
 * of a real model produces no message at all. Skipped without the layer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "context.h"
#include "faults_common.h"

/* Two fills of the same bytes, with or without a transfer barrier between. */
static void two_fills(txlm_vk *vk, int barrier)
{
    txlm_buf b;
    txlm_err err = {0, ""};
    CHECK(txlm_buf_create(vk, 4096, TXLM_BUF_DEVICE, &b, &err) == 0, "buffer: %s", err.msg);
    VkCommandPool pool;
    VkCommandBuffer cmd;
    VkFence fence;
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = vk->queue_family};
    CHECK(vkCreateCommandPool(vk->device, &pci, NULL, &pool) == VK_SUCCESS, "command pool");
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    CHECK(vkAllocateCommandBuffers(vk->device, &cai, &cmd) == VK_SUCCESS, "command buffer");
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    CHECK(vkCreateFence(vk->device, &fci, NULL, &fence) == VK_SUCCESS, "fence");
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vkBeginCommandBuffer(cmd, &bi);
    vkCmdFillBuffer(cmd, b.buf, 0, 4096, 1);
    if (barrier) {
        VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT};
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    }
    vkCmdFillBuffer(cmd, b.buf, 0, 4096, 2);
    vkEndCommandBuffer(cmd);
    CHECK(txlm_vk_submit_wait(vk, cmd, fence) == VK_SUCCESS, "submit");
    vkDestroyFence(vk->device, fence, NULL);
    vkDestroyCommandPool(vk->device, pool, NULL);
    txlm_buf_destroy(vk, &b);
}

typedef struct log_seen {
    int calls, levels_ok, text_ok;
} log_seen;

static void on_log(void *user, txlm_log_level level, const char *msg)
{
    log_seen *l = user;
    l->levels_ok = (l->calls == 0 || l->levels_ok) && (level == TXLM_LOG_ERROR || level == TXLM_LOG_WARNING);
    l->text_ok = (l->calls == 0 || l->text_ok) && !strncmp(msg, "Vulkan validation: ", 19) && !strchr(msg, '\n');
    l->calls++;
}

int main(void)
{
    txlm_context_options o = flt_options(0);
    if (!o.validation) {
        printf("validation layer not in use (TXLM_VALIDATION): skipped\n");
        return 77;
    }
    txlm_context *ctx = NULL;
    txlm_status st = txlm_context_create(&o, &ctx);
    CHECK(st == TXLM_OK, "context: %s", txlm_last_error());
    if (st) return 1;
    txlm_vk *vk = &ctx->vk;
    CHECK(txlm_context_validation_messages(ctx) == 0, "messages right after creation");

    /* An invalid flag: the driver ignores it, the layer must not. */
    fprintf(stderr, "(a deliberate validation error follows)\n");
    VkFenceCreateInfo bad = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, .flags = 0x100};
    VkFence fence = VK_NULL_HANDLE;
    vkCreateFence(vk->device, &bad, NULL, &fence);
    if (fence) vkDestroyFence(vk->device, fence, NULL);
    uint64_t after_misuse = txlm_context_validation_messages(ctx);
    CHECK(after_misuse >= 1, "an invalid fence flag was not counted");

    /* With a log callback the next message goes to it, whole, not to stderr. */
    log_seen log = {0};
    txlm_set_log_callback(on_log, &log);
    vkCreateFence(vk->device, &bad, NULL, &fence);
    if (fence) vkDestroyFence(vk->device, fence, NULL);
    txlm_set_log_callback(NULL, NULL);
    after_misuse = txlm_context_validation_messages(ctx);
    CHECK(log.calls >= 1 && log.levels_ok && log.text_ok, "the log callback got %d calls (levels %s, text %s)", log.calls,
          log.levels_ok ? "ok" : "wrong", log.text_ok ? "ok" : "wrong");

    two_fills(vk, 1);
    CHECK(txlm_context_validation_messages(ctx) == after_misuse, "fills separated by a barrier were reported");
    fprintf(stderr, "(a deliberate synchronization hazard follows)\n");
    two_fills(vk, 0);
    uint64_t after_hazard = txlm_context_validation_messages(ctx);
    CHECK(after_hazard > after_misuse, "a write-after-write hazard was not reported: synchronization validation is off");

    /* A forward pass over memory, segments of several lengths, with sampling. */
    char *dir = fmt_mkdtemp();
    char path[4096];
    snprintf(path, sizeof path, "%s/m.txlm", dir);
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    if (flt_pack("char_preln", TXLM_DT_F32, path) == 0 && txlm_model_load(ctx, path, NULL, &m) == TXLM_OK &&
        txlm_session_create(m, NULL, &s) == TXLM_OK) {
        int32_t toks[7] = {3, 17, 5, 9, 100, 2, 44};
        float *lp = malloc(7 * 204 * sizeof *lp);
        CHECK(txlm_session_feed(s, toks, 7, lp) == TXLM_OK, "feed: %s", txlm_last_error());
        CHECK(txlm_session_feed(s, toks, 3, lp) == TXLM_OK, "feed: %s", txlm_last_error());
        for (int i = 0; i < 4; i++) {
            int32_t next;
            CHECK(txlm_session_sample(s, NULL, &next) == TXLM_OK, "sample: %s", txlm_last_error());
            CHECK(txlm_session_feed(s, &next, 1, NULL) == TXLM_OK, "feed: %s", txlm_last_error());
        }
        free(lp);
    } else {
        CHECK(0, "model: %s", txlm_last_error());
    }
    CHECK(txlm_context_validation_messages(ctx) == after_hazard, "the forward pass produced %llu validation messages",
          (unsigned long long)(txlm_context_validation_messages(ctx) - after_hazard));
    txlm_session_free(s);
    txlm_model_free(m);
    txlm_context_destroy(ctx);
    unlink(path);
    return flt_finish("validation", dir);
}
