/* Cooperative matrices (VK_KHR_cooperative_matrix): whether a device has
 * them in a shape the matrix-unit kernels take (shaders/linear_cm.comp,
 * attn_cm.comp), enabling them on the device, and the shape given to
 * those kernels as specialization constants.
 *
 * The Vulkan headers of Debian 12 (1.3.239) predate the extension, so its
 * structures are declared here from the registry under txlm_ names. */
#ifndef TXLM_COOPMAT_H
#define TXLM_COOPMAT_H

#include "contract.h"
#include "vk_context.h"

/* The device's matrix shapes read and one chosen (vk->coopmat), before the
 * device is created; off where it lacks the extension, the features the
 * kernels need (shaderFloat16, vulkanMemoryModel), an f16 x f16 + f32
 * shape of subgroup scope that fits their tiles, where TXLM_COOPMAT=0, or
 * where the validation layer in use predates the extension. */
void txlm_coopmat_probe(txlm_vk *vk);

/* What vkCreateDevice needs for them: the extensions and feature
 * structures. txlm_coopmat_enable chains them into ci (when
 * vk->coopmat.on) and adds the extensions' names (2) to exts. */
typedef struct txlm_coopmat_enables {
    VkPhysicalDeviceVulkan12Features v12;
    VkPhysicalDeviceSubgroupSizeControlFeatures sc;
    struct {
        VkStructureType sType;
        void *pNext;
        VkBool32 cooperativeMatrix;
        VkBool32 cooperativeMatrixRobustBufferAccess;
    } cm;
} txlm_coopmat_enables;
void txlm_coopmat_enable(const txlm_vk *vk, txlm_coopmat_enables *e, VkDeviceCreateInfo *ci, const char **exts,
                         uint32_t *n_ext);

/* A cooperative-matrix kernel's pipeline runs in full subgroups (the rule
 * for SPIR-V before 1.6), with the specialization constants contract.h
 * declares (TXLM_CM_SPEC_*: the fragment's M, N, K, the fragments a
 * subgroup keeps, the most subgroups a workgroup makes), from vk->coopmat. */
typedef struct txlm_coopmat_spec {
    uint32_t values[TXLM_CM_SPECS]; /* by id */
    VkSpecializationMapEntry entries[TXLM_CM_SPECS];
    VkSpecializationInfo info;
} txlm_coopmat_spec;
const VkSpecializationInfo *txlm_coopmat_spec_info(const txlm_vk *vk, txlm_coopmat_spec *s);

#endif
