/* The Vulkan side of a txlm_context: instance, chosen physical device,
 * logical device, one compute queue, and the limits kernels must respect. */
#ifndef TXLM_VK_CONTEXT_H
#define TXLM_VK_CONTEXT_H

#include <pthread.h>
#include <volk.h>

#include "debug.h"
#include "env.h"
#include "errmsg.h"
#include "txlm.h"

/* Cooperative matrices (engine/vk/coopmat.c): the fragment shape the
 * matrix-unit kernels use on this device, when it has one. */
typedef struct txlm_vk_coopmat {
    int on;            /* VK_KHR_cooperative_matrix enabled, a shape chosen */
    uint32_t m, n, k;  /* f16 A (m x k) times f16 B (k x n) plus f32 C, subgroup scope */
    uint32_t fps;      /* fragments of a 64x64 tile one subgroup keeps (the fewest subgroups' share) */
    uint32_t nsub;     /* the most subgroups a workgroup of 128 invocations makes */
    uint32_t min_sg, max_sg; /* the subgroup sizes the device may use */
    const char *off_why; /* where off: why (the kernel and engine tests report it) */
} txlm_vk_coopmat;

/* The program's lock around its queue (a host device's, txlm_vulkan.h):
 * txlm holds it around every vkQueueSubmit on a shared queue. */
typedef struct txlm_vk_queue_lock {
    void (*lock)(void *user);
    void (*unlock)(void *user);
    void *user;
} txlm_vk_queue_lock;

/* The optional features the kernels use, as enabled on the device: what
 * txlm enabled on its own, or what the program's VkDeviceCreateInfo
 * enabled on a host device (host_device.c); detection reads these, not
 * what the device merely supports. */
typedef struct txlm_vk_enabled {
    int portability;           /* VK_KHR_portability_subset (required wherever offered) */
    int int64;                 /* shaderInt64 */
    int float16;               /* shaderFloat16 */
    int memory_model;          /* vulkanMemoryModel */
    int memory_model_device;   /* vulkanMemoryModelDeviceScope */
    int full_subgroups;        /* computeFullSubgroups */
    int cooperative_matrix;    /* the cooperativeMatrix feature */
    int ext_cooperative_matrix;   /* VK_KHR_cooperative_matrix */
    int ext_subgroup_size_control; /* VK_EXT_subgroup_size_control (or Vulkan 1.3, where it is core) */
} txlm_vk_enabled;

typedef struct txlm_vk {
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger; /* this instance's own */
    VkPhysicalDevice phys;
    VkDevice device;
    VkQueue queue;
    pthread_mutex_t queue_lock; /* vkQueueSubmit needs external synchronisation */
    txlm_vk_queue_lock shared;  /* a host device's queue: the program's lock too (lock NULL: none) */
    /* the instance and device are the program's (txlm_context_create_on_device):
     * never destroyed, never waited idle (every submission of txlm's is
     * waited for by its fence) */
    int host;
    txlm_vk_enabled enabled;         /* what detection reads (above) */
    uint32_t submit_dispatches;      /* at most this many dispatches in one submission (0: no bound; recorder.h) */
    int low_priority;                /* the own device's queue was made at VK_QUEUE_GLOBAL_PRIORITY_LOW */
    uint32_t queue_family;
    uint32_t timestamp_bits;         /* valid bits of the queue's timestamps (0: none) */
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties mem_props;
    uint32_t subgroup_size;
    int subgroup_arith;              /* subgroupAdd usable in compute */
    int subgroup_shuffle;            /* subgroupShuffle(Xor) usable in compute */
    int subgroup_shuffle8;           /* subgroupShuffle usable in compute, subgroups of 8 lanes */
    int int64;                       /* shaderInt64 enabled: 256-bit loads in the matmul kernels */
    VkDeviceSize max_storage_range;  /* bytes one storage-buffer binding may cover */
    /* Bytes per binding when splitting weights and output blocks: the range
     * above, or less when TXLM_MAX_BINDING_BYTES asks (tests use it to run
     * the split paths on small models). */
    VkDeviceSize split_bytes;
    VkDeviceSize storage_align;      /* minStorageBufferOffsetAlignment */
    /* Matrix kernels read weights and activations through uniform texel
     * buffers (RGBA32_UINT views, 16 bytes a fetch) instead of storage
     * buffers. On by default on CPU devices: llvmpipe turns a storage-buffer
     * load into a per-lane loop with a branch for each lane, a texel fetch
     * into one gather, 2.5-3.6x faster for the same kernel
     * (docs/performance-history.md, "Texel-buffer kernels"). Tests switch it off to cover the other kernels. */
    int texel;
    int gpu_kernels;                 /* kernels shaped for GPUs: big workgroups, workgroup-memory tiles (TXLM_GPU_KERNELS=0/1) */
    int flush_subnormals;            /* a CPU device's shader threads flush subnormals (fp_flush.h) */
    int stream_slots;                /* attention of several streams in one dispatch (attn_streams.h) */
    int texel_ok;                    /* RGBA32_UINT uniform texel buffers supported: texel kernels built */
    txlm_vk_coopmat coopmat;         /* matrix units (TXLM_COOPMAT=0: off) */
    VkDeviceSize texel_align;        /* minTexelBufferOffsetAlignment */
    uint32_t max_texel_elems;        /* maxTexelBufferElements (16-byte texels) */
    VkDeviceSize max_alloc;          /* maxMemoryAllocationSize */
    uint64_t memory_budget;          /* 0 = no cap */
    uint64_t memory_used;            /* device memory allocated through vk_buffer.c */
    uint64_t validation_messages;
    int validation;
    int lost;               /* a submit reported the device lost; later ones fail fast */
    txlm_env env;           /* the TXLM_* switches, read when the context was created */
    txlm_debug *debug;      /* tests' options, fault points and counters (debug.h) */
} txlm_vk;

/* Loads Vulkan (volk), creates an instance, picks a device per the
 * options (index or name substring; else TXLM_DEVICE; else discrete >
 * integrated > virtual > CPU) and creates the logical device. */
int txlm_vk_open(txlm_vk *vk, const txlm_context_options *opts, txlm_err *err);
void txlm_vk_close(txlm_vk *vk);

/* A context on the program's device (host_device.c, txlm_vulkan.h):
 * creates nothing of Vulkan's but the messenger that counts validation
 * messages where asked; never destroys what it was given. dev is a
 * const txlm_host_device *. */
struct txlm_host_device;
int txlm_vk_open_host(txlm_vk *vk, const struct txlm_host_device *dev, const txlm_context_options *opts, txlm_err *err);

/* Shared by txlm_vk_open and txlm_vk_open_host (vk_context.c): volk
 * loaded (through gipa where given), its instance entry points from
 * instance; what the kernels may use read from the device; the choices
 * made from it with their TXLM_* overrides; the messenger that counts
 * validation messages on instance. */
int txlm_vk_load(PFN_vkGetInstanceProcAddr gipa, txlm_err *err);
void txlm_vk_load_instance(VkInstance instance);
void txlm_vk_read_device(txlm_vk *vk, const txlm_context_options *opts);
int txlm_vk_add_messenger(txlm_vk *vk, txlm_err *err);

/* Enumerates devices without creating one (for `txlm devices`). */
int txlm_vk_list(txlm_device_info *out, uint32_t cap, uint32_t *count, txlm_err *err);

/* Submits one command buffer on the context's queue, waits for it and
 * resets the fence. Serialised on queue_lock (where the device-lost
 * fault point counts submissions, debug.h), and on a shared queue
 * inside the program's lock too, held for the vkQueueSubmit only: the
 * fence is waited for outside both. */
VkResult txlm_vk_submit_wait(txlm_vk *vk, VkCommandBuffer cmd, VkFence fence);

/* Whether physical device pd offers device extension name. */
int txlm_vk_has_device_ext(VkPhysicalDevice pd, const char *name);

/* Maps a VkResult to a txlm status code and message. */
int txlm_vk_fail(txlm_err *err, VkResult r, const char *what);

#endif
