#include "kernels.h"

#include <string.h>

#include "attn_pv.spv.h"
#include "attn_scores.spv.h"
#include "attn_terms.spv.h"
#include "attn_fused.spv.h"
#include "dtype.h"
#include "gather_f16.spv.h"
#include "gather_f32.spv.h"
#include "gather_q4_0.spv.h"
#include "gather_q8_0.spv.h"
#include "gemv_f32.spv.h"
#include "gemv_f16.spv.h"
#include "gemv_q8_0.spv.h"
#include "gemv_q4_0.spv.h"
#include "gemv_sg_f32.spv.h"
#include "gemv_sg_f16.spv.h"
#include "gemv_sg_q8_0.spv.h"
#include "gemv_sg_q4_0.spv.h"
#include "gemv_wide_f32.spv.h"
#include "gemv_wide_f16.spv.h"
#include "gemv_wide_q8_0.spv.h"
#include "gemv_wide_q4_0.spv.h"
#include "gemv_wide_sg_f32.spv.h"
#include "gemv_wide_sg_f16.spv.h"
#include "gemv_wide_sg_q8_0.spv.h"
#include "gemv_wide_sg_q4_0.spv.h"
#include "layernorm.spv.h"
#include "linear_f16.spv.h"
#include "linear_f32.spv.h"
#include "linear_q4_0.spv.h"
#include "linear_q8_0.spv.h"
#include "linear_tiled_f16.spv.h"
#include "linear_tiled_f32.spv.h"
#include "linear_tiled_q4_0.spv.h"
#include "linear_tiled_q8_0.spv.h"
#include "linear_wide_f16.spv.h"
#include "linear_wide_f32.spv.h"
#include "linear_wide_q4_0.spv.h"
#include "linear_wide_q8_0.spv.h"
#include "logsoftmax.spv.h"
#include "softmax.spv.h"
#include "attn_split.spv.h"
#include "attn_merge.spv.h"
#include "gemv_q8.spv.h"
#include "attn_pair.spv.h"
#include "gemv_q8_sg.spv.h"
#include "gemv_tex_f32.spv.h"
#include "attn_split_tex.spv.h"
#include "attn_split_tex64.spv.h"
#include "attn_split_sg64.spv.h"
#include "logsoftmax_tex.spv.h"
#include "attn_pair_tex64.spv.h"
#include "attn_pair_tex.spv.h"
#include "gemv_tex_f16.spv.h"
#include "gemv_tex_q8_0.spv.h"
#include "gemv_tex_q4_0.spv.h"
#include "linear_tex_f32.spv.h"
#include "linear_tex_f16.spv.h"
#include "linear_tex_q8_0.spv.h"
#include "linear_tex_q4_0.spv.h"
#include "linear_tex8_f32.spv.h"
#include "linear_tex8_f16.spv.h"
#include "linear_tex8_q8_0.spv.h"
#include "linear_tex8_q4_0.spv.h"
#include "linear_texsg_f32.spv.h"
#include "linear_texsg_f16.spv.h"
#include "linear_texsg_q8_0.spv.h"
#include "linear_texsg_q4_0.spv.h"
#include "linear_texsg8_f32.spv.h"
#include "linear_texsg8_f16.spv.h"
#include "linear_texsg8_q8_0.spv.h"
#include "linear_texsg8_q4_0.spv.h"
#include "attn_pair_texsg64.spv.h"
#include "layernorm_tex.spv.h"
#include "attn_pair_tex48.spv.h"
#include "attn_split_tex48.spv.h"
#include "linear_smem_f32.spv.h"
#include "linear_smem_f16.spv.h"
#include "linear_smem_q8_0.spv.h"
#include "linear_smem_q4_0.spv.h"
#include "gemv_gpu_f32.spv.h"
#include "gemv_gpu_f16.spv.h"
#include "gemv_gpu_q8_0.spv.h"
#include "gemv_gpu_q4_0.spv.h"
#include "gemv_tex_q8_0_long.spv.h"
#include "gemv_tex_ln_f32.spv.h"
#include "gemv_tex_ln_f16.spv.h"
#include "gemv_tex_ln_q8_0.spv.h"
#include "gemv_tex_ln_q4_0.spv.h"
#include "gemv_tex_q8_0_long_ln.spv.h"
#include "attn_tile.spv.h"

static const struct {
    const char *name;
    const uint32_t *code;
    size_t size;
    uint32_t n_bindings;
    uint32_t texel_mask;
    int step;
} table[TXLM_K_COUNT] = {
/* mask: the bindings read as texels (KT: X and W; KA: attention's 0-4);
 * the S forms add the step binding (shaders/step.glsl): every kernel that
 * can write a segment's keys and values or read them from the ring */
#define KMS(id, nm, nb, mask, st) [id] = {#nm, txlm_spv_##nm, sizeof txlm_spv_##nm, nb, mask, st}
#define KM(id, nm, nb, mask) KMS(id, nm, nb, mask, 0)
#define K(id, nm, nb) KM(id, nm, nb, 0)
#define KS(id, nm, nb) KMS(id, nm, nb, 0, 1)
#define KTS(id, nm, nb) KMS(id, nm, nb, 0x3, 1)
#define KA(id, nm) KMS(id, nm, 6, 0x1f, 1)
    KS(TXLM_K_LINEAR, linear_f32, 5),
    KS(TXLM_K_LINEAR_F16, linear_f16, 5),
    KS(TXLM_K_LINEAR_Q8_0, linear_q8_0, 5),
    KS(TXLM_K_LINEAR_Q4_0, linear_q4_0, 5),
    KS(TXLM_K_LINEAR_TILED, linear_tiled_f32, 5),
    KS(TXLM_K_LINEAR_TILED_F16, linear_tiled_f16, 5),
    KS(TXLM_K_LINEAR_TILED_Q8_0, linear_tiled_q8_0, 5),
    KS(TXLM_K_LINEAR_TILED_Q4_0, linear_tiled_q4_0, 5),
    KS(TXLM_K_LINEAR_WIDE, linear_wide_f32, 5),
    KS(TXLM_K_LINEAR_WIDE_F16, linear_wide_f16, 5),
    KS(TXLM_K_LINEAR_WIDE_Q8_0, linear_wide_q8_0, 5),
    KS(TXLM_K_LINEAR_WIDE_Q4_0, linear_wide_q4_0, 5),
    KS(TXLM_K_GEMV, gemv_f32, 5),
    KS(TXLM_K_GEMV_F16, gemv_f16, 5),
    KS(TXLM_K_GEMV_Q8_0, gemv_q8_0, 5),
    KS(TXLM_K_GEMV_Q4_0, gemv_q4_0, 5),
    KS(TXLM_K_GEMV_SG, gemv_sg_f32, 5),
    KS(TXLM_K_GEMV_SG_F16, gemv_sg_f16, 5),
    KS(TXLM_K_GEMV_SG_Q8_0, gemv_sg_q8_0, 5),
    KS(TXLM_K_GEMV_SG_Q4_0, gemv_sg_q4_0, 5),
    KS(TXLM_K_GEMV_WIDE, gemv_wide_f32, 5),
    KS(TXLM_K_GEMV_WIDE_F16, gemv_wide_f16, 5),
    KS(TXLM_K_GEMV_WIDE_Q8_0, gemv_wide_q8_0, 5),
    KS(TXLM_K_GEMV_WIDE_Q4_0, gemv_wide_q4_0, 5),
    KS(TXLM_K_GEMV_WIDE_SG, gemv_wide_sg_f32, 5),
    KS(TXLM_K_GEMV_WIDE_SG_F16, gemv_wide_sg_f16, 5),
    KS(TXLM_K_GEMV_WIDE_SG_Q8_0, gemv_wide_sg_q8_0, 5),
    KS(TXLM_K_GEMV_WIDE_SG_Q4_0, gemv_wide_sg_q4_0, 5),
    K(TXLM_K_GATHER, gather_f32, 3),
    K(TXLM_K_GATHER_F16, gather_f16, 3),
    K(TXLM_K_GATHER_Q8_0, gather_q8_0, 3),
    K(TXLM_K_GATHER_Q4_0, gather_q4_0, 3),
    K(TXLM_K_LAYERNORM, layernorm, 5),
    KS(TXLM_K_ATTN_SCORES, attn_scores, 6),
    KS(TXLM_K_ATTN_TERMS, attn_terms, 6),
    KS(TXLM_K_ATTN_FUSED, attn_fused, 6),
    K(TXLM_K_SOFTMAX, softmax, 1),
    KS(TXLM_K_ATTN_PV, attn_pv, 3),
    K(TXLM_K_LOGSOFTMAX, logsoftmax, 5),
    KS(TXLM_K_ATTN_SPLIT, attn_split, 6),
    K(TXLM_K_ATTN_MERGE, attn_merge, 2),
    KS(TXLM_K_GEMV_Q8, gemv_q8, 5),
    KS(TXLM_K_GEMV_Q8_SG, gemv_q8_sg, 5),
    KS(TXLM_K_ATTN_PAIR, attn_pair, 6),
    KTS(TXLM_K_GEMV_TEX, gemv_tex_f32, 5),
    KTS(TXLM_K_GEMV_TEX_F16, gemv_tex_f16, 5),
    KTS(TXLM_K_GEMV_TEX_Q8_0, gemv_tex_q8_0, 5),
    KTS(TXLM_K_GEMV_TEX_Q4_0, gemv_tex_q4_0, 5),
    KTS(TXLM_K_LINEAR_TEX, linear_tex_f32, 5),
    KTS(TXLM_K_LINEAR_TEX_F16, linear_tex_f16, 5),
    KTS(TXLM_K_LINEAR_TEX_Q8_0, linear_tex_q8_0, 5),
    KTS(TXLM_K_LINEAR_TEX_Q4_0, linear_tex_q4_0, 5),
    KTS(TXLM_K_LINEAR_TEX8, linear_tex8_f32, 5),
    KTS(TXLM_K_LINEAR_TEX8_F16, linear_tex8_f16, 5),
    KTS(TXLM_K_LINEAR_TEX8_Q8_0, linear_tex8_q8_0, 5),
    KTS(TXLM_K_LINEAR_TEX8_Q4_0, linear_tex8_q4_0, 5),
    KTS(TXLM_K_LINEAR_TEXSG, linear_texsg_f32, 5),
    KTS(TXLM_K_LINEAR_TEXSG_F16, linear_texsg_f16, 5),
    KTS(TXLM_K_LINEAR_TEXSG_Q8_0, linear_texsg_q8_0, 5),
    KTS(TXLM_K_LINEAR_TEXSG_Q4_0, linear_texsg_q4_0, 5),
    KTS(TXLM_K_LINEAR_TEXSG8, linear_texsg8_f32, 5),
    KTS(TXLM_K_LINEAR_TEXSG8_F16, linear_texsg8_f16, 5),
    KTS(TXLM_K_LINEAR_TEXSG8_Q8_0, linear_texsg8_q8_0, 5),
    KTS(TXLM_K_LINEAR_TEXSG8_Q4_0, linear_texsg8_q4_0, 5),
    KA(TXLM_K_ATTN_PAIR_TEXSG64, attn_pair_texsg64),
    KM(TXLM_K_LAYERNORM_TEX, layernorm_tex, 5, 0xf),
    KA(TXLM_K_ATTN_PAIR_TEX48, attn_pair_tex48),
    KA(TXLM_K_ATTN_SPLIT_TEX48, attn_split_tex48),
    KS(TXLM_K_LINEAR_SMEM, linear_smem_f32, 5),
    KS(TXLM_K_LINEAR_SMEM_F16, linear_smem_f16, 5),
    KS(TXLM_K_LINEAR_SMEM_Q8_0, linear_smem_q8_0, 5),
    KS(TXLM_K_LINEAR_SMEM_Q4_0, linear_smem_q4_0, 5),
    KS(TXLM_K_GEMV_GPU, gemv_gpu_f32, 5),
    KS(TXLM_K_GEMV_GPU_F16, gemv_gpu_f16, 5),
    KS(TXLM_K_GEMV_GPU_Q8_0, gemv_gpu_q8_0, 5),
    KS(TXLM_K_GEMV_GPU_Q4_0, gemv_gpu_q4_0, 5),
    KTS(TXLM_K_GEMV_TEX_Q8_0_LONG, gemv_tex_q8_0_long, 5),
    KTS(TXLM_K_GEMV_TEX_LN, gemv_tex_ln_f32, 8),
    KTS(TXLM_K_GEMV_TEX_LN_F16, gemv_tex_ln_f16, 8),
    KTS(TXLM_K_GEMV_TEX_LN_Q8_0, gemv_tex_ln_q8_0, 8),
    KTS(TXLM_K_GEMV_TEX_LN_Q4_0, gemv_tex_ln_q4_0, 8),
    KTS(TXLM_K_GEMV_TEX_Q8_0_LONG_LN, gemv_tex_q8_0_long_ln, 8),
    /* queries, keys|values, position keys and the biases read as texels */
    KA(TXLM_K_ATTN_SPLIT_TEX, attn_split_tex),
    KA(TXLM_K_ATTN_PAIR_TEX, attn_pair_tex),
    KA(TXLM_K_ATTN_SPLIT_TEX64, attn_split_tex64),
    KA(TXLM_K_ATTN_PAIR_TEX64, attn_pair_tex64),
    KMS(TXLM_K_ATTN_SPLIT_SG64, attn_split_sg64, 8, 0x1f, 1),
    KM(TXLM_K_LOGSOFTMAX_TEX, logsoftmax_tex, 5, 0x1),
    KS(TXLM_K_ATTN_TILE, attn_tile, 6),
#undef KA
#undef KTS
#undef KS
#undef KMS
#undef KT
#undef K
#undef KM
};

txlm_kernel_id txlm_kernel_for_dtype(txlm_kernel_id base, uint32_t dtype)
{
    switch (dtype) {
    case TXLM_DT_F16: return base + 1;
    case TXLM_DT_Q8_0: return base + 2;
    case TXLM_DT_Q4_0: return base + 3;
    default: return base;
    }
}

/* The descriptor layout, pipeline layout and pipeline of kernel id. */
static int create_one(txlm_vk *vk, VkPipelineCache cache, txlm_kernel *k, uint32_t id, txlm_err *err)
{
    VkDescriptorSetLayoutBinding b[TXLM_MAX_BINDINGS];
    for (uint32_t i = 0; i < k->n_bindings + (k->step != 0); i++)
        b[i] = (VkDescriptorSetLayoutBinding){.binding = i < k->n_bindings ? i : TXLM_STEP_BINDING,
                                              .descriptorType = (k->texel_mask >> i & 1) ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
                                                                                          : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                              .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                           .bindingCount = k->n_bindings + (k->step != 0), .pBindings = b};
    VkResult r = vkCreateDescriptorSetLayout(vk->device, &dci, NULL, &k->dsl);
    if (r != VK_SUCCESS) return txlm_vk_fail(err, r, "vkCreateDescriptorSetLayout");
    VkPushConstantRange pc = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = TXLM_PUSH_BYTES};
    VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                      .pSetLayouts = &k->dsl, .pushConstantRangeCount = 1, .pPushConstantRanges = &pc};
    r = vkCreatePipelineLayout(vk->device, &lci, NULL, &k->layout);
    if (r != VK_SUCCESS) return txlm_vk_fail(err, r, "vkCreatePipelineLayout");
    VkShaderModuleCreateInfo mci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = table[id].size,
                                    .pCode = table[id].code};
    VkShaderModule mod;
    r = vkCreateShaderModule(vk->device, &mci, NULL, &mod);
    if (r != VK_SUCCESS) return txlm_vk_fail(err, r, "vkCreateShaderModule");
    VkComputePipelineCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = mod, .pName = "main"},
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

int txlm_kernel_usable(const txlm_vk *vk, uint32_t id)
{
    int wide = (id >= TXLM_K_LINEAR_WIDE && id <= TXLM_K_LINEAR_WIDE_Q4_0) ||
               (id >= TXLM_K_GEMV_WIDE && id <= TXLM_K_GEMV_WIDE_SG_Q4_0) || id == TXLM_K_GEMV_Q8 ||
               id == TXLM_K_GEMV_Q8_SG;
    int sg = (id >= TXLM_K_GEMV_SG && id <= TXLM_K_GEMV_SG_Q4_0) ||
             (id >= TXLM_K_GEMV_WIDE_SG && id <= TXLM_K_GEMV_WIDE_SG_Q4_0) || id == TXLM_K_GEMV_Q8_SG ||
             id == TXLM_K_ATTN_SPLIT_SG64 || id == TXLM_K_LAYERNORM_TEX ||
             (id >= TXLM_K_GEMV_TEX_LN && id <= TXLM_K_GEMV_TEX_Q8_0_LONG_LN);
    if (wide && !vk->int64) return 0;
    /* built whenever the format allows, so tests can run them on any device */
    if (table[id].texel_mask && !vk->texel_ok) return 0;
    /* a workgroup of 8 must fit in one subgroup for subgroupAdd to sum it */
    if (sg && !(vk->subgroup_arith && vk->subgroup_size >= 8)) return 0;
    /* its lanes of one head sum their parts by xor shuffles */
    if (id == TXLM_K_ATTN_SPLIT_SG64 && !vk->subgroup_shuffle) return 0;
    /* a workgroup of 8 that must be exactly one subgroup */
    if ((id == TXLM_K_LAYERNORM_TEX || (id >= TXLM_K_GEMV_TEX_LN && id <= TXLM_K_GEMV_TEX_Q8_0_LONG_LN)) &&
        vk->subgroup_size != 8)
        return 0;
    /* the shuffle kernels' workgroup of 8 is one subgroup of 8 */
    if (id >= TXLM_K_LINEAR_TEXSG && id <= TXLM_K_ATTN_PAIR_TEXSG64 && !vk->subgroup_shuffle8) return 0;
    /* 16x16 invocations and 16 KiB of workgroup memory (the spec promises 128 and 16 KiB) */
    const VkPhysicalDeviceLimits *lim = &vk->props.limits;
    if (id >= TXLM_K_LINEAR_SMEM && id <= TXLM_K_LINEAR_SMEM_Q4_0 &&
        (lim->maxComputeWorkGroupInvocations < 256 || lim->maxComputeWorkGroupSize[0] < 16 ||
         lim->maxComputeWorkGroupSize[1] < 16 || lim->maxComputeSharedMemorySize < 16384))
        return 0;
    /* 256 invocations and 26096 bytes of workgroup memory (shaders/attn_tile.comp) */
    if (id == TXLM_K_ATTN_TILE && (lim->maxComputeWorkGroupInvocations < 256 || lim->maxComputeWorkGroupSize[0] < 256 ||
                                   lim->maxComputeSharedMemorySize < 26096))
        return 0;
    return 1;
}

int txlm_kernels_init(txlm_vk *vk, txlm_kernels *ks, txlm_err *err)
{
    (void)err;
    memset(ks, 0, sizeof *ks);
    ks->vk = vk;
    pthread_mutex_init(&ks->lock, NULL);
    for (uint32_t i = 0; i < TXLM_K_COUNT; i++) {
        atomic_init(&ks->made[i], 0);
        ks->k[i] = (txlm_kernel){.name = table[i].name, .n_bindings = table[i].n_bindings,
                                 .texel_mask = table[i].texel_mask, .step = table[i].step};
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
