/* The optional features and extensions txlm uses (device_features.h). */
#include "device_features.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define FLAG(f) offsetof(txlm_vk_enabled, f)

static const txlm_vk_need_row rows[] = {
    {TXLM_EXT_PORTABILITY, NULL, 1, TXLM_NEED_GROUP_NONE,
     "required by Vulkan wherever a device offers it (portability implementations such as MoltenVK)", FLAG(portability)},
    {"shaderInt64", "VkPhysicalDeviceFeatures", 0, TXLM_NEED_GROUP_NONE,
     "64-bit-wide loads in the matrix kernels (without it: kernels with 128-bit loads)", FLAG(int64)},
    {TXLM_EXT_COOPMAT, NULL, 0, TXLM_NEED_GROUP_COOPMAT,
     "products and attention on the matrix units (without it: the FP32 kernels)", FLAG(ext_cooperative_matrix)},
    {"cooperativeMatrix", "VkPhysicalDeviceCooperativeMatrixFeaturesKHR", 0, TXLM_NEED_GROUP_COOPMAT,
     "the matrix units' kernels", FLAG(cooperative_matrix)},
    {TXLM_EXT_SUBGROUP_SIZE_CONTROL, NULL, 0, TXLM_NEED_GROUP_COOPMAT,
     "full subgroups for the matrix units' kernels (core in Vulkan 1.3)", FLAG(ext_subgroup_size_control)},
    {"computeFullSubgroups", "VkPhysicalDeviceSubgroupSizeControlFeatures or VkPhysicalDeviceVulkan13Features", 0,
     TXLM_NEED_GROUP_COOPMAT, "full subgroups for the matrix units' kernels", FLAG(full_subgroups)},
    {"shaderFloat16", "VkPhysicalDeviceVulkan12Features or VkPhysicalDeviceShaderFloat16Int8Features", 0,
     TXLM_NEED_GROUP_COOPMAT, "f16 arithmetic in the matrix units' kernels", FLAG(float16)},
    {"vulkanMemoryModel", "VkPhysicalDeviceVulkan12Features or VkPhysicalDeviceVulkanMemoryModelFeatures", 0,
     TXLM_NEED_GROUP_COOPMAT, "the memory model the matrix units' kernels compile to", FLAG(memory_model)},
    {"vulkanMemoryModelDeviceScope", "VkPhysicalDeviceVulkan12Features or VkPhysicalDeviceVulkanMemoryModelFeatures", 0,
     TXLM_NEED_GROUP_COOPMAT, "device-scope atomics under that memory model", FLAG(memory_model_device)},
};

const txlm_vk_need_row *txlm_vk_need_rows(uint32_t *n)
{
    *n = (uint32_t)(sizeof rows / sizeof rows[0]);
    return rows;
}

int txlm_vk_need_set(const txlm_vk_enabled *flags, const txlm_vk_need_row *r)
{
    return *(const int *)((const char *)flags + r->at) != 0;
}

static int has_name(const char *const *names, uint32_t n, const char *name)
{
    for (uint32_t i = 0; names && i < n; i++)
        if (names[i] && !strcmp(names[i], name)) return 1;
    return 0;
}

void txlm_vk_features_offered(VkPhysicalDevice pd, uint32_t api, txlm_vk_enabled *out)
{
    memset(out, 0, sizeof *out);
    uint32_t n = 0;
    VkExtensionProperties *p = NULL;
    if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) == VK_SUCCESS && n && (p = calloc(n, sizeof *p)) &&
        vkEnumerateDeviceExtensionProperties(pd, NULL, &n, p) == VK_SUCCESS) {
        for (uint32_t i = 0; i < n; i++) {
            const char *e = p[i].extensionName;
            out->portability |= !strcmp(e, TXLM_EXT_PORTABILITY);
            out->ext_cooperative_matrix |= !strcmp(e, TXLM_EXT_COOPMAT);
            out->ext_subgroup_size_control |= !strcmp(e, TXLM_EXT_SUBGROUP_SIZE_CONTROL);
        }
    }
    free(p);
    if (api >= VK_API_VERSION_1_3) out->ext_subgroup_size_control = 1;
    /* the extensions' structures only where the device knows them */
    txlm_cm_features cm = {.sType = TXLM_ST_CM_FEATURES};
    VkPhysicalDeviceSubgroupSizeControlFeatures sc = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES,
                                                      .pNext = out->ext_cooperative_matrix ? &cm : NULL};
    VkPhysicalDeviceVulkan12Features v12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                            .pNext = out->ext_subgroup_size_control ? (void *)&sc : (void *)sc.pNext};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &v12};
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    out->int64 = f2.features.shaderInt64;
    out->float16 = v12.shaderFloat16;
    out->memory_model = v12.vulkanMemoryModel;
    out->memory_model_device = v12.vulkanMemoryModelDeviceScope;
    out->full_subgroups = sc.computeFullSubgroups;
    out->cooperative_matrix = cm.cooperativeMatrix;
}

/* The flags of one structure of a create info's chain. */
static void read_struct(const VkBaseInStructure *b, txlm_vk_enabled *out)
{
    switch ((int)b->sType) {
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2:
        out->int64 |= ((const VkPhysicalDeviceFeatures2 *)b)->features.shaderInt64;
        break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES: {
        const VkPhysicalDeviceVulkan12Features *f = (const void *)b;
        out->float16 |= f->shaderFloat16;
        out->memory_model |= f->vulkanMemoryModel;
        out->memory_model_device |= f->vulkanMemoryModelDeviceScope;
        break;
    }
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES:
        out->float16 |= ((const VkPhysicalDeviceShaderFloat16Int8Features *)b)->shaderFloat16;
        break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES: {
        const VkPhysicalDeviceVulkanMemoryModelFeatures *f = (const void *)b;
        out->memory_model |= f->vulkanMemoryModel;
        out->memory_model_device |= f->vulkanMemoryModelDeviceScope;
        break;
    }
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES:
        out->full_subgroups |= ((const VkPhysicalDeviceVulkan13Features *)b)->computeFullSubgroups;
        break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES:
        out->full_subgroups |= ((const VkPhysicalDeviceSubgroupSizeControlFeatures *)b)->computeFullSubgroups;
        break;
    case (int)TXLM_ST_CM_FEATURES:
        out->cooperative_matrix |= ((const txlm_cm_features *)b)->cooperativeMatrix;
        break;
    default: break;
    }
}

void txlm_vk_features_enabled(const VkDeviceCreateInfo *ci, uint32_t api, txlm_vk_enabled *out)
{
    memset(out, 0, sizeof *out);
    const char *const *names = ci->ppEnabledExtensionNames;
    uint32_t n = ci->enabledExtensionCount;
    out->portability = has_name(names, n, TXLM_EXT_PORTABILITY);
    out->ext_cooperative_matrix = has_name(names, n, TXLM_EXT_COOPMAT);
    out->ext_subgroup_size_control = has_name(names, n, TXLM_EXT_SUBGROUP_SIZE_CONTROL) || api >= VK_API_VERSION_1_3;
    if (ci->pEnabledFeatures) out->int64 = ci->pEnabledFeatures->shaderInt64;
    for (const VkBaseInStructure *b = ci->pNext; b; b = b->pNext) read_struct(b, out);
}
