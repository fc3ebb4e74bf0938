#include "dtype.h"

#include <string.h>

static const txlm_dtype_info infos[TXLM_DT_COUNT] = {
    [TXLM_DT_F32] = {"f32", 1, 4},
    [TXLM_DT_F16] = {"f16", 1, 2},
    [TXLM_DT_BF16] = {"bf16", 1, 2},
    [TXLM_DT_Q8_0] = {"q8_0", 32, 34},
    [TXLM_DT_Q4_0] = {"q4_0", 32, 18},
};

const txlm_dtype_info *txlm_dtype_get(uint32_t dtype)
{
    return dtype < TXLM_DT_COUNT ? &infos[dtype] : 0;
}

uint32_t txlm_dtype_stored(uint32_t want, const char *name, uint32_t rank, const uint64_t *dims)
{
    if (want == TXLM_DT_F32 || !txlm_dtype_get(want) || rank != 2 || strstr(name, "_bias") ||
        !strcmp(name, "crit.cluster_weight"))
        return TXLM_DT_F32;
    return dims[1] % txlm_dtype_get(want)->block_elems ? TXLM_DT_F32 : want;
}
