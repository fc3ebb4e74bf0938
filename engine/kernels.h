/* The compute kernels: one SPIR-V module per shaders/NAME.comp, its
 * descriptor layout (storage buffers only) and its pipeline. */
#ifndef TXLM_KERNELS_H
#define TXLM_KERNELS_H

#include <stdatomic.h>

#include "pipeline_cache.h"
#include "vk_context.h"

/* Kernels that read weights come in one variant per weight dtype, in the
 * order f32, f16, q8_0, q4_0 (see txlm_kernel_for_dtype). */
typedef enum txlm_kernel_id {
    TXLM_K_LINEAR,
    TXLM_K_LINEAR_F16,
    TXLM_K_LINEAR_Q8_0,
    TXLM_K_LINEAR_Q4_0,
    TXLM_K_LINEAR_TILED,
    TXLM_K_LINEAR_TILED_F16,
    TXLM_K_LINEAR_TILED_Q8_0,
    TXLM_K_LINEAR_TILED_Q4_0,
    TXLM_K_LINEAR_WIDE, /* needs shaderInt64 */
    TXLM_K_LINEAR_WIDE_F16,
    TXLM_K_LINEAR_WIDE_Q8_0,
    TXLM_K_LINEAR_WIDE_Q4_0,
    TXLM_K_GEMV, /* x4 dtypes each: narrow loads, shared-memory sums */
    TXLM_K_GEMV_F16, TXLM_K_GEMV_Q8_0, TXLM_K_GEMV_Q4_0,
    TXLM_K_GEMV_SG, /* subgroup sums */
    TXLM_K_GEMV_SG_F16, TXLM_K_GEMV_SG_Q8_0, TXLM_K_GEMV_SG_Q4_0,
    TXLM_K_GEMV_WIDE, /* 256-bit loads (shaderInt64) */
    TXLM_K_GEMV_WIDE_F16, TXLM_K_GEMV_WIDE_Q8_0, TXLM_K_GEMV_WIDE_Q4_0,
    TXLM_K_GEMV_WIDE_SG,
    TXLM_K_GEMV_WIDE_SG_F16, TXLM_K_GEMV_WIDE_SG_Q8_0, TXLM_K_GEMV_WIDE_SG_Q4_0,
    TXLM_K_GATHER,
    TXLM_K_GATHER_F16,
    TXLM_K_GATHER_Q8_0,
    TXLM_K_GATHER_Q4_0,
    TXLM_K_LAYERNORM,
    TXLM_K_ATTN_SCORES,
    TXLM_K_ATTN_TERMS,
    TXLM_K_ATTN_FUSED,
    TXLM_K_SOFTMAX,
    TXLM_K_ATTN_PV,
    TXLM_K_LOGSOFTMAX,
    TXLM_K_ATTN_SPLIT, /* few queries: keys split into runs */
    TXLM_K_ATTN_MERGE,
    TXLM_K_GEMV_Q8, /* q8_0, a 32-weight block per load (shaderInt64) */
    TXLM_K_GEMV_Q8_SG,
    TXLM_K_ATTN_PAIR, /* two queries per invocation */
    /* Texel-buffer matrix kernels (vk->texel), x4 dtypes each: */
    TXLM_K_GEMV_TEX, TXLM_K_GEMV_TEX_F16, TXLM_K_GEMV_TEX_Q8_0, TXLM_K_GEMV_TEX_Q4_0, /* one row */
    TXLM_K_LINEAR_TEX, TXLM_K_LINEAR_TEX_F16, TXLM_K_LINEAR_TEX_Q8_0, TXLM_K_LINEAR_TEX_Q4_0, /* 32x16 per invocation */
    TXLM_K_LINEAR_TEX8, TXLM_K_LINEAR_TEX8_F16, TXLM_K_LINEAR_TEX8_Q8_0, TXLM_K_LINEAR_TEX8_Q4_0, /* 8x16: few rows */
    TXLM_K_ATTN_SPLIT_TEX, TXLM_K_ATTN_PAIR_TEX, /* attention reading through texel buffers */
    TXLM_K_ATTN_SPLIT_TEX64, TXLM_K_ATTN_PAIR_TEX64, /* the same built for dh = 64 (loops unrolled) */
    TXLM_K_LOGSOFTMAX_TEX, /* logits read as texels (rows padded to 4) */
    TXLM_K_ATTN_SPLIT_SG64, /* few queries, dh = 64: lanes share a key (texel reads, subgroup sums) */
    /* the texel matrix kernels with X's rows shared by subgroup shuffles (subgroups of 8) */
    TXLM_K_LINEAR_TEXSG, TXLM_K_LINEAR_TEXSG_F16, TXLM_K_LINEAR_TEXSG_Q8_0, TXLM_K_LINEAR_TEXSG_Q4_0, /* 32x8 */
    TXLM_K_LINEAR_TEXSG8, TXLM_K_LINEAR_TEXSG8_F16, TXLM_K_LINEAR_TEXSG8_Q8_0, TXLM_K_LINEAR_TEXSG8_Q4_0, /* 8x16 */
    TXLM_K_ATTN_PAIR_TEXSG64, /* paired attention, dh = 64, key and value rows shared by shuffles */
    TXLM_K_LAYERNORM_TEX, /* a row per subgroup of 8, texel reads, subgroupAdd */
    TXLM_K_ATTN_PAIR_TEX48, TXLM_K_ATTN_SPLIT_TEX48, /* built for dh = 48 (the padded base shape) */
    TXLM_K_LINEAR_SMEM, TXLM_K_LINEAR_SMEM_F16, TXLM_K_LINEAR_SMEM_Q8_0, TXLM_K_LINEAR_SMEM_Q4_0, /* GPUs: 64x64 tiles */
    TXLM_K_GEMV_GPU, TXLM_K_GEMV_GPU_F16, TXLM_K_GEMV_GPU_Q8_0, TXLM_K_GEMV_GPU_Q4_0, /* GPUs: one row, 64 lanes a row group */
    TXLM_K_GEMV_TEX_Q8_0_LONG, /* one row of q8_0 texels, rows of 4 superblocks and more: the next one touched ahead */
    /* the one-row texel kernels with the post-norm LayerNorm fused (txlm_op_linear_ln) */
    TXLM_K_GEMV_TEX_LN, TXLM_K_GEMV_TEX_LN_F16, TXLM_K_GEMV_TEX_LN_Q8_0, TXLM_K_GEMV_TEX_LN_Q4_0,
    TXLM_K_GEMV_TEX_Q8_0_LONG_LN,
    TXLM_K_ATTN_TILE, /* GPUs: 16 queries x 16-key tiles in workgroup memory, keys split into runs */
    TXLM_K_COUNT
} txlm_kernel_id;

#define TXLM_MAX_BINDINGS 9
/* The binding of the per-submission values (shaders/step.glsl) in the
 * kernels that have it; the recorder binds its step view there. */
#define TXLM_STEP_BINDING 8
#define TXLM_PUSH_BYTES 128

typedef struct txlm_kernel {
    const char *name;
    uint32_t n_bindings;
    uint32_t texel_mask; /* bit i: binding i is a uniform texel buffer (RGBA32_UINT view), else a storage buffer */
    int step;            /* binding TXLM_STEP_BINDING too (the recorder's step view) */
    VkDescriptorSetLayout dsl;
    VkPipelineLayout layout;
    VkPipeline pipeline;
} txlm_kernel;

/* Pipelines are made when a kernel is first dispatched, not when the
 * context is created: a run needs a dozen of the ~90 variants, and
 * compiling all of them took most of a start on lavapipe (seconds).
 * Sessions on several threads may meet a kernel first at once, hence
 * the lock; `made` lets every later dispatch skip it. */
typedef struct txlm_kernels {
    txlm_vk *vk;
    pthread_mutex_t lock;
    atomic_int made[TXLM_K_COUNT]; /* k[i]'s pipeline exists (written under lock) */
    uint32_t n_made;               /* pipelines made since init (under lock) */
    txlm_pipeline_cache cache;
    txlm_kernel k[TXLM_K_COUNT];   /* name and bindings from init; handles once made */
} txlm_kernels;

/* The variant of a weight-reading kernel (TXLM_K_LINEAR, _TILED or TXLM_K_GATHER) for a dtype. */
txlm_kernel_id txlm_kernel_for_dtype(txlm_kernel_id base, uint32_t dtype);

/* Whether this device can run kernel id (64-bit loads, subgroup sums, texel buffers). */
int txlm_kernel_usable(const txlm_vk *vk, uint32_t id);

/* Names and bindings of every kernel, and the pipeline cache; no pipeline yet. */
int txlm_kernels_init(txlm_vk *vk, txlm_kernels *ks, txlm_err *err);
/* Kernel id with its pipeline, made now if this is its first use; NULL
 * (and err) when it cannot be made or the device cannot run it. */
const txlm_kernel *txlm_kernel_get(txlm_kernels *ks, txlm_kernel_id id, txlm_err *err);
/* Destroys the pipelines, writing the pipeline cache back first if any was made. */
void txlm_kernels_destroy(txlm_kernels *ks);

#endif
