/* The optional features and extensions txlm's kernels use, in one table
 * (device_features.c): what a physical device offers, what a
 * VkDeviceCreateInfo enables, the names a program is told to enable
 * (txlm_vk_needs, txlm_vulkan.h) and what txlm enables on its own
 * device. Detection (kernels.c, coopmat.c) reads txlm_vk.enabled, which
 * one of these filled. */
#ifndef TXLM_DEVICE_FEATURES_H
#define TXLM_DEVICE_FEATURES_H

#include "vk_context.h"

/* From the Vulkan registry: VK_KHR_cooperative_matrix (spec version 2),
 * which the Vulkan headers of Debian 12 (1.3.239) predate. */
#define TXLM_EXT_COOPMAT "VK_KHR_cooperative_matrix"
#define TXLM_EXT_SUBGROUP_SIZE_CONTROL "VK_EXT_subgroup_size_control"
#define TXLM_EXT_PORTABILITY "VK_KHR_portability_subset"
#define TXLM_ST_CM_FEATURES ((VkStructureType)1000506000)

typedef struct txlm_cm_features {
    VkStructureType sType;
    void *pNext;
    VkBool32 cooperativeMatrix;
    VkBool32 cooperativeMatrixRobustBufferAccess;
} txlm_cm_features;

/* The lowest Vulkan version txlm runs on, instance and device. */
#define TXLM_VK_API VK_API_VERSION_1_2

/* What physical device pd offers (api: the version the instance and
 * device both have, the lower of the two). */
void txlm_vk_features_offered(VkPhysicalDevice pd, uint32_t api, txlm_vk_enabled *out);
/* What ci enables: its extension names and feature structures (pEnabledFeatures
 * or a VkPhysicalDeviceFeatures2, the Vulkan 1.2 and 1.3 structures or the
 * extensions' own), api as above. */
void txlm_vk_features_enabled(const VkDeviceCreateInfo *ci, uint32_t api, txlm_vk_enabled *out);

/* One of txlm's needs on a device (the public txlm_vk_need's fields). */
typedef struct txlm_vk_need_row {
    const char *name;      /* an extension's or a feature's */
    const char *structure; /* a feature's Vulkan structure, NULL for an extension */
    int required;          /* 1: refused without it (where offered, for the portability subset) */
    int group;             /* needs of one group are used together or not at all (TXLM_NEED_GROUP_*) */
    const char *use;
    size_t at;             /* a feature's flag in txlm_vk_enabled (offsetof), or an extension's */
} txlm_vk_need_row;
enum { TXLM_NEED_GROUP_NONE, TXLM_NEED_GROUP_COOPMAT };
/* The table, *n rows. */
const txlm_vk_need_row *txlm_vk_need_rows(uint32_t *n);
/* Whether flags has row r's flag set. */
int txlm_vk_need_set(const txlm_vk_enabled *flags, const txlm_vk_need_row *r);

#endif
