#include "vk_context.h"
#include "log.h"

#include "coopmat.h"
#include "device_features.h"
#include "fp_flush.h"
#include "san_pin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"

int txlm_vk_fail(txlm_err *err, VkResult r, const char *what)
{
    switch (r) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of %s memory", what,
                         r == VK_ERROR_OUT_OF_HOST_MEMORY ? "host" : "device");
    case VK_ERROR_DEVICE_LOST:
        return txlm_fail(err, TXLM_ERR_DEVICE_LOST, "%s: the GPU device was lost (driver reset or crash)", what);
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_INITIALIZATION_FAILED:
        return txlm_fail(err, TXLM_ERR_NO_VULKAN, "%s: no usable Vulkan driver (VkResult %d)", what, (int)r);
    default:
        return txlm_fail(err, TXLM_ERR_VULKAN, "%s failed (VkResult %d)", what, (int)r);
    }
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                            VkDebugUtilsMessageTypeFlagsEXT type,
                                                            const VkDebugUtilsMessengerCallbackDataEXT *data,
                                                            void *user)
{
    txlm_vk *vk = user;
    (void)type;
    if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
        __atomic_add_fetch(&vk->validation_messages, 1, __ATOMIC_RELAXED); /* any thread's Vulkan call may report */
        txlm_log(severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? TXLM_LOG_ERROR : TXLM_LOG_WARNING,
                 "Vulkan validation: %s", data->pMessage ? data->pMessage : "(no message)");
    }
    return VK_FALSE;
}

static int has_instance_layer(const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0) return 0;
    VkLayerProperties *p = calloc(n, sizeof *p);
    if (!p) return 0;
    int found = 0;
    if (vkEnumerateInstanceLayerProperties(&n, p) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++) found = strcmp(p[i].layerName, name) == 0;
    free(p);
    return found;
}

static int has_instance_ext(const char *layer, const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceExtensionProperties(layer, &n, NULL) != VK_SUCCESS || n == 0) return 0;
    VkExtensionProperties *p = calloc(n, sizeof *p);
    if (!p) return 0;
    int found = 0;
    if (vkEnumerateInstanceExtensionProperties(layer, &n, p) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++) found = strcmp(p[i].extensionName, name) == 0;
    free(p);
    return found;
}

int txlm_vk_has_device_ext(VkPhysicalDevice pd, const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0) return 0;
    VkExtensionProperties *p = calloc(n, sizeof *p);
    if (!p) return 0;
    int found = 0;
    if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, p) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++) found = strcmp(p[i].extensionName, name) == 0;
    free(p);
    return found;
}

/* volk's entry points are process globals that every context shares.
 * They are filled once: the loader's first, then, from the first instance,
 * the instance and device entry points as the loader's trampolines, which
 * dispatch on the handle they are given and so serve every instance and
 * device at once. Filling them again per context would rewrite them while
 * another context's thread calls them; volkLoadDevice would point them at
 * one device's driver, wrong for a context on another; and an instance
 * without an extension (the one txlm_list_devices makes) would leave its
 * entry points NULL for the contexts that have it. A context's extension
 * functions are its own (the messenger's, fetched from its instance). */
static pthread_mutex_t volk_lock = PTHREAD_MUTEX_INITIALIZER;
static int volk_loaded, volk_instance_loaded;

/* A program that hands over its own device may give its loader's
 * vkGetInstanceProcAddr (gipa): volk then loads through it, when it is
 * the first to load. Once loaded, the entry points stay: a gipa of
 * another loader than the one loaded would need another set of them,
 * which the process-wide ones cannot be, so it is refused. */
int txlm_vk_load(PFN_vkGetInstanceProcAddr gipa, txlm_err *err)
{
    pthread_mutex_lock(&volk_lock);
    if (!volk_loaded && gipa) volkInitializeCustom(gipa), volk_loaded = 1;
    if (!volk_loaded) volk_loaded = volkInitialize() == VK_SUCCESS;
    int other = volk_loaded && gipa && gipa != vkGetInstanceProcAddr;
    pthread_mutex_unlock(&volk_lock);
    if (other)
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED,
                         "the vkGetInstanceProcAddr given is not that of the Vulkan loader txlm already uses in this "
                         "process (give the loader's own, or NULL)");
    if (!volk_loaded)
        return txlm_fail(err, TXLM_ERR_NO_VULKAN,
                         "no Vulkan loader found (libvulkan.so.1); install a Vulkan driver "
                         "(on Debian without a GPU: mesa-vulkan-drivers for lavapipe)");
    if (volkGetInstanceVersion() < VK_API_VERSION_1_2)
        return txlm_fail(err, TXLM_ERR_NO_VULKAN, "the Vulkan loader supports only version %u.%u; txlm needs 1.2",
                         VK_VERSION_MAJOR(volkGetInstanceVersion()), VK_VERSION_MINOR(volkGetInstanceVersion()));
    return 0;
}

void txlm_vk_load_instance(VkInstance instance)
{
    pthread_mutex_lock(&volk_lock);
    if (!volk_instance_loaded) volkLoadInstance(instance);
    volk_instance_loaded = 1;
    pthread_mutex_unlock(&volk_lock);
}

/* The layers, extensions and flags an instance is created with. */
typedef struct instance_wants {
    const char *exts[3];
    uint32_t n_ext;
    const char *layers[1];
    uint32_t n_layers;
    VkInstanceCreateFlags flags;
} instance_wants;

static int pick_instance_wants(instance_wants *w, int validation, txlm_err *err)
{
    memset(w, 0, sizeof *w);
    if (validation) {
        if (!has_instance_layer(VALIDATION_LAYER))
            return txlm_fail(err, TXLM_ERR_UNSUPPORTED,
                             "validation requested but %s is not installed (Debian: vulkan-validationlayers)",
                             VALIDATION_LAYER);
        w->layers[w->n_layers++] = VALIDATION_LAYER;
        w->exts[w->n_ext++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    }
    /* MoltenVK exposes its devices only to instances that opt in. */
    if (has_instance_ext(NULL, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
        w->exts[w->n_ext++] = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
        w->flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
    }
    return 0;
}

/* Validation messages of warning level and above, to the log. */
static VkDebugUtilsMessengerCreateInfoEXT messenger_info(txlm_vk *vk)
{
    return (VkDebugUtilsMessengerCreateInfoEXT){
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_validation_message,
        .pUserData = vk,
    };
}

static int create_instance(txlm_vk *vk, int validation, txlm_err *err)
{
    instance_wants w;
    int rc = pick_instance_wants(&w, validation, err);
    if (rc) return rc;
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "txlm",
        .pEngineName = "txlm",
        .engineVersion = VK_MAKE_API_VERSION(0, TXLM_VERSION_MAJOR, TXLM_VERSION_MINOR, TXLM_VERSION_PATCH),
        .apiVersion = VK_API_VERSION_1_2,
    };
    /* Synchronization validation checks the barriers between dispatches. */
    VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT features = {
        .sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
        .enabledValidationFeatureCount = 1,
        .pEnabledValidationFeatures = enables,
    };
    /* Chained to the instance too, so that creating and destroying the
     * instance itself is reported. */
    VkDebugUtilsMessengerCreateInfoEXT dbg = messenger_info(vk);
    if (validation) dbg.pNext = &features;
    VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pNext = validation ? &dbg : NULL,
        .flags = w.flags,
        .pApplicationInfo = &app,
        .enabledLayerCount = w.n_layers,
        .ppEnabledLayerNames = w.layers,
        .enabledExtensionCount = w.n_ext,
        .ppEnabledExtensionNames = w.exts,
    };
    VkResult r = vkCreateInstance(&ci, NULL, &vk->instance);
    if (r != VK_SUCCESS) return txlm_vk_fail(err, r, "vkCreateInstance");
    txlm_vk_load_instance(vk->instance);
    vk->validation = validation;
    return validation ? txlm_vk_add_messenger(vk, err) : 0;
}

int txlm_vk_add_messenger(txlm_vk *vk, txlm_err *err)
{
    VkDebugUtilsMessengerCreateInfoEXT dbg = messenger_info(vk);
    vk->destroy_messenger =
        (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(vk->instance, "vkDestroyDebugUtilsMessengerEXT");
    PFN_vkCreateDebugUtilsMessengerEXT create_messenger =
        (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(vk->instance, "vkCreateDebugUtilsMessengerEXT");
    if (!create_messenger || !vk->destroy_messenger)
        return txlm_fail(err, TXLM_ERR_VULKAN, "VK_EXT_debug_utils enabled but its functions are missing");
    VkResult r = create_messenger(vk->instance, &dbg, NULL, &vk->messenger);
    return r == VK_SUCCESS ? 0 : txlm_vk_fail(err, r, "vkCreateDebugUtilsMessengerEXT");
}

/* The compute queue family to use, and (timestamp_bits, may be NULL) how
 * many bits of its timestamps are valid. */
static int compute_queue_family(VkPhysicalDevice pd, uint32_t *family, uint32_t *timestamp_bits)
{
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    if (n == 0 || n > 64) return 0;
    VkQueueFamilyProperties q[64];
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    /* Prefer a compute queue without graphics: on discrete GPUs that is the
     * async-compute engine, which nothing else competes for. */
    int best = -1;
    for (uint32_t i = 0; i < n; i++) {
        if (!(q[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
        if (best < 0 || !(q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) best = (int)i;
    }
    if (best < 0) return 0;
    *family = (uint32_t)best;
    if (timestamp_bits) *timestamp_bits = q[best].timestampValidBits;
    return 1;
}

static int type_rank(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
    default: return 0;
    }
}

static txlm_device_type to_txlm_type(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return TXLM_DEVICE_DISCRETE;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return TXLM_DEVICE_INTEGRATED;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return TXLM_DEVICE_VIRTUAL;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return TXLM_DEVICE_CPU;
    default: return TXLM_DEVICE_OTHER;
    }
}

static void describe(VkPhysicalDevice pd, txlm_device_info *info)
{
    VkPhysicalDeviceSubgroupProperties sub = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sub};
    vkGetPhysicalDeviceProperties2(pd, &p2);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "%s", p2.properties.deviceName);
    info->type = to_txlm_type(p2.properties.deviceType);
    info->vendor_id = p2.properties.vendorID;
    info->device_id = p2.properties.deviceID;
    info->api_version = p2.properties.apiVersion;
    info->subgroup_size = sub.subgroupSize;
    for (uint32_t i = 0; i < mp.memoryHeapCount; i++)
        if ((mp.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) && mp.memoryHeaps[i].size > info->device_local_bytes)
            info->device_local_bytes = mp.memoryHeaps[i].size;
    uint32_t fam;
    info->supported = p2.properties.apiVersion >= VK_API_VERSION_1_2 && compute_queue_family(pd, &fam, NULL);
}

/* Index of the device to use: explicit choice (index or name substring),
 * else the best-ranked supported one. -1 with err set if none. */
static int choose_device(VkPhysicalDevice *pds, uint32_t n, const char *want, txlm_err *err)
{
    txlm_device_info info;
    if (want && *want) {
        char *end;
        long idx = strtol(want, &end, 10);
        if (*end == 0) {
            if (idx < 0 || (uint32_t)idx >= n) {
                txlm_fail(err, TXLM_ERR_NO_DEVICE, "device index %ld out of range (%u devices)", idx, n);
                return -1;
            }
            describe(pds[idx], &info);
            if (!info.supported) {
                txlm_fail(err, TXLM_ERR_NO_DEVICE, "device %ld (%s) lacks Vulkan 1.2 or a compute queue", idx, info.name);
                return -1;
            }
            return (int)idx;
        }
        for (uint32_t i = 0; i < n; i++) {
            describe(pds[i], &info);
            if (info.supported && strstr(info.name, want)) return (int)i;
        }
        txlm_fail(err, TXLM_ERR_NO_DEVICE, "no supported Vulkan device's name contains \"%s\" (see `txlm devices`)", want);
        return -1;
    }
    int best = -1, best_rank = -1;
    for (uint32_t i = 0; i < n; i++) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(pds[i], &p);
        describe(pds[i], &info);
        if (!info.supported) continue;
        int rank = type_rank(p.deviceType);
        if (rank > best_rank) best = (int)i, best_rank = rank;
    }
    if (best < 0) txlm_fail(err, TXLM_ERR_NO_DEVICE, "no Vulkan 1.2 device with a compute queue (%u devices found)", n);
    return best;
}

static int enumerate(VkInstance inst, VkPhysicalDevice **out, uint32_t *n, txlm_err *err)
{
    VkResult r = vkEnumeratePhysicalDevices(inst, n, NULL);
    if (r != VK_SUCCESS) return txlm_vk_fail(err, r, "vkEnumeratePhysicalDevices");
    if (*n == 0) return txlm_fail(err, TXLM_ERR_NO_DEVICE, "the Vulkan loader found no devices (install a driver; without a GPU: mesa-vulkan-drivers)");
    *out = calloc(*n, sizeof **out);
    if (!*out) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    r = vkEnumeratePhysicalDevices(inst, n, *out);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(*out);
        return txlm_vk_fail(err, r, "vkEnumeratePhysicalDevices");
    }
    return 0;
}

int txlm_vk_list(txlm_device_info *out, uint32_t cap, uint32_t *count, txlm_err *err)
{
    txlm_vk vk;
    memset(&vk, 0, sizeof vk);
    *count = 0;
    int rc = txlm_vk_load(NULL, err);
    if (!rc) rc = create_instance(&vk, 0, err);
    VkPhysicalDevice *pds = NULL;
    uint32_t n = 0;
    if (!rc) rc = enumerate(vk.instance, &pds, &n, err);
    if (!rc) {
        txlm_err ignore;
        txlm_env env;
        txlm_env_read(&env);
        int pick = choose_device(pds, n, env.device, &ignore);
        for (uint32_t i = 0; i < n && i < cap; i++) {
            describe(pds[i], &out[i]);
            out[i].preferred = (int)i == pick;
        }
        *count = n;
    }
    free(pds);
    txlm_vk_close(&vk);
    return rc;
}

/* The global-priority extension the device offers, KHR's first (the
 * same structure and values under either name), or NULL. */
static const char *priority_ext(VkPhysicalDevice pd)
{
    if (txlm_vk_has_device_ext(pd, VK_KHR_GLOBAL_PRIORITY_EXTENSION_NAME)) return VK_KHR_GLOBAL_PRIORITY_EXTENSION_NAME;
    if (txlm_vk_has_device_ext(pd, VK_EXT_GLOBAL_PRIORITY_EXTENSION_NAME)) return VK_EXT_GLOBAL_PRIORITY_EXTENSION_NAME;
    return NULL;
}

/* The device with txlm's queue; at low global priority when asked for
 * (low_priority) and the device has the extension. A driver may refuse a
 * priority (VK_ERROR_NOT_PERMITTED_KHR; some report other errors): the
 * device is then made again at the default one, silently. */
static int create_device(txlm_vk *vk, int low_priority, txlm_err *err)
{
    float prio = 1.0f;
    VkDeviceQueueGlobalPriorityCreateInfoKHR gp = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_GLOBAL_PRIORITY_CREATE_INFO_KHR,
                                                   .globalPriority = VK_QUEUE_GLOBAL_PRIORITY_LOW_KHR};
    const char *gp_ext = low_priority ? priority_ext(vk->phys) : NULL;
    VkDeviceQueueCreateInfo qci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .pNext = gp_ext ? &gp : NULL,
        .queueFamilyIndex = vk->queue_family,
        .queueCount = 1,
        .pQueuePriorities = &prio,
    };
    const char *exts[4];
    uint32_t n_ext = 0;
    /* Required whenever a portability (MoltenVK) implementation advertises it. */
    if (vk->enabled.portability) exts[n_ext++] = TXLM_EXT_PORTABILITY;
    VkPhysicalDeviceFeatures want = {.shaderInt64 = (VkBool32)vk->enabled.int64};
    VkDeviceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pEnabledFeatures = &want,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &qci,
        .enabledExtensionCount = n_ext,
        .ppEnabledExtensionNames = exts,
    };
    txlm_coopmat_enables cm;
    txlm_coopmat_enable(vk, &cm, &ci, exts, &ci.enabledExtensionCount);
    if (gp_ext) exts[ci.enabledExtensionCount++] = gp_ext;
    VkResult r = vkCreateDevice(vk->phys, &ci, NULL, &vk->device);
    vk->low_priority = gp_ext && r == VK_SUCCESS;
    if (r != VK_SUCCESS && gp_ext && r != VK_ERROR_OUT_OF_HOST_MEMORY && r != VK_ERROR_OUT_OF_DEVICE_MEMORY) {
        qci.pNext = NULL;
        ci.enabledExtensionCount--;
        r = vkCreateDevice(vk->phys, &ci, NULL, &vk->device);
    }
    if (r != VK_SUCCESS) return txlm_vk_fail(err, r, "vkCreateDevice");
    vkGetDeviceQueue(vk->device, vk->queue_family, 0, &vk->queue);
    return 0;
}

/* The device chosen (opts->device, else TXLM_DEVICE, else the best ranked)
 * and its compute queue family. */
static int pick_device(txlm_vk *vk, const txlm_context_options *opts, txlm_err *err)
{
    VkPhysicalDevice *pds = NULL;
    uint32_t n = 0;
    int rc = enumerate(vk->instance, &pds, &n, err);
    if (rc) return rc;
    const char *want = opts && opts->device ? opts->device : vk->env.device;
    int pick = choose_device(pds, n, want, err);
    if (pick < 0) {
        free(pds);
        return err ? err->code : TXLM_ERR_NO_DEVICE;
    }
    vk->phys = pds[pick];
    free(pds);
    compute_queue_family(vk->phys, &vk->queue_family, &vk->timestamp_bits);
    return 0;
}

/* What the kernels may use: subgroup operations, binding ranges and
 * alignments, texel buffers; m3 receives the largest allocation. The
 * optional features are vk->enabled's. */
static void read_capabilities(txlm_vk *vk, VkPhysicalDeviceMaintenance3Properties *m3)
{
    VkPhysicalDeviceSubgroupProperties sub = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sub};
    sub.pNext = m3;
    vkGetPhysicalDeviceProperties2(vk->phys, &p2);
    vk->props = p2.properties;
    vkGetPhysicalDeviceMemoryProperties(vk->phys, &vk->mem_props);
    vk->subgroup_size = sub.subgroupSize;
    vk->subgroup_arith = (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                         (sub.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
    vk->subgroup_shuffle = (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                           (sub.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
    vk->subgroup_shuffle8 = vk->subgroup_shuffle && sub.subgroupSize == 8;
    vk->max_storage_range = vk->props.limits.maxStorageBufferRange;
    vk->storage_align = vk->props.limits.minStorageBufferOffsetAlignment;
    if (vk->storage_align < 4) vk->storage_align = 4;
    vk->texel_align = vk->props.limits.minTexelBufferOffsetAlignment;
    if (vk->texel_align < 16) vk->texel_align = 16;
    vk->max_texel_elems = vk->props.limits.maxTexelBufferElements;
    VkFormatProperties fp;
    vkGetPhysicalDeviceFormatProperties(vk->phys, VK_FORMAT_R32G32B32A32_UINT, &fp);
    vk->texel_ok = (fp.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT) != 0;
}

/* The choices made from the capabilities, each with its TXLM_* override. */
static void choose_paths(txlm_vk *vk, const txlm_context_options *opts, const VkPhysicalDeviceMaintenance3Properties *m3)
{
    vk->split_bytes = vk->max_storage_range;
    uint64_t split = vk->env.max_binding_bytes;
    if (split >= 256 && split < vk->split_bytes) vk->split_bytes = split;
    vk->texel = vk->texel_ok && vk->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    if (vk->env.texel >= 0) vk->texel = vk->texel_ok && vk->env.texel; /* comparisons on GPUs */
    /* CPU drivers run a workgroup's invocations in turns: big workgroups
     * and tiles staged in workgroup memory only add loads and barriers there */
    vk->gpu_kernels = vk->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
    if (vk->env.gpu_kernels >= 0) vk->gpu_kernels = vk->env.gpu_kernels; /* comparisons, tests */
    /* several streams in one attention dispatch choose their keys' binding
     * by a switch on the stream; CPU drivers run every case of it (their
     * branches are masked lanes, not jumps), a dispatch per stream is faster there */
    vk->stream_slots = vk->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
    if (vk->env.stream_slots >= 0) vk->stream_slots = vk->env.stream_slots;
    vk->max_alloc = m3->maxMemoryAllocationSize ? m3->maxMemoryAllocationSize : (VkDeviceSize)1 << 30;
    vk->memory_budget = opts ? opts->memory_budget : 0;
    vk->int64 = vk->enabled.int64 && !vk->env.no_int64;
    /* a bound on the work in one submission (recorder.h): the option, else TXLM_SUBMIT_DISPATCHES */
    vk->submit_dispatches = opts && opts->max_submit_dispatches ? opts->max_submit_dispatches : vk->env.submit_dispatches;
}

void txlm_vk_read_device(txlm_vk *vk, const txlm_context_options *opts)
{
    VkPhysicalDeviceMaintenance3Properties m3 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
    read_capabilities(vk, &m3);
    choose_paths(vk, opts, &m3);
    txlm_coopmat_probe(vk);
}

/* fp_flush.h: the worker threads of a CPU device start in vkCreateDevice,
 * with the floating-point environment of the thread that creates it. */
static int create_device_flushing(txlm_vk *vk, int low_priority, txlm_err *err)
{
    txlm_fp_env fpenv = {0};
    /* TXLM_KEEP_SUBNORMALS=1 leaves them (comparisons, tests) */
    if (vk->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && !vk->env.keep_subnormals)
        vk->flush_subnormals = txlm_fp_flush_begin(&fpenv);
    int rc = create_device(vk, low_priority, err);
    txlm_fp_flush_end(&fpenv);
    return rc;
}

int txlm_vk_open(txlm_vk *vk, const txlm_context_options *opts, txlm_err *err)
{
    memset(vk, 0, sizeof *vk);
    txlm_env_read(&vk->env);
    if (!(vk->debug = txlm_debug_create(&vk->env))) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    int validation = (opts && opts->validation) || vk->env.validation;
    pthread_mutex_init(&vk->queue_lock, NULL);
    int rc = txlm_vk_load(NULL, err);
    if (rc) return txlm_vk_close(vk), rc;
    rc = create_instance(vk, validation, err);
    if (!rc) rc = pick_device(vk, opts, err);
    if (!rc) {
        /* txlm's own device enables every optional feature it uses that the device offers */
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(vk->phys, &p);
        txlm_vk_features_offered(vk->phys, p.apiVersion < VK_API_VERSION_1_2 ? p.apiVersion : VK_API_VERSION_1_2, &vk->enabled);
        txlm_vk_read_device(vk, opts);
        rc = create_device_flushing(vk, opts && opts->low_priority, err);
    }
    if (rc) txlm_vk_close(vk);
    return rc;
}

VkResult txlm_vk_submit_wait(txlm_vk *vk, VkCommandBuffer cmd, VkFence fence)
{
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cmd};
    pthread_mutex_lock(&vk->queue_lock);
    if (txlm_debug_submit_fails(vk->debug)) vk->lost = 1;
    VkResult r = VK_ERROR_DEVICE_LOST;
    if (!vk->lost) {
        /* the program's lock, inside txlm's: the program's thread never waits on txlm's */
        if (vk->shared.lock) vk->shared.lock(vk->shared.user);
        r = vkQueueSubmit(vk->queue, 1, &si, fence);
        if (vk->shared.lock) vk->shared.unlock(vk->shared.user);
    }
    pthread_mutex_unlock(&vk->queue_lock);
    if (r == VK_SUCCESS) r = vkWaitForFences(vk->device, 1, &fence, VK_TRUE, UINT64_MAX);
    if (r == VK_SUCCESS) r = vkResetFences(vk->device, 1, &fence);
    if (r == VK_ERROR_DEVICE_LOST) {
        pthread_mutex_lock(&vk->queue_lock);
        vk->lost = 1;
        pthread_mutex_unlock(&vk->queue_lock);
    }
    return r;
}

void txlm_vk_close(txlm_vk *vk)
{
    txlm_san_pin_libraries();
    /* a program's device and instance stay its own; every submission of
     * txlm's was waited for, so nothing of txlm's is left running there
     * (vkDeviceWaitIdle would also need every queue of the program's locked) */
    if (vk->device && !vk->host) {
        vkDeviceWaitIdle(vk->device);
        vkDestroyDevice(vk->device, NULL);
    }
    if (vk->debug) pthread_mutex_destroy(&vk->queue_lock); /* made with the debug options (txlm_vk_open, _open_host) */
    if (vk->messenger) vk->destroy_messenger(vk->instance, vk->messenger, NULL);
    if (vk->instance && !vk->host) vkDestroyInstance(vk->instance, NULL);
    vk->device = VK_NULL_HANDLE;
    vk->messenger = VK_NULL_HANDLE;
    vk->instance = VK_NULL_HANDLE;
    txlm_debug_destroy(vk->debug);
    vk->debug = NULL;
}
