/* The engine's TXLM_* environment switches (env.h, docs/environment.md). */
#include "env.h"

#include <stdlib.h>
#include <string.h>

/* Set, non-empty, not "0". */
static int on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* 0 or 1 where set and non-empty, else -1. */
static int tristate(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) != 0 : -1;
}

static uint64_t number(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 10) : 0;
}

static const char *text(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

void txlm_env_read(txlm_env *e)
{
    *e = (txlm_env){
        .device = getenv("TXLM_DEVICE"),
        .cache_dir = text("TXLM_CACHE_DIR"),
        .validation = on("TXLM_VALIDATION"),
        .profile = on("TXLM_PROFILE"),
        .no_int64 = getenv("TXLM_NO_INT64") != NULL,
        .keep_subnormals = on("TXLM_KEEP_SUBNORMALS"),
        .texel = tristate("TXLM_TEXEL"),
        .gpu_kernels = tristate("TXLM_GPU_KERNELS"),
        .coopmat = tristate("TXLM_COOPMAT"),
        .stream_slots = tristate("TXLM_STREAM_SLOTS"),
        .max_binding_bytes = number("TXLM_MAX_BINDING_BYTES"),
        .submit_dispatches = number("TXLM_SUBMIT_DISPATCHES") > UINT32_MAX ? UINT32_MAX : (uint32_t)number("TXLM_SUBMIT_DISPATCHES"),
        .no_replay = on("TXLM_NO_REPLAY"),
        .no_pad = on("TXLM_NO_PAD"),
        .explain_kernels = on("TXLM_EXPLAIN_KERNELS"),
        .fault_device_lost = number("TXLM_FAULT_DEVICE_LOST"),
        .fault_alloc_fail = number("TXLM_FAULT_ALLOC_FAIL"),
    };
}
