/* A program's own Vulkan device, made as a renderer would make it, for
 * the tests and benchmarks of txlm_context_create_on_device
 * (txlm_vulkan.h): the loader opened by hand (its vkGetInstanceProcAddr
 * handed to txlm), an instance (with the validation layer, its
 * synchronization checks and VK_EXT_debug_utils where asked; the layer's
 * thread-safety checks are on by default and nothing here turns them
 * off), the first device of the highest kind, its first queue family
 * with compute (on lavapipe the one family, graphics and compute), the
 * device made with txlm_vk_needs_apply's additions, a queue, and a lock
 * around it that txlm and the program's own submissions share.
 *
 * The helper calls Vulkan only through its own table of entry points, so
 * it runs in programs that link txlm's static libraries (and volk with
 * them) as well as in those that link libtxlm.so. */
#ifndef TXLM_TEST_HOST_DEVICE_H
#define TXLM_TEST_HOST_DEVICE_H

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES /* a program linking volk must not see Vulkan's prototypes */
#endif
#include <pthread.h>
#include <stdint.h>

#include <txlm_vulkan.h>

/* The entry points the program uses. */
typedef struct hd_fns {
    PFN_vkGetInstanceProcAddr GetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr GetDeviceProcAddr;
    PFN_vkCreateInstance CreateInstance;
    PFN_vkDestroyInstance DestroyInstance;
    PFN_vkEnumeratePhysicalDevices EnumeratePhysicalDevices;
    PFN_vkGetPhysicalDeviceProperties GetPhysicalDeviceProperties;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties GetPhysicalDeviceQueueFamilyProperties;
    PFN_vkGetPhysicalDeviceMemoryProperties GetPhysicalDeviceMemoryProperties;
    PFN_vkCreateDevice CreateDevice;
    PFN_vkDestroyDevice DestroyDevice;
    PFN_vkCreateDebugUtilsMessengerEXT CreateDebugUtilsMessengerEXT;
    PFN_vkDestroyDebugUtilsMessengerEXT DestroyDebugUtilsMessengerEXT;
    PFN_vkGetDeviceQueue GetDeviceQueue;
    PFN_vkDeviceWaitIdle DeviceWaitIdle;
    PFN_vkQueueSubmit QueueSubmit;
    PFN_vkCreateCommandPool CreateCommandPool;
    PFN_vkDestroyCommandPool DestroyCommandPool;
    PFN_vkAllocateCommandBuffers AllocateCommandBuffers;
    PFN_vkBeginCommandBuffer BeginCommandBuffer;
    PFN_vkEndCommandBuffer EndCommandBuffer;
    PFN_vkCmdFillBuffer CmdFillBuffer;
    PFN_vkCmdCopyBuffer CmdCopyBuffer;
    PFN_vkCmdPipelineBarrier CmdPipelineBarrier;
    PFN_vkCreateFence CreateFence;
    PFN_vkDestroyFence DestroyFence;
    PFN_vkWaitForFences WaitForFences;
    PFN_vkResetFences ResetFences;
    PFN_vkCreateBuffer CreateBuffer;
    PFN_vkDestroyBuffer DestroyBuffer;
    PFN_vkGetBufferMemoryRequirements GetBufferMemoryRequirements;
    PFN_vkAllocateMemory AllocateMemory;
    PFN_vkFreeMemory FreeMemory;
    PFN_vkBindBufferMemory BindBufferMemory;
    PFN_vkMapMemory MapMemory;
    PFN_vkUnmapMemory UnmapMemory;
    PFN_vkInvalidateMappedMemoryRanges InvalidateMappedMemoryRanges;
} hd_fns;

typedef struct hd_options {
    int validation;     /* the Khronos layer (synchronization checks on) and a messenger counting its messages */
    int no_int64;       /* leave shaderInt64 off after txlm_vk_needs_apply: txlm must take its fallbacks */
    int no_coopmat;     /* leave the cooperative-matrix needs out */
    uint32_t api_version; /* the instance's VkApplicationInfo.apiVersion (0: VK_API_VERSION_1_2) */
} hd_options;

typedef struct host_device {
    hd_fns f;
    void *lib;
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDevice phys;
    VkDevice device;
    VkQueue queue;
    uint32_t family;
    int cpu;                    /* a CPU device (lavapipe): made with subnormals flushed, as txlm makes its own */
    uint64_t messages;          /* the validation layer's warnings and errors (atomic) */
    pthread_mutex_t lock;       /* the queue's: held around every vkQueueSubmit, the program's and txlm's */
    uint64_t locks;             /* times txlm took it (atomic) */
    txlm_vk_needs *needs;       /* alive while create_info is */
    VkDeviceCreateInfo create_info;
    VkDeviceQueueCreateInfo queue_info;
    VkPhysicalDeviceFeatures features;
    float priority;
    txlm_host_device dev;       /* what txlm_context_create_on_device is given */
} host_device;

/* 0, or 1 after printing why (on stderr). */
int host_device_open(host_device *h, const hd_options *o);
/* A txlm context on h (opts may be NULL; validation is set where h has
 * the layer). */
txlm_status host_device_context(host_device *h, const txlm_context_options *opts, txlm_context **out);
/* The program's own submission of cmd on the shared queue, waited for. */
VkResult host_device_submit(host_device *h, VkCommandBuffer cmd, VkFence fence);
/* A buffer of size bytes in host-visible memory, mapped at *map. */
int host_device_buffer(host_device *h, VkDeviceSize size, VkBuffer *buf, VkDeviceMemory *mem, void **map);
/* Every context on h destroyed first. */
void host_device_close(host_device *h);

#endif
