/* A program's own Vulkan device (host_device.h). */
#include "host_device.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#define LAYER "VK_LAYER_KHRONOS_validation"

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT type,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)type;
    host_device *h = user;
    if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
        __atomic_add_fetch(&h->messages, 1, __ATOMIC_RELAXED);
        fprintf(stderr, "host device: validation: %s\n", data->pMessage ? data->pMessage : "(none)");
    }
    return VK_FALSE;
}

static void lock_queue(void *user)
{
    host_device *h = user;
    pthread_mutex_lock(&h->lock);
    __atomic_add_fetch(&h->locks, 1, __ATOMIC_RELAXED);
}

static void unlock_queue(void *user) { pthread_mutex_unlock(&((host_device *)user)->lock); }

#define INSTANCE_FN(h, name) ((h)->f.name = (PFN_vk##name)(h)->f.GetInstanceProcAddr((h)->instance, "vk" #name))
#define DEVICE_FN(h, name) ((h)->f.name = (PFN_vk##name)(h)->f.GetDeviceProcAddr((h)->device, "vk" #name))

static int fail(const char *what, VkResult r)
{
    fprintf(stderr, "host device: %s failed (VkResult %d)\n", what, (int)r);
    return 1;
}

static int make_instance(host_device *h, const hd_options *o)
{
    h->f.CreateInstance = (PFN_vkCreateInstance)h->f.GetInstanceProcAddr(NULL, "vkCreateInstance");
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "txlm host device test",
                             .apiVersion = o->api_version ? o->api_version : VK_API_VERSION_1_2};
    const char *layers[] = {LAYER}, *exts[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
    /* synchronization validation too, as txlm's own validated instances
     * have; thread safety is the layer's default, left on */
    VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT vf = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT, .enabledValidationFeatureCount = 1,
                                  .pEnabledValidationFeatures = enables};
    VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pNext = o->validation ? &vf : NULL,
                               .pApplicationInfo = &app, .enabledLayerCount = o->validation ? 1 : 0,
                               .ppEnabledLayerNames = layers, .enabledExtensionCount = o->validation ? 1 : 0,
                               .ppEnabledExtensionNames = exts};
    VkResult r = h->f.CreateInstance(&ci, NULL, &h->instance);
    if (r != VK_SUCCESS) return fail("vkCreateInstance", r);
    INSTANCE_FN(h, DestroyInstance), INSTANCE_FN(h, EnumeratePhysicalDevices), INSTANCE_FN(h, GetPhysicalDeviceProperties);
    INSTANCE_FN(h, GetPhysicalDeviceQueueFamilyProperties), INSTANCE_FN(h, GetPhysicalDeviceMemoryProperties);
    INSTANCE_FN(h, CreateDevice), INSTANCE_FN(h, GetDeviceProcAddr);
    if (!o->validation) return 0;
    INSTANCE_FN(h, CreateDebugUtilsMessengerEXT), INSTANCE_FN(h, DestroyDebugUtilsMessengerEXT);
    VkDebugUtilsMessengerCreateInfoEXT mi = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_message, .pUserData = h};
    r = h->f.CreateDebugUtilsMessengerEXT(h->instance, &mi, NULL, &h->messenger);
    return r == VK_SUCCESS ? 0 : fail("vkCreateDebugUtilsMessengerEXT", r);
}

static int rank(VkPhysicalDeviceType t)
{
    return t == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ? 4 : t == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 3
         : t == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU ? 2 : t == VK_PHYSICAL_DEVICE_TYPE_CPU ? 1 : 0;
}

/* The first device of the highest kind (as txlm prefers) and its first
 * family with compute. */
static int pick_device(host_device *h)
{
    VkPhysicalDevice pds[16];
    uint32_t n = 16;
    VkResult r = h->f.EnumeratePhysicalDevices(h->instance, &n, pds);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0) return fail("vkEnumeratePhysicalDevices", r);
    int best = -1;
    for (uint32_t i = 0; i < n; i++) {
        VkPhysicalDeviceProperties p, b;
        h->f.GetPhysicalDeviceProperties(pds[i], &p);
        if (best >= 0) h->f.GetPhysicalDeviceProperties(pds[best], &b);
        if (p.apiVersion >= VK_API_VERSION_1_2 && (best < 0 || rank(p.deviceType) > rank(b.deviceType))) best = (int)i;
    }
    if (best < 0) return fprintf(stderr, "host device: no Vulkan 1.2 device\n"), 1;
    h->phys = pds[best];
    VkPhysicalDeviceProperties p;
    h->f.GetPhysicalDeviceProperties(h->phys, &p);
    h->cpu = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    VkQueueFamilyProperties q[16];
    n = 16;
    h->f.GetPhysicalDeviceQueueFamilyProperties(h->phys, &n, q);
    for (h->family = 0; h->family < n && !(q[h->family].queueFlags & VK_QUEUE_COMPUTE_BIT); h->family++) continue;
    return h->family < n ? 0 : (fprintf(stderr, "host device: no compute queue family\n"), 1);
}

/* vkCreateDevice with subnormals flushed on this thread where the
 * device is a CPU (its shader threads start here and keep this thread's
 * floating-point environment: what txlm does for its own devices,
 * docs/embedding.md). */
static VkResult create_device(host_device *h)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned saved = _mm_getcsr();
    if (h->cpu) _mm_setcsr(saved | 0x8040); /* FTZ, DAZ */
    VkResult r = h->f.CreateDevice(h->phys, &h->create_info, NULL, &h->device);
    _mm_setcsr(saved);
    return r;
#else
    return h->f.CreateDevice(h->phys, &h->create_info, NULL, &h->device);
#endif
}

/* The program's device: its queue, txlm's needs added. */
static int make_device(host_device *h, const hd_options *o)
{
    txlm_status st = txlm_vk_needs_create(h->instance, h->phys, h->f.GetInstanceProcAddr, &h->needs);
    if (st) return fprintf(stderr, "host device: txlm_vk_needs_create: %s\n", txlm_last_error()), 1;
    h->priority = 1.0f;
    h->queue_info = (VkDeviceQueueCreateInfo){.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = h->family,
                                              .queueCount = 1, .pQueuePriorities = &h->priority};
    /* a renderer's own choices, which txlm's are added to */
    h->features = (VkPhysicalDeviceFeatures){.robustBufferAccess = VK_FALSE};
    h->create_info = (VkDeviceCreateInfo){.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                                          .pQueueCreateInfos = &h->queue_info, .pEnabledFeatures = &h->features};
    if (!o->no_coopmat && (st = txlm_vk_needs_apply(h->needs, &h->create_info)))
        return fprintf(stderr, "host device: txlm_vk_needs_apply: %s\n", txlm_last_error()), 1;
    if (o->no_coopmat) { /* shaderInt64 alone */
        uint32_t n;
        const txlm_vk_need *l = txlm_vk_needs_list(h->needs, &n);
        for (uint32_t i = 0; i < n; i++)
            if (!strcmp(l[i].name, "shaderInt64")) h->features.shaderInt64 = (VkBool32)l[i].offered;
    }
    if (o->no_int64) {
        h->features = *h->create_info.pEnabledFeatures;
        h->features.shaderInt64 = VK_FALSE;
        h->create_info.pEnabledFeatures = &h->features;
    }
    VkResult r = create_device(h);
    if (r != VK_SUCCESS) return fail("vkCreateDevice", r);
    DEVICE_FN(h, DestroyDevice), DEVICE_FN(h, GetDeviceQueue), DEVICE_FN(h, DeviceWaitIdle), DEVICE_FN(h, QueueSubmit);
    DEVICE_FN(h, CreateCommandPool), DEVICE_FN(h, DestroyCommandPool), DEVICE_FN(h, AllocateCommandBuffers);
    DEVICE_FN(h, BeginCommandBuffer), DEVICE_FN(h, EndCommandBuffer), DEVICE_FN(h, CmdFillBuffer), DEVICE_FN(h, CmdCopyBuffer);
    DEVICE_FN(h, CmdPipelineBarrier), DEVICE_FN(h, CreateFence), DEVICE_FN(h, DestroyFence), DEVICE_FN(h, WaitForFences);
    DEVICE_FN(h, ResetFences), DEVICE_FN(h, CreateBuffer), DEVICE_FN(h, DestroyBuffer), DEVICE_FN(h, GetBufferMemoryRequirements);
    DEVICE_FN(h, AllocateMemory), DEVICE_FN(h, FreeMemory), DEVICE_FN(h, BindBufferMemory), DEVICE_FN(h, MapMemory);
    DEVICE_FN(h, UnmapMemory), DEVICE_FN(h, InvalidateMappedMemoryRanges);
    h->f.GetDeviceQueue(h->device, h->family, 0, &h->queue);
    return 0;
}

int host_device_open(host_device *h, const hd_options *o)
{
    memset(h, 0, sizeof *h);
    pthread_mutex_init(&h->lock, NULL);
    h->lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h->lib) return fprintf(stderr, "host device: no libvulkan.so.1: %s\n", dlerror()), 1;
    h->f.GetInstanceProcAddr = (PFN_vkGetInstanceProcAddr)dlsym(h->lib, "vkGetInstanceProcAddr");
    if (!h->f.GetInstanceProcAddr) return fprintf(stderr, "host device: no vkGetInstanceProcAddr\n"), 1;
    if (make_instance(h, o) || pick_device(h) || make_device(h, o)) return 1;
    h->dev = (txlm_host_device){
        .api_version = o->api_version ? o->api_version : VK_API_VERSION_1_2,
        .instance = h->instance,
        .physical_device = h->phys,
        .device = h->device,
        .create_info = &h->create_info,
        .queue_family = h->family,
        .queue = h->queue,
        .get_instance_proc_addr = h->f.GetInstanceProcAddr,
        .lock_queue = lock_queue,
        .unlock_queue = unlock_queue,
        .queue_user = h,
    };
    return 0;
}

txlm_status host_device_context(host_device *h, const txlm_context_options *opts, txlm_context **out)
{
    txlm_context_options o = opts ? *opts : (txlm_context_options){0};
    o.validation = h->messenger != VK_NULL_HANDLE;
    return txlm_context_create_on_device(&h->dev, &o, out);
}

VkResult host_device_submit(host_device *h, VkCommandBuffer cmd, VkFence fence)
{
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cmd};
    pthread_mutex_lock(&h->lock);
    VkResult r = h->f.QueueSubmit(h->queue, 1, &si, fence);
    pthread_mutex_unlock(&h->lock);
    if (r == VK_SUCCESS) r = h->f.WaitForFences(h->device, 1, &fence, VK_TRUE, UINT64_MAX);
    if (r == VK_SUCCESS) r = h->f.ResetFences(h->device, 1, &fence);
    return r;
}

int host_device_buffer(host_device *h, VkDeviceSize size, VkBuffer *buf, VkDeviceMemory *mem, void **map)
{
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size,
                             .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult r = h->f.CreateBuffer(h->device, &bi, NULL, buf);
    if (r != VK_SUCCESS) return fail("vkCreateBuffer", r);
    VkMemoryRequirements req;
    h->f.GetBufferMemoryRequirements(h->device, *buf, &req);
    VkPhysicalDeviceMemoryProperties mp;
    h->f.GetPhysicalDeviceMemoryProperties(h->phys, &mp);
    uint32_t type = 0;
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    while (type < mp.memoryTypeCount && !((req.memoryTypeBits >> type & 1) && (mp.memoryTypes[type].propertyFlags & want) == want))
        type++;
    if (type == mp.memoryTypeCount) return fprintf(stderr, "host device: no host-visible memory\n"), 1;
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size, .memoryTypeIndex = type};
    r = h->f.AllocateMemory(h->device, &ai, NULL, mem);
    if (r == VK_SUCCESS) r = h->f.BindBufferMemory(h->device, *buf, *mem, 0);
    if (r == VK_SUCCESS) r = h->f.MapMemory(h->device, *mem, 0, VK_WHOLE_SIZE, 0, map);
    return r == VK_SUCCESS ? 0 : fail("host-visible memory", r);
}

void host_device_close(host_device *h)
{
    if (h->device) h->f.DeviceWaitIdle(h->device), h->f.DestroyDevice(h->device, NULL);
    if (h->messenger) h->f.DestroyDebugUtilsMessengerEXT(h->instance, h->messenger, NULL);
    if (h->instance) h->f.DestroyInstance(h->instance, NULL);
    txlm_vk_needs_free(h->needs);
    /* the loader stays loaded, as a program's does: txlm's entry points may have come from it */
    pthread_mutex_destroy(&h->lock);
    memset(h, 0, sizeof *h);
}
