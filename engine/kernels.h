/* The compute kernels: one SPIR-V module per shaders/NAME.comp, its
 * descriptor layout (storage buffers only) and its pipeline. */
#ifndef TXLM_KERNELS_H
#define TXLM_KERNELS_H

#include "vk_context.h"

typedef enum txlm_kernel_id {
    TXLM_K_LINEAR,
    TXLM_K_GATHER,
    TXLM_K_LAYERNORM,
    TXLM_K_ATTN_SCORES,
    TXLM_K_SOFTMAX,
    TXLM_K_ATTN_PV,
    TXLM_K_LOGSOFTMAX,
    TXLM_K_COUNT
} txlm_kernel_id;

#define TXLM_MAX_BINDINGS 6
#define TXLM_PUSH_BYTES 128

typedef struct txlm_kernel {
    const char *name;
    uint32_t n_bindings;
    VkDescriptorSetLayout dsl;
    VkPipelineLayout layout;
    VkPipeline pipeline;
} txlm_kernel;

typedef struct txlm_kernels {
    txlm_kernel k[TXLM_K_COUNT];
} txlm_kernels;

int txlm_kernels_init(txlm_vk *vk, txlm_kernels *ks, txlm_err *err);
void txlm_kernels_destroy(txlm_vk *vk, txlm_kernels *ks);

#endif
