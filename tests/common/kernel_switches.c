/* The switches of kernel_switches.h as kernels forbidden on a context (txlm_debug.forbid). */
#include "kernel_switches.h"

static int kernel_switch_has(unsigned sw, txlm_kernel_id k)
{
    static const txlm_kernel_family gemv[] = {TXLM_KF_GEMV, TXLM_KF_GEMV_SG, TXLM_KF_GEMV_WIDE, TXLM_KF_GEMV_WIDE_SG,
                                              TXLM_KF_GEMV_TEX, TXLM_KF_GEMV_TEX_LN, TXLM_KF_GEMV_GPU,
                                              TXLM_KF_GEMV_GPU_LN, TXLM_KF_GEMV_GPU8, TXLM_KF_GEMV_GPU8_LN};
    int in_gemv = 0, in_ln = 0, in_texsg = 0;
    for (uint32_t d = 0; d < TXLM_KERNEL_DTYPES; d++) {
        for (size_t f = 0; f < sizeof gemv / sizeof *gemv; f++) in_gemv |= txlm_kernel_families[gemv[f]][d] == k;
        in_ln |= txlm_kernel_families[TXLM_KF_GEMV_TEX_LN][d] == k || txlm_kernel_families[TXLM_KF_GEMV_GPU_LN][d] == k ||
                 txlm_kernel_families[TXLM_KF_GEMV_GPU8_LN][d] == k;
        in_texsg |= txlm_kernel_families[TXLM_KF_LINEAR_TEXSG][d] == k || txlm_kernel_families[TXLM_KF_LINEAR_TEXSG8][d] == k;
    }
    int q8 = k == TXLM_K_GEMV_Q8 || k == TXLM_K_GEMV_Q8_SG;
    int touch = k == TXLM_K_GEMV_TEX_Q8_0_LONG || k == TXLM_K_GEMV_TEX_Q8_0_LONG_LN;
    int merges = k == TXLM_K_ATTN_SPLIT_SG64_MERGE || k == TXLM_K_ATTN_SPLIT_SG48_MERGE || k == TXLM_K_ATTN_TILE_MERGE ||
                 k == TXLM_K_ATTN_CM_MERGE;
    int tiled = k == TXLM_K_ATTN_TILE || k == TXLM_K_ATTN_CM || k == TXLM_K_ATTN_TILE_MERGE || k == TXLM_K_ATTN_CM_MERGE;
    int sg = k == TXLM_K_ATTN_SPLIT_SG64_MERGE || k == TXLM_K_ATTN_SPLIT_SG48_MERGE || k == TXLM_K_ATTN_SPLIT_SG64 ||
             k == TXLM_K_ATTN_SPLIT_SG48;
    int paired = k == TXLM_K_ATTN_PAIR || k == TXLM_K_ATTN_PAIR_TEX || k == TXLM_K_ATTN_PAIR_TEX48 ||
                 k == TXLM_K_ATTN_PAIR_TEX64 || k == TXLM_K_ATTN_PAIR_TEXSG64;
    int split = k == TXLM_K_ATTN_SPLIT || k == TXLM_K_ATTN_SPLIT_TEX || k == TXLM_K_ATTN_SPLIT_TEX48 ||
                k == TXLM_K_ATTN_SPLIT_TEX64 || sg;
    int coopmat = (txlm_kernel_descs[k].needs & TXLM_NEED_COOPMAT) != 0;
    return ((sw & NO_COOPMAT) && coopmat) || ((sw & NO_GEMV) && (in_gemv || q8 || touch)) || ((sw & NO_GEMV_Q8) && q8) ||
           ((sw & NO_SHUFFLE) && (in_texsg || k == TXLM_K_LAYERNORM_TEX || k == TXLM_K_ATTN_PAIR_TEXSG64)) ||
           ((sw & NO_FUSED_ATTENTION) && (paired || split || tiled || k == TXLM_K_ATTN_FUSED)) ||
           ((sw & NO_PAIRED_ATTENTION) && paired) || ((sw & NO_ATTN_SG) && sg) || ((sw & NO_TOUCH) && touch) ||
           ((sw & NO_FUSED_LN) && (in_ln || k == TXLM_K_GEMV_TEX_Q8_0_LONG_LN)) ||
           ((sw & NO_FUSED_MERGE) && merges);
}

unsigned kernel_switch(txlm_context *c, unsigned sw, int on)
{
    static unsigned now;
    now = on ? now | sw : now & ~sw;
    unsigned char *forbid = c->vk.debug->forbid;
    for (uint32_t k = 0; k < TXLM_K_COUNT; k++) {
        int off = kernel_switch_has(now, (txlm_kernel_id)k);
        if (txlm_kernel_descs[k].slots == 1) forbid[k] = (unsigned char)off;
        /* a variant of several streams goes with its one-stream base */
        uint32_t twin = txlm_kernel_descs[k].twin;
        if (twin < TXLM_K_COUNT) forbid[twin] = off || (now & NO_STREAM_SLOTS);
    }
    return now;
}

