/* The pipelines a context compiles, kept on disk between runs: a
 * VkPipelineCache loaded at context creation from the user's cache
 * directory and written back when the context is destroyed, if new
 * pipelines were made. Keyed by device, driver and the driver's cache
 * UUID; a file that is damaged, foreign or stale is ignored, never an
 * error (docs/performance.md, "Start-up"). */
#ifndef TXLM_PIPELINE_CACHE_H
#define TXLM_PIPELINE_CACHE_H

#include "vk_context.h"

typedef struct txlm_pipeline_cache {
    VkPipelineCache cache; /* VK_NULL_HANDLE: none (pipelines are made without one) */
    char *path;            /* the file, or NULL when caching to disk is off */
    size_t loaded;         /* bytes of the file's data the driver was given (0: none) */
} txlm_pipeline_cache;

/* Where the cache files live: $TXLM_CACHE_DIR, else $XDG_CACHE_HOME/txlm,
 * else $HOME/.cache/txlm; NULL when TXLM_CACHE_DIR is "off" or no home is
 * known. Returns a malloc'd path. */
char *txlm_pipeline_cache_dir(void);

/* Never fails: without a usable file the cache starts empty, and without
 * memory for it there is none. */
void txlm_pipeline_cache_open(txlm_vk *vk, txlm_pipeline_cache *pc);
/* Writes the cache back (atomically; any failure is ignored: a read-only
 * home must not stop a program) when `changed`, then destroys it. */
void txlm_pipeline_cache_close(txlm_vk *vk, txlm_pipeline_cache *pc, int changed);

/* What a cache file holds before the driver's data (little-endian as the
 * host is; the file is only ever read on the machine that wrote it). */
#define TXLM_PIPELINE_CACHE_MAGIC "TXLMPIPE"
#define TXLM_PIPELINE_CACHE_VERSION 1u
typedef struct txlm_pipeline_cache_header {
    char magic[8];
    uint32_t version;
    uint32_t vendor_id, device_id, driver_version;
    uint8_t uuid[VK_UUID_SIZE];
    uint64_t size; /* bytes of driver data after this header */
    uint64_t hash; /* XXH64 of them, seed 0 */
} txlm_pipeline_cache_header;

#endif
