/* What a txlm_context holds: the device, the compiled kernels, and a lock
 * around the queue (submissions from several sessions serialise here). */
#ifndef TXLM_CONTEXT_H
#define TXLM_CONTEXT_H

#include <pthread.h>

#include "kernels.h"
#include "vk_buffer.h"

struct txlm_context {
    txlm_vk vk;
    txlm_kernels kernels;
    txlm_buf dummy;          /* bound to unused shader bindings */
    pthread_mutex_t queue_lock;
};

#endif
