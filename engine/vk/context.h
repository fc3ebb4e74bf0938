/* What a txlm_context holds: the device and the compiled kernels. */
#ifndef TXLM_CONTEXT_H
#define TXLM_CONTEXT_H

#include "kernels.h"
#include "vk_buffer.h"

struct txlm_context {
    txlm_vk vk;
    txlm_kernels kernels;
    txlm_buf dummy;          /* bound to unused shader bindings */
};

#endif
