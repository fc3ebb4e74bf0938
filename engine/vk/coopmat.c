#include "coopmat.h"

#include <stdlib.h>
#include <string.h>

#include "device_features.h"

/* From the Vulkan registry (VK_KHR_cooperative_matrix, spec version 2). */
#define CM_EXT TXLM_EXT_COOPMAT
#define SSC_EXT TXLM_EXT_SUBGROUP_SIZE_CONTROL
#define ST_CM_FEATURES TXLM_ST_CM_FEATURES
#define ST_CM_PROPERTIES ((VkStructureType)1000506001)
#define ST_CM_DEVICE_PROPERTIES ((VkStructureType)1000506002)
enum { COMPONENT_FLOAT16 = 0, COMPONENT_FLOAT32 = 1, SCOPE_SUBGROUP = 3 };
typedef struct cm_properties {
    VkStructureType sType;
    void *pNext;
    uint32_t MSize, NSize, KSize;
    int32_t AType, BType, CType, ResultType; /* VkComponentTypeKHR */
    VkBool32 saturatingAccumulation;
    int32_t scope; /* VkScopeKHR */
} cm_properties;
typedef struct cm_device_properties {
    VkStructureType sType;
    void *pNext;
    VkShaderStageFlags cooperativeMatrixSupportedStages;
} cm_device_properties;
typedef VkResult(VKAPI_PTR *cm_list_fn)(VkPhysicalDevice, uint32_t *, cm_properties *);

/* The kernels' workgroups: TXLM_CM_INVOCATIONS (contract.h); linear_cm.comp's
 * 64x64 tile of the output, attn_cm.comp's tiles of 16 queries and 16 keys,
 * whose fragments' sides must each divide 16. */
#define CM_INVOCATIONS TXLM_CM_INVOCATIONS
#define CM_TILE 64u
#define CM_SIDE 16u
/* attn_cm.comp's workgroup memory (its header) */
#define CM_ATTN_SHARED 22528u
/* accumulators a subgroup may keep before they crowd out its registers */
#define CM_MAX_FPS 16u
/* the validation layer's header version that first knew the extension */
#define LAYER_KNOWS_CM VK_MAKE_API_VERSION(0, 1, 3, 255)

/* The spec version of the validation layer, 0 when it is not there. */
static uint32_t validation_layer_version(void)
{
    uint32_t n = 0, v = 0;
    if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0) return 0;
    VkLayerProperties *p = calloc(n, sizeof *p);
    if (p && vkEnumerateInstanceLayerProperties(&n, p) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; i++)
            if (!strcmp(p[i].layerName, "VK_LAYER_KHRONOS_validation")) v = p[i].specVersion;
    free(p);
    return v;
}

/* The subgroup sizes a kernel may run with: VK_EXT_subgroup_size_control's range. */
static void subgroup_range(txlm_vk *vk)
{
    vk->coopmat.min_sg = vk->coopmat.max_sg = vk->subgroup_size;
    VkPhysicalDeviceSubgroupSizeControlProperties sc = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sc};
    vkGetPhysicalDeviceProperties2(vk->phys, &p2);
    if (sc.minSubgroupSize && sc.minSubgroupSize < vk->coopmat.min_sg) vk->coopmat.min_sg = sc.minSubgroupSize;
    if (sc.maxSubgroupSize > vk->coopmat.max_sg) vk->coopmat.max_sg = sc.maxSubgroupSize;
}

/* Fragments a subgroup keeps with shape (m, n): the tile's fragments over
 * the fewest subgroups 128 invocations make; 0 where that is too many. */
static uint32_t fragments_each(const txlm_vk *vk, uint32_t m, uint32_t n)
{
    uint32_t fewest = CM_INVOCATIONS / vk->coopmat.max_sg, frags = (CM_TILE / m) * (CM_TILE / n);
    uint32_t fps = (frags + fewest - 1) / fewest;
    return fps <= CM_MAX_FPS ? fps : 0;
}

/* The largest f16 x f16 + f32 shape of subgroup scope whose sides divide
 * 16 (the kernels' tiles). */
static int choose_shape(txlm_vk *vk, const cm_properties *p, uint32_t n)
{
    uint64_t best = 0;
    for (uint32_t i = 0; i < n; i++) {
        const cm_properties *c = &p[i];
        if (c->AType != COMPONENT_FLOAT16 || c->BType != COMPONENT_FLOAT16 || c->CType != COMPONENT_FLOAT32 ||
            c->ResultType != COMPONENT_FLOAT32 || c->scope != SCOPE_SUBGROUP)
            continue;
        if (!c->MSize || !c->NSize || !c->KSize || CM_SIDE % c->MSize || CM_SIDE % c->NSize || CM_SIDE % c->KSize)
            continue;
        uint32_t fps = fragments_each(vk, c->MSize, c->NSize);
        uint64_t size = (uint64_t)c->MSize * c->NSize * c->KSize;
        if (!fps || size <= best) continue;
        best = size;
        vk->coopmat.m = c->MSize, vk->coopmat.n = c->NSize, vk->coopmat.k = c->KSize;
        vk->coopmat.fps = fps;
    }
    return best > 0;
}

/* The features the kernels need: the extension's, f16 arithmetic, the
 * Vulkan memory model (GL_KHR_cooperative_matrix compiles to it) with
 * device scope, which the atomics of other kernels then use, and full
 * subgroups (VK_EXT_subgroup_size_control): a SPIR-V 1.5 module (Vulkan
 * 1.2) with cooperative matrices must be run with them. Read from what
 * the device has enabled (vk->enabled: txlm's own device enables what it
 * offers; a program's device what the program asked for). */
static const char *features_missing(const txlm_vk *vk)
{
    const txlm_vk_enabled *e = &vk->enabled;
    if (!e->cooperative_matrix) return "the cooperativeMatrix feature is off";
    if (!e->full_subgroups) return "no full subgroups (computeFullSubgroups)";
    /* the memory model enabled, the other kernels' device-scope atomics need its device scope */
    if (!e->float16 || !e->memory_model || !e->memory_model_device)
        return "no shaderFloat16 or Vulkan memory model with device scope";
    cm_device_properties dp = {.sType = ST_CM_DEVICE_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &dp};
    vkGetPhysicalDeviceProperties2(vk->phys, &p2);
    if (!(dp.cooperativeMatrixSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT)) return "not in compute shaders";
    return NULL;
}

/* lavapipe lowers a matrix to vectors of LP_NATIVE_VECTOR_WIDTH / 32 lanes
 * built for its 8x8 shape in subgroups of 8: Mesa 26.2 crashes compiling
 * any matrix operation at subgroups of 16 (width 512); at 4 it turns the
 * feature off itself */
static int lavapipe_other_width(const txlm_vk *vk)
{
    VkPhysicalDeviceDriverProperties dp = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &dp};
    vkGetPhysicalDeviceProperties2(vk->phys, &p2);
    return dp.driverID == VK_DRIVER_ID_MESA_LLVMPIPE && vk->subgroup_size != 8;
}

static const char *probe(txlm_vk *vk)
{
    if (vk->env.coopmat == 0) return "TXLM_COOPMAT=0";
    if (vk->props.apiVersion < VK_API_VERSION_1_2 || !vk->enabled.ext_cooperative_matrix) return "no " CM_EXT;
    if (!vk->enabled.ext_subgroup_size_control) return "no " SSC_EXT;
    if (vk->validation && validation_layer_version() < LAYER_KNOWS_CM)
        return "the validation layer predates " CM_EXT;
    const char *missing = features_missing(vk);
    if (missing) return missing;
    if (lavapipe_other_width(vk)) return "lavapipe's matrices work in subgroups of 8 only";
    cm_list_fn list = (cm_list_fn)vkGetInstanceProcAddr(vk->instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
    uint32_t n = 0;
    if (!list || list(vk->phys, &n, NULL) != VK_SUCCESS || n == 0 || n > 256) return "no shapes listed";
    cm_properties *p = calloc(n, sizeof *p);
    if (!p) return "out of host memory";
    for (uint32_t i = 0; i < n; i++) p[i] = (cm_properties){.sType = ST_CM_PROPERTIES};
    subgroup_range(vk);
    int ok = vk->coopmat.max_sg && vk->coopmat.max_sg <= CM_INVOCATIONS && list(vk->phys, &n, p) == VK_SUCCESS &&
             choose_shape(vk, p, n);
    free(p);
    if (!ok) return "no f16 shape of subgroup scope whose sides divide 16";
    vk->coopmat.nsub = CM_INVOCATIONS / vk->coopmat.min_sg;
    /* linear_cm's staged tiles (rows of 20 f16 pairs) and its subgroups' patches of output */
    uint32_t shared = 2 * CM_TILE * 20 * 4 + vk->coopmat.nsub * vk->coopmat.m * vk->coopmat.n * 4;
    if (shared < CM_ATTN_SHARED) shared = CM_ATTN_SHARED;
    if (shared > vk->props.limits.maxComputeSharedMemorySize) return "too little workgroup memory";
    return NULL;
}

void txlm_coopmat_probe(txlm_vk *vk)
{
    vk->coopmat.off_why = probe(vk);
    vk->coopmat.on = vk->coopmat.off_why == NULL;
}

void txlm_coopmat_enable(const txlm_vk *vk, txlm_coopmat_enables *e, VkDeviceCreateInfo *ci, const char **exts,
                         uint32_t *n_ext)
{
    memset(e, 0, sizeof *e);
    if (!vk->coopmat.on) return;
    e->cm.sType = ST_CM_FEATURES;
    e->cm.cooperativeMatrix = VK_TRUE;
    e->cm.pNext = (void *)ci->pNext;
    e->sc = (VkPhysicalDeviceSubgroupSizeControlFeatures){
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES, .pNext = &e->cm, .computeFullSubgroups = VK_TRUE};
    e->v12 = (VkPhysicalDeviceVulkan12Features){.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                                .pNext = &e->sc, .shaderFloat16 = VK_TRUE, .vulkanMemoryModel = VK_TRUE,
                                                .vulkanMemoryModelDeviceScope = VK_TRUE};
    ci->pNext = &e->v12;
    exts[(*n_ext)++] = CM_EXT;
    exts[(*n_ext)++] = SSC_EXT;
}

const VkSpecializationInfo *txlm_coopmat_spec_info(const txlm_vk *vk, txlm_coopmat_spec *s)
{
    const txlm_vk_coopmat *c = &vk->coopmat;
    s->values[TXLM_CM_SPEC_M] = c->m, s->values[TXLM_CM_SPEC_N] = c->n, s->values[TXLM_CM_SPEC_K] = c->k;
    s->values[TXLM_CM_SPEC_FPS] = c->fps, s->values[TXLM_CM_SPEC_NSUB] = c->nsub;
    for (uint32_t i = 0; i < TXLM_CM_SPECS; i++)
        s->entries[i] = (VkSpecializationMapEntry){.constantID = i, .offset = i * 4, .size = 4};
    s->info = (VkSpecializationInfo){.mapEntryCount = TXLM_CM_SPECS, .pMapEntries = s->entries,
                                     .dataSize = sizeof s->values, .pData = s->values};
    return &s->info;
}
