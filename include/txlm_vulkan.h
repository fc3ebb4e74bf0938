/*
 * txlm on the program's own Vulkan device.
 *
 * A program that already draws with Vulkan (a game, an editor, a GTK4 or
 * Qt application on a Vulkan renderer) hands txlm its instance, physical
 * device, device and a queue: txlm then creates no instance or device of
 * its own (no second driver context on the GPU), may share the program's
 * queue, and can leave a session's next-token distribution in a VkBuffer
 * the program's commands read. docs/embedding.md, "On your application's
 * own Vulkan device", walks through it.
 *
 * This header includes <vulkan/vulkan.h>: the types are Vulkan's own, so
 * a program passes its handles as they are. txlm.h does not include it,
 * for the programs that never touch Vulkan themselves.
 */
#ifndef TXLM_VULKAN_H
#define TXLM_VULKAN_H

#include <vulkan/vulkan.h>

#include "txlm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The lowest Vulkan version txlm runs on: the apiVersion of the
 * instance's VkApplicationInfo and the device's version both. */
#define TXLM_VK_API_VERSION VK_API_VERSION_1_2

/* ---- what txlm needs enabled on a device ------------------------------ */

/* One extension or feature txlm uses. */
typedef struct txlm_vk_need {
    const char *name;      /* an extension ("VK_KHR_cooperative_matrix") or a feature ("shaderInt64") */
    const char *structure; /* a feature's Vulkan structure(s) ("VkPhysicalDeviceFeatures", ...); NULL for an extension */
    int required;          /* 1: a device without it is refused, naming it; 0: without it txlm runs other kernels */
    int offered;           /* the physical device offers it */
    const char *use;       /* what txlm uses it for */
} txlm_vk_need;

/* txlm's needs on one physical device. */
typedef struct txlm_vk_needs txlm_vk_needs;

/* Reads what physical_device offers of txlm's needs. instance is the
 * program's (created with apiVersion >= TXLM_VK_API_VERSION);
 * get_instance_proc_addr its loader's vkGetInstanceProcAddr, or NULL for
 * libvulkan.so.1's. On failure *out is NULL. */
TXLM_API txlm_status txlm_vk_needs_create(VkInstance instance, VkPhysicalDevice physical_device,
                                          PFN_vkGetInstanceProcAddr get_instance_proc_addr, txlm_vk_needs **out);
/* The needs, *count of them, valid until txlm_vk_needs_free: the required
 * ones (only VK_KHR_portability_subset, where the device offers it: txlm
 * otherwise runs on core Vulkan 1.2 with a compute queue) and the
 * optional ones, whose kernels txlm uses where the device has them
 * enabled. */
TXLM_API const txlm_vk_need *txlm_vk_needs_list(const txlm_vk_needs *needs, uint32_t *count);
/* Adds to the program's ci, before its vkCreateDevice, the needs the
 * device offers: their extension names after the program's (a name
 * already there is not repeated), their features set in the program's
 * own feature structures where its chain has them (pEnabledFeatures or a
 * VkPhysicalDeviceFeatures2; VkPhysicalDeviceVulkan12Features or the
 * float16 and memory-model structures; VkPhysicalDeviceVulkan13Features
 * or the subgroup-size-control one), else in structures of txlm's
 * chained at its end. Features the program set stay set. ci's extension
 * array and the structures added belong to needs: keep needs until
 * txlm_context_create_on_device has returned (it reads them). The cooperative-matrix needs are added
 * all together or not at all. Refused (TXLM_ERR_NO_DEVICE, naming it)
 * where the device lacks a required one. */
TXLM_API txlm_status txlm_vk_needs_apply(txlm_vk_needs *needs, VkDeviceCreateInfo *ci);
/* NULL is ignored. */
TXLM_API void txlm_vk_needs_free(txlm_vk_needs *needs);

/* ---- a context on the program's device ------------------------------- */

/* Called around every vkQueueSubmit txlm makes on a shared queue (txlm
 * waits for its work by fence, outside the lock; it never calls
 * vkQueueWaitIdle or vkDeviceWaitIdle on a program's device). Must not
 * call into txlm. */
typedef void (*txlm_queue_lock_fn)(void *user);

typedef struct txlm_host_device {
    /* the apiVersion of the VkApplicationInfo the instance was created
     * with: at least TXLM_VK_API_VERSION */
    uint32_t api_version;
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;
    /* what vkCreateDevice was given: txlm reads which extensions and
     * features are enabled from it (during txlm_context_create_on_device
     * only) and uses the optional ones that are, nothing else */
    const VkDeviceCreateInfo *create_info;
    uint32_t queue_family;   /* a family with VK_QUEUE_COMPUTE_BIT */
    VkQueue queue;           /* a queue of that family, created with the device */
    /* the program's loader's vkGetInstanceProcAddr (volk loads through it),
     * or NULL: libvulkan.so.1's. Once txlm has loaded Vulkan in a process,
     * another loader's is refused. */
    PFN_vkGetInstanceProcAddr get_instance_proc_addr;
    /* A queue the program submits to from other threads too: both set,
     * called around each of txlm's vkQueueSubmit; both NULL: the queue is
     * txlm's alone while the context lives (or the program never submits
     * to it while a txlm call runs). */
    txlm_queue_lock_fn lock_queue;
    txlm_queue_lock_fn unlock_queue;
    void *queue_user;
} txlm_host_device;

/* A context on the program's device; opts may be NULL. Nothing of
 * Vulkan's is created but command pools, buffers, pipelines and fences
 * (and with opts->validation, a debug messenger on the program's
 * instance, which must then have VK_EXT_debug_utils enabled: it counts
 * the messages txlm_context_validation_messages reports); nothing given
 * is destroyed by txlm_context_destroy. opts->device must be NULL and
 * opts->low_priority is not used (the queue's priority is the
 * program's); memory_budget and max_submit_dispatches apply as on a
 * context of txlm's own. Refused where the versions are below
 * TXLM_VK_API_VERSION, the family has no compute, or a required need is
 * not enabled (the message names it). The instance, device and queue
 * must outlive the context. On failure *out is NULL. */
TXLM_API txlm_status txlm_context_create_on_device(const txlm_host_device *dev, const txlm_context_options *opts,
                                                   txlm_context **out);

/* ---- results in a VkBuffer ------------------------------------------- */

/* Where a result is, and what the program's commands must wait for. */
typedef struct txlm_vk_buffer {
    VkBuffer buffer;          /* made with STORAGE_BUFFER, UNIFORM_TEXEL_BUFFER, TRANSFER_SRC and
                                 TRANSFER_DST usage, exclusive to queue_family */
    VkDeviceSize offset;      /* bytes */
    VkDeviceSize range;       /* bytes */
    uint32_t queue_family;    /* the context's queue's */
    /* the first half of the memory barrier the program records, on the
     * context's queue, before its first command that reads the range */
    VkPipelineStageFlags src_stage_mask;  /* VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT */
    VkAccessFlags src_access_mask;        /* VK_ACCESS_SHADER_WRITE_BIT */
} txlm_vk_buffer;

/* The log-probabilities of every token following the last token fed
 * (n_token little-endian floats, as txlm_session_next_logprobs gives
 * them, bit for bit) computed into a device buffer of the session's,
 * read back by nobody: *out says where. Only on a context made by
 * txlm_context_create_on_device. When the call returns, txlm's commands
 * that wrote them have completed. Commands the program submits after
 * that to the context's queue read them after a memory barrier from
 * out->src_stage_mask / src_access_mask to the stage and access of its
 * reads (on another queue nothing is promised). The buffer is the
 * session's until txlm_session_free; the next call of this function on
 * the session writes it again, after every command submitted to the
 * queue before it has completed (its first command waits for them), so
 * reads submitted before that call are safe; the program's reads must
 * have completed before txlm_session_free. Nothing is checked for NaN
 * (nothing is read back); the memory and the sampler do not move. */
TXLM_API txlm_status txlm_session_next_logprobs_vk(txlm_session *s, txlm_vk_buffer *out);

#ifdef __cplusplus
}
#endif

#endif
