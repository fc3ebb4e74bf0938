/* The engine's TXLM_* environment switches, read in one place (env.c)
 * when a context is created; docs/environment.md has the table. Those
 * that serve tests, comparisons and fault injection go on into the
 * context's debug options (debug.h); the rest choose devices, kernels
 * and caches. (TXLM_FAULT_OUTPUT, the file writer's, is read by
 * format/container/atomic_write.c.) */
#ifndef TXLM_ENV_H
#define TXLM_ENV_H

#include <stdint.h>

typedef struct txlm_env {
    const char *device;         /* TXLM_DEVICE: a device index or name substring (NULL: unset) */
    const char *cache_dir;      /* TXLM_CACHE_DIR: the pipeline cache's folder, "off" for none (NULL: unset) */
    int validation;             /* TXLM_VALIDATION=1: the Khronos validation layer, messages counted */
    int profile;                /* TXLM_PROFILE=1: device time by kernel, on stderr */
    int no_int64;               /* TXLM_NO_INT64=1: as if the device had no shaderInt64 */
    int keep_subnormals;        /* TXLM_KEEP_SUBNORMALS=1: CPU devices keep subnormals */
    int texel;                  /* TXLM_TEXEL=0/1: the texel kernels off or on (-1: the device's default) */
    int gpu_kernels;            /* TXLM_GPU_KERNELS=0/1: the GPU-shaped kernels off or on (-1: default) */
    int coopmat;                /* TXLM_COOPMAT=0: the cooperative-matrix kernels off (-1: on where the device has them) */
    int stream_slots;           /* TXLM_STREAM_SLOTS=0/1: several streams per attention dispatch off or on (-1: default) */
    uint64_t max_binding_bytes; /* TXLM_MAX_BINDING_BYTES: split bindings below the device's range (0: unset) */
    uint32_t submit_dispatches; /* TXLM_SUBMIT_DISPATCHES: at most N dispatches a submission, where the context's option gives none (0: unset) */
    /* for the debug options (debug.h) */
    int no_replay;              /* TXLM_NO_REPLAY=1: every segment recorded afresh */
    int no_pad;                 /* TXLM_NO_PAD=1: the model's own widths on the device, unpadded */
    int explain_kernels;        /* TXLM_EXPLAIN_KERNELS=1: each product's kernel choice on the log, with why */
    uint64_t fault_device_lost; /* TXLM_FAULT_DEVICE_LOST=N: submit N and later report the device lost */
    uint64_t fault_alloc_fail;  /* TXLM_FAULT_ALLOC_FAIL=N: buffer N's memory fails */
} txlm_env;

/* Reads every switch from the environment now. */
void txlm_env_read(txlm_env *e);

#endif
