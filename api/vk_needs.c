/* What txlm needs enabled on a device the program creates
 * (txlm_vulkan.h): the list, and those needs added to the program's
 * VkDeviceCreateInfo. */
#include "device_features.h"

#include <stdlib.h>
#include <string.h>

#include "txlm_api_error.h"
#include "txlm_vulkan.h"

enum { MAX_NEEDS = 16 };

struct txlm_vk_needs {
    txlm_vk_need list[MAX_NEEDS];
    uint32_t n;
    txlm_vk_enabled offered;
    int coopmat;          /* every need of the cooperative-matrix group offered */
    uint32_t device_api;
    /* what txlm_vk_needs_apply puts in the program's create info */
    const char **exts;
    VkPhysicalDeviceFeatures core;
    VkPhysicalDeviceShaderFloat16Int8Features f16;
    VkPhysicalDeviceVulkanMemoryModelFeatures mm;
    VkPhysicalDeviceSubgroupSizeControlFeatures sc;
    txlm_cm_features cm;
};

txlm_status txlm_vk_needs_create(VkInstance instance, VkPhysicalDevice physical_device,
                                 PFN_vkGetInstanceProcAddr get_instance_proc_addr, txlm_vk_needs **out)
{
    if (!out) return txlm_api_bad_arg("txlm_vk_needs_create: out is NULL");
    *out = NULL;
    if (!instance || !physical_device) return txlm_api_bad_arg("txlm_vk_needs_create: instance and physical_device are required");
    txlm_err e = {0};
    if (txlm_vk_load(get_instance_proc_addr, &e)) return txlm_api_fail(&e);
    txlm_vk_load_instance(instance);
    txlm_vk_needs *n = calloc(1, sizeof *n);
    if (!n) return txlm_fail(&e, TXLM_ERR_OUT_OF_MEMORY, "out of host memory"), txlm_api_fail(&e);
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(physical_device, &p);
    n->device_api = p.apiVersion;
    /* the extension names, not Vulkan 1.3's core: apply enables them, valid under either */
    txlm_vk_features_offered(physical_device, TXLM_VK_API, &n->offered);
    uint32_t rows_n;
    const txlm_vk_need_row *rows = txlm_vk_need_rows(&rows_n);
    n->coopmat = 1;
    for (uint32_t i = 0; i < rows_n; i++) {
        int offered = txlm_vk_need_set(&n->offered, &rows[i]);
        if (rows[i].group == TXLM_NEED_GROUP_COOPMAT && !offered) n->coopmat = 0;
        if (rows[i].required && !offered) continue; /* required only where offered */
        n->list[n->n++] = (txlm_vk_need){rows[i].name, rows[i].structure, rows[i].required, offered, rows[i].use};
    }
    *out = n;
    return TXLM_OK;
}

const txlm_vk_need *txlm_vk_needs_list(const txlm_vk_needs *needs, uint32_t *count)
{
    if (count) *count = needs ? needs->n : 0;
    return needs ? needs->list : NULL;
}

void txlm_vk_needs_free(txlm_vk_needs *needs)
{
    if (!needs) return;
    free(needs->exts);
    free(needs);
}

/* The structure of type t in ci's chain (the program's, written into as
 * its own), or NULL. */
static void *find(VkDeviceCreateInfo *ci, VkStructureType t)
{
    for (const VkBaseInStructure *b = ci->pNext; b; b = b->pNext)
        if (b->sType == t) return (void *)b;
    return NULL;
}

/* s (a structure of needs) at the front of ci's chain. */
static void prepend(VkDeviceCreateInfo *ci, void *s)
{
    ((VkBaseOutStructure *)s)->pNext = (VkBaseOutStructure *)ci->pNext;
    ci->pNext = s;
}

/* shaderInt64: in the program's VkPhysicalDeviceFeatures2, else a copy of
 * its pEnabledFeatures (the one given is const), else txlm's own. */
static void add_int64(txlm_vk_needs *n, VkDeviceCreateInfo *ci)
{
    VkPhysicalDeviceFeatures2 *f2 = find(ci, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
    if (f2) {
        f2->features.shaderInt64 = VK_TRUE;
        return;
    }
    if (ci->pEnabledFeatures != &n->core) n->core = ci->pEnabledFeatures ? *ci->pEnabledFeatures : (VkPhysicalDeviceFeatures){0};
    n->core.shaderInt64 = VK_TRUE;
    ci->pEnabledFeatures = &n->core;
}

/* The cooperative-matrix group's features, each in the program's
 * structure that holds it where the chain has one (a chain may not hold
 * both a Vulkan 1.2 or 1.3 structure and one it absorbed), else txlm's. */
static void add_coopmat(txlm_vk_needs *n, VkDeviceCreateInfo *ci)
{
    VkPhysicalDeviceVulkan12Features *v12 = find(ci, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
    if (v12) {
        v12->shaderFloat16 = v12->vulkanMemoryModel = v12->vulkanMemoryModelDeviceScope = VK_TRUE;
    } else {
        VkPhysicalDeviceShaderFloat16Int8Features *f16 = find(ci, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
        if (!f16) {
            n->f16 = (VkPhysicalDeviceShaderFloat16Int8Features){.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
            prepend(ci, f16 = &n->f16);
        }
        f16->shaderFloat16 = VK_TRUE;
        VkPhysicalDeviceVulkanMemoryModelFeatures *mm = find(ci, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES);
        if (!mm) {
            n->mm = (VkPhysicalDeviceVulkanMemoryModelFeatures){.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
            prepend(ci, mm = &n->mm);
        }
        mm->vulkanMemoryModel = mm->vulkanMemoryModelDeviceScope = VK_TRUE;
    }
    VkPhysicalDeviceVulkan13Features *v13 = find(ci, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES);
    if (v13) {
        v13->computeFullSubgroups = VK_TRUE;
    } else {
        VkPhysicalDeviceSubgroupSizeControlFeatures *sc = find(ci, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES);
        if (!sc) {
            n->sc = (VkPhysicalDeviceSubgroupSizeControlFeatures){.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
            prepend(ci, sc = &n->sc);
        }
        sc->computeFullSubgroups = VK_TRUE;
    }
    txlm_cm_features *cm = find(ci, TXLM_ST_CM_FEATURES);
    if (!cm) {
        n->cm = (txlm_cm_features){.sType = TXLM_ST_CM_FEATURES};
        prepend(ci, cm = &n->cm);
    }
    cm->cooperativeMatrix = VK_TRUE;
}

/* Whether the need of row r goes in: offered, and its group whole. */
static int wanted(const txlm_vk_needs *n, const txlm_vk_need_row *r)
{
    return txlm_vk_need_set(&n->offered, r) && (r->group != TXLM_NEED_GROUP_COOPMAT || n->coopmat);
}

/* The program's extension names, then txlm's not among them. */
static int add_extensions(txlm_vk_needs *n, VkDeviceCreateInfo *ci, txlm_err *e)
{
    uint32_t rows_n, have = ci->enabledExtensionCount;
    const txlm_vk_need_row *rows = txlm_vk_need_rows(&rows_n);
    const char **names = malloc((have + rows_n) * sizeof *names);
    if (!names) return txlm_fail(e, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    uint32_t k = 0;
    for (uint32_t i = 0; i < have; i++) names[k++] = ci->ppEnabledExtensionNames[i];
    for (uint32_t i = 0; i < rows_n; i++) {
        if (rows[i].structure || !wanted(n, &rows[i])) continue;
        int there = 0;
        for (uint32_t j = 0; j < have && !there; j++) there = !strcmp(names[j], rows[i].name);
        if (!there) names[k++] = rows[i].name;
    }
    free(n->exts); /* after the copy: ci may hold the names of an earlier call */
    n->exts = names;
    ci->ppEnabledExtensionNames = names;
    ci->enabledExtensionCount = k;
    return 0;
}

txlm_status txlm_vk_needs_apply(txlm_vk_needs *needs, VkDeviceCreateInfo *ci)
{
    if (!needs || !ci) return txlm_api_bad_arg("txlm_vk_needs_apply: NULL argument");
    if (ci->enabledExtensionCount && !ci->ppEnabledExtensionNames)
        return txlm_api_bad_arg("txlm_vk_needs_apply: enabledExtensionCount without ppEnabledExtensionNames");
    txlm_err e = {0};
    if (needs->device_api < TXLM_VK_API)
        return txlm_fail(&e, TXLM_ERR_NO_DEVICE, "the device has Vulkan %u.%u; txlm needs Vulkan 1.2",
                         VK_API_VERSION_MAJOR(needs->device_api), VK_API_VERSION_MINOR(needs->device_api)),
               txlm_api_fail(&e);
    if (add_extensions(needs, ci, &e)) return txlm_api_fail(&e);
    if (needs->offered.int64) add_int64(needs, ci);
    if (needs->coopmat) add_coopmat(needs, ci);
    return TXLM_OK;
}
