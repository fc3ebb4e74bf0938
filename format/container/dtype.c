#include "dtype.h"

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
