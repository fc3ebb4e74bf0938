/* The compute kernels: one SPIR-V module per shaders/NAME.comp, its
 * descriptor layout (storage buffers only) and its pipeline. */
#ifndef TXLM_KERNELS_H
#define TXLM_KERNELS_H

#include <stdatomic.h>

#include "pipeline_cache.h"
#include "vk_context.h"

/* The kernel ids (TXLM_K_*) and families (TXLM_KF_*), generated from
 * shaders/kernels.manifest, the only place a variant is declared. */
#include "kernel_ids.h"

/* The bindings and push-constant bytes every kernel agrees on with the
 * engine (TXLM_STEP_BINDING, where the recorder binds its step view;
 * TXLM_STREAM_SLOTS and TXLM_SLOT_BINDING, binding 1's slots of the
 * several-streams variants; TXLM_PUSH_BYTES), declared once for C and
 * GLSL. */
#include "contract.h"
#define TXLM_MAX_BINDINGS (TXLM_SLOT_BINDING + TXLM_STREAM_SLOTS - 1)

/* What a variant needs from the device beyond its texel bindings
 * (the manifest's needs column; txlm_kernel_usable checks them). */
enum {
    TXLM_NEED_INT64 = 1,    /* shaderInt64: 64-bit and 256-bit loads */
    TXLM_NEED_SUBGROUP = 2, /* subgroupAdd over a workgroup of 8 */
    TXLM_NEED_SHUFFLE = 4,  /* subgroup shuffles */
    TXLM_NEED_SHUFFLE8 = 8, /* shuffles in subgroups of exactly 8 */
    TXLM_NEED_SG8 = 16,     /* subgroups of exactly 8: a workgroup is one subgroup */
    TXLM_NEED_SMEM = 32,    /* 16x16 invocations and 16 KiB of workgroup memory */
    TXLM_NEED_WG256 = 64,   /* 256 x 1 invocations and 26096 bytes of workgroup memory (attn_tile.comp) */
    TXLM_NEED_COOPMAT = 128, /* cooperative matrices in a shape chosen (vk->coopmat; engine/vk/coopmat.c) */
};

/* One variant as the manifest declares it (kernel_table.c, generated). */
typedef struct txlm_kernel_desc {
    const char *name;
    const uint32_t *code; /* NULL where the build had no SPIR-V for it (shaders/meson.build) */
    size_t size;
    uint32_t n_bindings;
    uint32_t texel_mask; /* bit i: binding i is a uniform texel buffer */
    int step;            /* binding TXLM_STEP_BINDING too */
    uint32_t needs;      /* TXLM_NEED_* */
    uint32_t tile_n, tile_m; /* the products: columns and rows of Y per workgroup (0: not a product) */
    uint32_t slots;          /* 1, or TXLM_STREAM_SLOTS: binding 1 once per stream */
    uint32_t twin;           /* a one-stream variant: its twin of TXLM_STREAM_SLOTS streams (TXLM_K_COUNT: none) */
} txlm_kernel_desc;
extern const txlm_kernel_desc txlm_kernel_descs[TXLM_K_COUNT];

/* Family f's variant for each weight dtype, in the order f32, f16, q8_0,
 * q4_0 (TXLM_K_COUNT where the family has none). */
#define TXLM_KERNEL_DTYPES 4
extern const txlm_kernel_id txlm_kernel_families[TXLM_KF_COUNT][TXLM_KERNEL_DTYPES];

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

/* Family f's variant for a weight dtype (TXLM_DT_*; TXLM_K_COUNT when it has none). */
txlm_kernel_id txlm_kernel_of(txlm_kernel_family f, uint32_t dtype);

/* The descriptor bindings of variant d in the order txlm_rec_dispatch
 * takes its views: 0 .. n_bindings - 1, binding 1's further slots, then
 * the step binding; into b[TXLM_MAX_BINDINGS], returning how many. */
uint32_t txlm_kernel_bindings(const txlm_kernel_desc *d, uint32_t *b);
/* Whether that binding of d is read as a uniform texel buffer. */
int txlm_kernel_texel(const txlm_kernel_desc *d, uint32_t binding);

/* Whether this device can run kernel id (its needs and texel bindings),
 * and no test has forbidden it on this context (txlm_debug.forbid: the one
 * hook that forces a variant, each op then choosing its next candidate);
 * false for TXLM_K_COUNT. */
int txlm_kernel_usable(const txlm_vk *vk, uint32_t id);
/* Why not, in a few words (NULL: usable); for explaining a choice. */
const char *txlm_kernel_unusable(const txlm_vk *vk, uint32_t id);

/* Names and bindings of every kernel, and the pipeline cache; no pipeline yet. */
int txlm_kernels_init(txlm_vk *vk, txlm_kernels *ks, txlm_err *err);
/* Kernel id with its pipeline, made now if this is its first use; NULL
 * (and err) when it cannot be made or the device cannot run it. */
const txlm_kernel *txlm_kernel_get(txlm_kernels *ks, txlm_kernel_id id, txlm_err *err);
/* Destroys the pipelines, writing the pipeline cache back first if any was made. */
void txlm_kernels_destroy(txlm_kernels *ks);

#endif
