#include "kernels.h"

#include <string.h>

#include "coopmat.h"
#include "dtype.h"

txlm_kernel_id txlm_kernel_of(txlm_kernel_family f, uint32_t dtype)
{
    /* the families' columns: f32, f16, q8_0, q4_0 (kernels.h) */
    uint32_t col = dtype == TXLM_DT_F16 ? 1 : dtype == TXLM_DT_Q8_0 ? 2 : dtype == TXLM_DT_Q4_0 ? 3 : 0;
    return f < TXLM_KF_COUNT ? txlm_kernel_families[f][col] : TXLM_K_COUNT;
}

uint32_t txlm_kernel_bindings(const txlm_kernel_desc *d, uint32_t *b)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < d->n_bindings; i++) b[n++] = i;
    for (uint32_t s = 1; s < d->slots; s++) b[n++] = TXLM_SLOT_BINDING + s - 1;
    if (d->step) b[n++] = TXLM_STEP_BINDING;
    return n;
}

int txlm_kernel_texel(const txlm_kernel_desc *d, uint32_t binding)
{
    if (binding >= TXLM_SLOT_BINDING) binding = 1; /* binding 1's further slots */
    return binding < TXLM_STEP_BINDING && (d->texel_mask >> binding & 1);
}

/* The descriptor layout, pipeline layout and pipeline of kernel id. */
static int create_one(txlm_vk *vk, VkPipelineCache cache, txlm_kernel *k, uint32_t id, txlm_err *err)
{
    VkDescriptorSetLayoutBinding b[TXLM_MAX_BINDINGS];
    const txlm_kernel_desc *d = &txlm_kernel_descs[id];
    uint32_t at[TXLM_MAX_BINDINGS], n = txlm_kernel_bindings(d, at);
    for (uint32_t i = 0; i < n; i++)
        b[i] = (VkDescriptorSetLayoutBinding){.binding = at[i],
                                              .descriptorType = txlm_kernel_texel(d, at[i]) ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
                                                                                         : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                              .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                           .bindingCount = n, .pBindings = b};
    VkResult r = vkCreateDescriptorSetLayout(vk->device, &dci, NULL, &k->dsl);
    if (r != VK_SUCCESS) return txlm_vk_fail(err, r, "vkCreateDescriptorSetLayout");
    VkPushConstantRange pc = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = TXLM_PUSH_BYTES};
    VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                      .pSetLayouts = &k->dsl, .pushConstantRangeCount = 1, .pPushConstantRanges = &pc};
    r = vkCreatePipelineLayout(vk->device, &lci, NULL, &k->layout);
    if (r != VK_SUCCESS) return txlm_vk_fail(err, r, "vkCreatePipelineLayout");
    VkShaderModuleCreateInfo mci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                    .codeSize = txlm_kernel_descs[id].size, .pCode = txlm_kernel_descs[id].code};
    VkShaderModule mod;
    r = vkCreateShaderModule(vk->device, &mci, NULL, &mod);
    if (r != VK_SUCCESS) return txlm_vk_fail(err, r, "vkCreateShaderModule");
    /* the matrix-unit kernels take the device's fragment shape */
    txlm_coopmat_spec spec;
    VkComputePipelineCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .flags = d->needs & TXLM_NEED_COOPMAT ? VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT : 0,
                  .module = mod, .pName = "main",
                  .pSpecializationInfo = d->needs & TXLM_NEED_COOPMAT ? txlm_coopmat_spec_info(vk, &spec) : NULL},
        .layout = k->layout,
    };
    r = vkCreateComputePipelines(vk->device, cache, 1, &pci, NULL, &k->pipeline);
    vkDestroyShaderModule(vk->device, mod, NULL);
    if (r != VK_SUCCESS) {
        txlm_vk_fail(err, r, "vkCreateComputePipelines");
        return txlm_fail_prefix(err, "kernel %s: ", k->name);
    }
    return 0;
}

static void destroy_one(txlm_vk *vk, txlm_kernel *k)
{
    if (k->pipeline) vkDestroyPipeline(vk->device, k->pipeline, NULL);
    if (k->layout) vkDestroyPipelineLayout(vk->device, k->layout, NULL);
    if (k->dsl) vkDestroyDescriptorSetLayout(vk->device, k->dsl, NULL);
    k->pipeline = VK_NULL_HANDLE;
    k->layout = VK_NULL_HANDLE;
    k->dsl = VK_NULL_HANDLE;
}

const char *txlm_kernel_unusable(const txlm_vk *vk, uint32_t id)
{
    if (id >= TXLM_K_COUNT) return "no such variant";
    if (txlm_debug_forbidden(vk->debug, id)) return "forbidden by a test";
    const txlm_kernel_desc *d = &txlm_kernel_descs[id];
    const VkPhysicalDeviceLimits *lim = &vk->props.limits;
    if (!d->code) return "not in this build";
    if ((d->needs & TXLM_NEED_COOPMAT) && !vk->coopmat.on) return "no cooperative matrices";
    /* built whenever the format allows, so tests can run them on any device */
    if (d->texel_mask && !vk->texel_ok) return "no RGBA32_UINT texel buffers";
    if ((d->needs & TXLM_NEED_INT64) && !vk->int64) return "no shaderInt64";
    /* a workgroup of 8 must fit in one subgroup for subgroupAdd to sum it */
    if ((d->needs & TXLM_NEED_SUBGROUP) && !(vk->subgroup_arith && vk->subgroup_size >= 8))
        return "no subgroup arithmetic over 8 lanes";
    if ((d->needs & TXLM_NEED_SHUFFLE) && !vk->subgroup_shuffle) return "no subgroup shuffles";
    if ((d->needs & TXLM_NEED_SHUFFLE8) && !vk->subgroup_shuffle8) return "no shuffles in subgroups of 8";
    /* a workgroup of 8 that must be exactly one subgroup */
    if ((d->needs & TXLM_NEED_SG8) && vk->subgroup_size != 8) return "subgroups are not 8 lanes";
    /* the spec promises 128 invocations and 16 KiB */
    if ((d->needs & TXLM_NEED_SMEM) &&
        (lim->maxComputeWorkGroupInvocations < 256 || lim->maxComputeWorkGroupSize[0] < 16 ||
         lim->maxComputeWorkGroupSize[1] < 16 || lim->maxComputeSharedMemorySize < 16384))
        return "no 16x16 workgroups with 16 KiB";
    /* the spec promises 4 storage buffers and 16 texel buffers a stage:
     * the kernels of several streams have 7 more */
    uint32_t at[TXLM_MAX_BINDINGS], all = txlm_kernel_bindings(d, at), texel = 0;
    for (uint32_t i = 0; i < all; i++) texel += (uint32_t)txlm_kernel_texel(d, at[i]);
    uint32_t storage = all - texel;
    if (storage > lim->maxPerStageDescriptorStorageBuffers || texel > lim->maxPerStageDescriptorSampledImages ||
        storage + texel > lim->maxPerStageResources)
        return "too many bindings a stage";
    if ((d->needs & TXLM_NEED_WG256) && (lim->maxComputeWorkGroupInvocations < 256 ||
                                         lim->maxComputeWorkGroupSize[0] < 256 || lim->maxComputeSharedMemorySize < 26096))
        return "no 256-lane workgroups with 26096 bytes";
    return NULL;
}

int txlm_kernel_usable(const txlm_vk *vk, uint32_t id) { return txlm_kernel_unusable(vk, id) == NULL; }

int txlm_kernels_init(txlm_vk *vk, txlm_kernels *ks, txlm_err *err)
{
    (void)err;
    memset(ks, 0, sizeof *ks);
    ks->vk = vk;
    pthread_mutex_init(&ks->lock, NULL);
    for (uint32_t i = 0; i < TXLM_K_COUNT; i++) {
        atomic_init(&ks->made[i], 0);
        const txlm_kernel_desc *d = &txlm_kernel_descs[i];
        ks->k[i] = (txlm_kernel){.name = d->name, .n_bindings = d->n_bindings, .texel_mask = d->texel_mask, .step = d->step};
    }
    txlm_pipeline_cache_open(vk, &ks->cache);
    return 0;
}

const txlm_kernel *txlm_kernel_get(txlm_kernels *ks, txlm_kernel_id id, txlm_err *err)
{
    if (id >= TXLM_K_COUNT) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "internal: no kernel %u", (unsigned)id), NULL;
    txlm_kernel *k = &ks->k[id];
    if (atomic_load_explicit(&ks->made[id], memory_order_acquire)) return k;
    if (!txlm_kernel_usable(ks->vk, id))
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "internal: kernel %s cannot run on this device", k->name), NULL;
    pthread_mutex_lock(&ks->lock);
    int rc = 0;
    if (!atomic_load_explicit(&ks->made[id], memory_order_relaxed)) {
        rc = create_one(ks->vk, ks->cache.cache, k, id, err);
        if (rc) {
            destroy_one(ks->vk, k);
        } else {
            ks->n_made++;
            atomic_store_explicit(&ks->made[id], 1, memory_order_release);
        }
    }
    pthread_mutex_unlock(&ks->lock);
    return rc ? NULL : k;
}

void txlm_kernels_destroy(txlm_kernels *ks)
{
    if (!ks->vk) return;
    txlm_pipeline_cache_close(ks->vk, &ks->cache, ks->n_made > 0);
    for (uint32_t i = 0; i < TXLM_K_COUNT; i++) destroy_one(ks->vk, &ks->k[i]);
    pthread_mutex_destroy(&ks->lock);
    memset(ks, 0, sizeof *ks);
}
