/* A program's renderer and txlm on one VkQueue (txlm_vulkan.h,
 * txlm_host_device.lock_queue): while txlm generates on the program's
 * device, another thread of the program submits its own work on the
 * same queue without pause (a buffer fill with the frame's number, then
 * read back and checked), every vkQueueSubmit of both under the
 * program's lock. Checked: the program's every frame right; txlm's
 * tokens and next row those of a context of txlm's own, to the bit; the
 * frames really ran while txlm did (some between txlm's first and last
 * submissions); no message of the validation layer, whose thread-safety
 * checks report two threads in vkQueueSubmit on one queue at once (on by
 * default, not turned off: common/host_device.c). .ci/run also runs it
 * built with ThreadSanitizer.
 *
 * usage: test_shared_queue TXLM_PACK GOLDEN_DIR CASE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/host_device.h"
#include "pair_runs.h"
#include "text_util.h"

enum { TOKENS = 24, FILL_WORDS = 4096 };

typedef struct renderer {
    host_device *h;
    int stop;             /* atomic */
    uint32_t frames, bad; /* frames submitted, frames whose fill was wrong */
    uint64_t locks_seen;  /* txlm's lock count at each frame: some must fall between txlm's submissions */
    uint32_t frames_between;
} renderer;

/* The program's frames: fill a buffer with the frame's number, make it
 * visible to the host, check it; as fast as the queue lets it. */
static void *render(void *arg)
{
    renderer *r = arg;
    host_device *h = r->h;
    VkBuffer buf;
    VkDeviceMemory mem;
    void *map;
    if (host_device_buffer(h, FILL_WORDS * 4, &buf, &mem, &map)) return (void *)1;
    VkCommandPool pool;
    VkCommandBuffer cmd;
    VkFence fence;
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, .queueFamilyIndex = h->family};
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (h->f.CreateCommandPool(h->device, &pci, NULL, &pool) != VK_SUCCESS) return (void *)1;
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    if (h->f.AllocateCommandBuffers(h->device, &cai, &cmd) != VK_SUCCESS || h->f.CreateFence(h->device, &fci, NULL, &fence))
        return (void *)1;
    uint64_t last_locks = 0;
    while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
        uint32_t frame = r->frames + 1;
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        h->f.BeginCommandBuffer(cmd, &bi);
        h->f.CmdFillBuffer(cmd, buf, 0, VK_WHOLE_SIZE, frame);
        VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
        h->f.CmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
        h->f.EndCommandBuffer(cmd);
        if (host_device_submit(h, cmd, fence) != VK_SUCCESS) {
            r->bad++;
            break;
        }
        const uint32_t *w = map;
        for (uint32_t i = 0; i < FILL_WORDS; i++)
            if (w[i] != frame) {
                r->bad++;
                break;
            }
        r->frames = frame;
        uint64_t locks = __atomic_load_n(&h->locks, __ATOMIC_RELAXED);
        if (last_locks && locks != last_locks) r->frames_between++; /* txlm submitted since the last frame */
        last_locks = locks;
    }
    h->f.DestroyFence(h->device, fence, NULL);
    h->f.DestroyCommandPool(h->device, pool, NULL);
    h->f.UnmapMemory(h->device, mem);
    h->f.DestroyBuffer(h->device, buf, NULL);
    h->f.FreeMemory(h->device, mem, NULL);
    return NULL;
}

/* The prompt (the case's first two segments), then TOKENS drawn and fed,
 * and the next row. */
static void generate(txlm_model *m, int32_t **segs, int32_t *tokens, float *next)
{
    txlm_session *s = NULL;
    TCHECK(txlm_session_create(m, NULL, &s) == TXLM_OK);
    if (!s) return;
    for (int i = 0; i < 2; i++) TCHECK(txlm_session_feed(s, segs[i], seg_len(segs[i]), NULL) == TXLM_OK);
    txlm_session_set_seed(s, 7);
    TCHECK(txlm_session_generate(s, NULL, NULL, TOKENS, tokens, NULL, NULL, NULL) == TXLM_OK);
    TCHECK(txlm_session_next_logprobs(s, next) == TXLM_OK);
    txlm_session_free(s);
}

int main(int argc, char **argv)
{
    if (argc < 4) return fprintf(stderr, "usage: %s TXLM_PACK GOLDEN_DIR CASE\n", argv[0]), 2;
    char *dir = make_tmp_dir(), path[1200];
    snprintf(path, sizeof path, "%s/%s.txlm", dir ? dir : ".", argv[3]);
    uint32_t n_seg = 0;
    int32_t **segs = read_segments(argv[2], argv[3], &n_seg);
    if (!dir || pack_case(argv[1], argv[2], argv[3], path, NULL) || !segs || n_seg < 2)
        return fprintf(stderr, "setup: packing %s failed\n", argv[3]), 1;
    txlm_context *own = NULL, *ctx = NULL;
    txlm_model *om = NULL, *m = NULL;
    txlm_context_options co = {.validation = validation_on()};
    if (txlm_context_create(&co, &own) || txlm_model_load(own, path, NULL, &om))
        return fprintf(stderr, "setup: %s\n", txlm_last_error()), 1;
    uint32_t V = txlm_vocab_size(om);
    int32_t want[TOKENS], got[TOKENS];
    float *want_next = malloc(V * 4), *got_next = malloc(V * 4);
    generate(om, segs, want, want_next);

    host_device h;
    hd_options o = {.validation = validation_on()};
    if (host_device_open(&h, &o) || host_device_context(&h, NULL, &ctx) || txlm_model_load(ctx, path, NULL, &m))
        return fprintf(stderr, "setup: host device: %s\n", txlm_last_error()), 1;
    renderer r = {.h = &h};
    pthread_t t;
    TCHECK(pthread_create(&t, NULL, render, &r) == 0);
    generate(m, segs, got, got_next);
    __atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
    void *ret = NULL;
    pthread_join(t, &ret);
    TCHECK(ret == NULL && r.bad == 0 && r.frames > 0);
    TCHECK(r.frames_between > 0);
    TCHECK(memcmp(want, got, sizeof want) == 0);
    same_bits(want_next, got_next, V, "next row");
    TCHECK(txlm_context_validation_messages(ctx) == 0 && txlm_context_validation_messages(own) == 0 && h.messages == 0);
    printf("%s: %u frames of the program's (%u between two of txlm's submissions), %llu submissions of txlm's under its lock\n",
           argv[3], r.frames, r.frames_between, (unsigned long long)h.locks);
    txlm_model_free(m), txlm_model_free(om);
    txlm_context_destroy(ctx), txlm_context_destroy(own);
    host_device_close(&h);
    free(want_next), free(got_next);
    free_segments(segs, n_seg);
    rm_tree(dir);
    free(dir);
    if (text_failures) fprintf(stderr, "FAIL: %d checks\n", text_failures);
    return text_failures != 0;
}
