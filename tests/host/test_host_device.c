/* txlm on a program's own Vulkan device (txlm_vulkan.h) against a context
 * of txlm's own, on a packed golden case:
 *   every segment of the case fed through one session on each, every
 *   log-probability identical to the bit; then 8 drawn and fed tokens (the
 *   kept recordings replayed), the same tokens, the same next row;
 *   a batch of three sessions with ragged segments, identical to the bit;
 *   the next row left in a VkBuffer (txlm_session_next_logprobs_vk), read
 *   by the test's own commands (a copy into a host-visible buffer after
 *   the barrier txlm names, on the shared queue, under its lock) equals
 *   txlm_session_next_logprobs, after each of two feeds;
 *   no validation message (the program's layer, thread-safety and
 *   synchronization checks on), and the queue lock taken by txlm; and
 *   once the context is destroyed, another on the same device works
 *   (nothing given was destroyed).
 * With a DTYPE (f16, q8_0, q4_0) the case's weight matrices are stored in
 * it; with TXLM_TEST_WANT_COOPMAT set (CI on a lavapipe with cooperative
 * matrices) and the GPU kernels on, an f16 model's attention must have
 * run on the matrix units (attn_cm) on the program's device too.
 * With "checks" (once, on any case): what the program enabled decides the
 * kernels (shaderInt64 left off: the fallbacks, bit for bit what an own
 * context gives with TXLM_NO_INT64; the cooperative-matrix needs on or
 * left out, as the own context has them); refusals naming what is wrong
 * (an instance below Vulkan 1.2, a queue family without compute or out of
 * range, a lock without an unlock, options.device, an own context's
 * VkBuffer); the needs list and txlm_vk_needs_apply run twice on one
 * create info. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/host_device.h"
#include "context.h"
#include "pair_runs.h"
#include "text_util.h"

/* The session's next row, left in a VkBuffer by txlm, copied by the
 * program's own commands into a host-visible buffer of its own. */
static int read_vk_buffer(host_device *h, txlm_session *s, float *out, uint32_t V)
{
    txlm_vk_buffer vb;
    TCHECK(txlm_session_next_logprobs_vk(s, &vb) == TXLM_OK);
    TCHECK(vb.buffer != VK_NULL_HANDLE && vb.range == (VkDeviceSize)V * 4 && vb.queue_family == h->family);
    TCHECK(vb.src_stage_mask == VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT && vb.src_access_mask == VK_ACCESS_SHADER_WRITE_BIT);
    VkBuffer dst;
    VkDeviceMemory mem;
    void *map;
    if (!vb.buffer || host_device_buffer(h, vb.range, &dst, &mem, &map)) return 1;
    VkCommandPool pool;
    VkCommandBuffer cmd;
    VkFence fence;
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = h->family};
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    TCHECK(h->f.CreateCommandPool(h->device, &pci, NULL, &pool) == VK_SUCCESS);
    cai.commandPool = pool;
    TCHECK(h->f.AllocateCommandBuffers(h->device, &cai, &cmd) == VK_SUCCESS);
    TCHECK(h->f.CreateFence(h->device, &fci, NULL, &fence) == VK_SUCCESS);
    h->f.BeginCommandBuffer(cmd, &bi);
    /* the barrier txlm_vk_buffer names, then the copy, then for the host */
    VkBufferMemoryBarrier in = {.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER, .srcAccessMask = vb.src_access_mask,
                                .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT, .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED, .buffer = vb.buffer, .offset = vb.offset,
                                .size = vb.range};
    h->f.CmdPipelineBarrier(cmd, vb.src_stage_mask, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL, 1, &in, 0, NULL);
    VkBufferCopy region = {.srcOffset = vb.offset, .dstOffset = 0, .size = vb.range};
    h->f.CmdCopyBuffer(cmd, vb.buffer, dst, 1, &region);
    VkMemoryBarrier host = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                            .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    h->f.CmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &host, 0, NULL, 0, NULL);
    h->f.EndCommandBuffer(cmd);
    TCHECK(host_device_submit(h, cmd, fence) == VK_SUCCESS);
    memcpy(out, map, (size_t)V * 4);
    h->f.DestroyFence(h->device, fence, NULL);
    h->f.DestroyCommandPool(h->device, pool, NULL);
    h->f.UnmapMemory(h->device, mem);
    h->f.DestroyBuffer(h->device, dst, NULL);
    h->f.FreeMemory(h->device, mem, NULL);
    return 0;
}

static void run_vk_buffer(pair *p, host_device *h, int32_t **segs)
{
    /* an own context's buffer would be out of the program's reach */
    txlm_session *s = NULL;
    txlm_vk_buffer vb;
    TCHECK(txlm_session_create(p->m[0], NULL, &s) == TXLM_OK && txlm_session_feed(s, segs[0], seg_len(segs[0]), NULL) == TXLM_OK);
    TCHECK(txlm_session_next_logprobs_vk(s, &vb) == TXLM_ERR_INVALID_ARGUMENT && strstr(txlm_last_error(), "own"));
    txlm_session_free(s);
    s = NULL;
    TCHECK(txlm_session_create(p->m[1], NULL, &s) == TXLM_OK);
    if (!s) return;
    TCHECK(txlm_session_next_logprobs_vk(s, &vb) == TXLM_ERR_INVALID_ARGUMENT); /* nothing fed */
    float *got = malloc(p->V * 4), *want = malloc(p->V * 4);
    for (int round = 0; round < 2; round++) { /* the second rewrites the buffer the first read */
        TCHECK(txlm_session_feed(s, segs[round], seg_len(segs[round]), NULL) == TXLM_OK);
        if (read_vk_buffer(h, s, got, p->V)) break;
        TCHECK(txlm_session_next_logprobs(s, want) == TXLM_OK);
        same_bits(want, got, p->V, "VkBuffer");
    }
    free(got), free(want);
    txlm_session_free(s);
}

/* A context on a device made with opts, the model loaded: 0 or 1. */
static int host_model(host_device *h, const hd_options *o, const char *path, txlm_context **ctx, txlm_model **m)
{
    if (host_device_open(h, o)) return 1;
    if (host_device_context(h, NULL, ctx) || txlm_model_load(*ctx, path, NULL, m))
        return fprintf(stderr, "host context: %s\n", txlm_last_error()), 1;
    return 0;
}

/* What the program enabled decides the kernels: shaderInt64 off gives
 * the fallbacks, as TXLM_NO_INT64 does on an own context. */
static void check_detection(const char *path, int32_t **segs, uint32_t n_seg)
{
    host_device h;
    hd_options o = {.validation = validation_on(), .no_int64 = 1};
    txlm_context *hc = NULL, *oc = NULL;
    pair p = {{NULL, NULL}, 0};
    TCHECK(host_model(&h, &o, path, &hc, &p.m[1]) == 0);
    setenv("TXLM_NO_INT64", "1", 1);
    txlm_context_options co = {.validation = o.validation};
    TCHECK(txlm_context_create(&co, &oc) == TXLM_OK && txlm_model_load(oc, path, NULL, &p.m[0]) == TXLM_OK);
    unsetenv("TXLM_NO_INT64");
    if (hc && oc && p.m[0] && p.m[1]) {
        TCHECK(hc->vk.int64 == 0 && hc->vk.enabled.int64 == 0 && oc->vk.int64 == 0);
        p.V = txlm_vocab_size(p.m[0]);
        run_segments(&p, segs, n_seg);
        TCHECK(txlm_context_validation_messages(hc) == 0 && h.messages == 0);
    }
    txlm_model_free(p.m[0]), txlm_model_free(p.m[1]);
    txlm_context_destroy(oc), txlm_context_destroy(hc);
    host_device_close(&h);
    /* the cooperative-matrix needs left out: never used; applied: as on an own context */
    o = (hd_options){.validation = validation_on(), .no_coopmat = 1};
    TCHECK(host_device_open(&h, &o) == 0 && host_device_context(&h, NULL, &hc) == TXLM_OK);
    TCHECK(hc && !hc->vk.coopmat.on && hc->vk.int64 == hc->vk.enabled.int64);
    printf("cooperative matrices left out: %s\n", hc && hc->vk.coopmat.off_why ? hc->vk.coopmat.off_why : "?");
    txlm_context_destroy(hc);
    host_device_close(&h);
}

/* Refusals, each naming what is wrong, and the needs. */
static void check_refusals(void)
{
    host_device h;
    hd_options o = {.validation = validation_on()};
    if (host_device_open(&h, &o)) {
        TCHECK(0);
        return;
    }
    txlm_context *c = NULL;
    txlm_host_device d = h.dev;
    d.api_version = VK_API_VERSION_1_1;
    TCHECK(txlm_context_create_on_device(&d, NULL, &c) == TXLM_ERR_NO_DEVICE && !c && strstr(txlm_last_error(), "1.2"));
    d = h.dev, d.queue_family = 99;
    TCHECK(txlm_context_create_on_device(&d, NULL, &c) == TXLM_ERR_NO_DEVICE && strstr(txlm_last_error(), "99"));
    d = h.dev, d.unlock_queue = NULL;
    TCHECK(txlm_context_create_on_device(&d, NULL, &c) == TXLM_ERR_INVALID_ARGUMENT && strstr(txlm_last_error(), "unlock"));
    d = h.dev, d.create_info = NULL;
    TCHECK(txlm_context_create_on_device(&d, NULL, &c) == TXLM_ERR_INVALID_ARGUMENT && strstr(txlm_last_error(), "create_info"));
    txlm_context_options co = {.device = "0"};
    TCHECK(txlm_context_create_on_device(&h.dev, &co, &c) == TXLM_ERR_INVALID_ARGUMENT && strstr(txlm_last_error(), "device"));
    TCHECK(txlm_context_create_on_device(NULL, NULL, &c) == TXLM_ERR_INVALID_ARGUMENT);
    /* another loader's vkGetInstanceProcAddr than the one txlm loaded */
    d = h.dev, d.get_instance_proc_addr = (PFN_vkGetInstanceProcAddr)(void (*)(void))check_refusals;
    TCHECK(txlm_context_create_on_device(&d, NULL, &c) == TXLM_ERR_UNSUPPORTED && strstr(txlm_last_error(), "loader"));
    /* the needs: shaderInt64 listed and offered (lavapipe has it), nothing required here */
    uint32_t n = 0;
    const txlm_vk_need *l = txlm_vk_needs_list(h.needs, &n);
    int int64 = 0, required = 0;
    for (uint32_t i = 0; i < n; i++) {
        printf("need %-30s %-9s %-8s %s\n", l[i].name, l[i].required ? "required" : "optional",
               l[i].offered ? "offered" : "-", l[i].structure ? l[i].structure : "(extension)");
        int64 |= !strcmp(l[i].name, "shaderInt64") && l[i].offered && !strcmp(l[i].structure, "VkPhysicalDeviceFeatures");
        required += l[i].required;
    }
    TCHECK(n >= 8 && int64 && required == 0);
    /* applied twice to one create info: no name twice, no chain loop */
    VkDeviceCreateInfo ci = h.create_info;
    uint32_t names = ci.enabledExtensionCount;
    TCHECK(txlm_vk_needs_apply(h.needs, &ci) == TXLM_OK && ci.enabledExtensionCount == names);
    uint32_t links = 0;
    for (const VkBaseInStructure *b = ci.pNext; b && links < 100; b = b->pNext) links++;
    TCHECK(links < 100 && ci.pEnabledFeatures && ci.pEnabledFeatures->shaderInt64);
    TCHECK(h.messages == 0);
    host_device_close(&h);
}

int main(int argc, char **argv)
{
    if (argc < 4) return fprintf(stderr, "usage: %s TXLM_PACK GOLDEN_DIR CASE [checks|DTYPE]\n", argv[0]), 2;
    const char *pack = argv[1], *golden = argv[2], *name = argv[3];
    int checks = argc > 4 && !strcmp(argv[4], "checks");
    const char *dtype = argc > 4 && !checks ? argv[4] : NULL;
    char *dir = make_tmp_dir(), path[1200];
    snprintf(path, sizeof path, "%s/%s.txlm", dir ? dir : ".", name);
    if (!dir || pack_golden(pack, golden, name, path, dtype)) return fprintf(stderr, "setup: packing %s failed\n", name), 1;
    uint32_t n_seg = 0;
    int32_t **segs = read_segments(golden, name, &n_seg);
    if (!segs || n_seg < 2) return fprintf(stderr, "setup: no segments in %s\n", name), 1;
    if (checks) {
        check_refusals();
        check_detection(path, segs, n_seg);
    } else {
        host_device h;
        hd_options o = {.validation = validation_on()};
        txlm_context *own = NULL, *host = NULL;
        pair p = {{NULL, NULL}, 0};
        txlm_context_options co = {.validation = o.validation};
        if (txlm_context_create(&co, &own) || txlm_model_load(own, path, NULL, &p.m[0]) ||
            host_model(&h, &o, path, &host, &p.m[1]))
            return fprintf(stderr, "setup: %s\n", txlm_last_error()), 1;
        p.V = txlm_vocab_size(p.m[0]);
        /* the same choices on both (the program enabled what txlm asks) */
        TCHECK(host->vk.int64 == own->vk.int64 && host->vk.coopmat.on == own->vk.coopmat.on &&
               host->vk.texel == own->vk.texel && host->vk.gpu_kernels == own->vk.gpu_kernels);
        host->vk.debug->count = 1;
        run_segments(&p, segs, n_seg);
        run_batch(&p, segs, n_seg);
        run_vk_buffer(&p, &h, segs);
        const uint32_t *uses = host->vk.debug->kernel_uses;
        uint32_t cm = uses[TXLM_K_ATTN_CM] + uses[TXLM_K_ATTN_CM_X8];
        /* attn_cm goes with the GPU kernels (docs/architecture.md) */
        if (dtype && !strcmp(dtype, "f16") && getenv("TXLM_TEST_WANT_COOPMAT") && host->vk.gpu_kernels) TCHECK(cm > 0);
        TCHECK(__atomic_load_n(&h.locks, __ATOMIC_RELAXED) > 0);
        TCHECK(txlm_context_validation_messages(own) == 0 && txlm_context_validation_messages(host) == 0);
        TCHECK(h.messages == 0);
        printf("%s%s%s: own and host-device contexts identical; coopmat %s (%u attention dispatches on it); %llu "
               "submissions under the program's lock\n", name, dtype ? " " : "", dtype ? dtype : "",
               host->vk.coopmat.on ? "on" : "off", cm, (unsigned long long)h.locks);
        txlm_model_free(p.m[0]), txlm_model_free(p.m[1]);
        txlm_context_destroy(own), txlm_context_destroy(host);
        /* nothing given was destroyed: another context on the same device, instance and queue works */
        txlm_context *again = NULL;
        txlm_model *m = NULL;
        txlm_session *s = NULL;
        TCHECK(host_device_context(&h, NULL, &again) == TXLM_OK && txlm_model_load(again, path, NULL, &m) == TXLM_OK &&
               txlm_session_create(m, NULL, &s) == TXLM_OK && txlm_session_feed(s, segs[0], seg_len(segs[0]), NULL) == TXLM_OK);
        txlm_session_free(s), txlm_model_free(m), txlm_context_destroy(again);
        TCHECK(h.messages == 0);
        host_device_close(&h);
    }
    free_segments(segs, n_seg);
    rm_tree(dir);
    free(dir);
    if (text_failures) fprintf(stderr, "FAIL: %d checks\n", text_failures);
    return text_failures != 0;
}
