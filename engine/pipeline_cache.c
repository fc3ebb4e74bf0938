#include "pipeline_cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "atomic_write.h"
#include "open_input.h"

/* Far more than the ~100 pipelines of this library take on any driver
 * seen; a bigger file is not ours to trust. */
#define CACHE_CAP (64u << 20)

char *txlm_pipeline_cache_dir(void)
{
    const char *dir = getenv("TXLM_CACHE_DIR"), *base = NULL, *tail = "";
    if (dir && !strcmp(dir, "off")) return NULL;
    if (dir && *dir) {
        base = dir;
    } else if ((base = getenv("XDG_CACHE_HOME")) && *base == '/') {
        tail = "/txlm";
    } else if ((base = getenv("HOME")) && *base) {
        tail = "/.cache/txlm";
    } else {
        return NULL;
    }
    size_t n = strlen(base) + strlen(tail) + 1;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s%s", base, tail);
    return p;
}

/* mkdir -p, private to the user: nothing else needs to read it. */
static int make_dirs(char *path)
{
    for (char *s = path + 1;; s++) {
        if (*s != '/' && *s) continue;
        char c = *s;
        *s = 0;
        int bad = mkdir(path, 0700) != 0 && errno != EEXIST;
        *s = c;
        if (bad) return -1;
        if (!c) return 0;
    }
}

static void identity(const txlm_vk *vk, txlm_pipeline_cache_header *h)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, TXLM_PIPELINE_CACHE_MAGIC, sizeof h->magic);
    h->version = TXLM_PIPELINE_CACHE_VERSION;
    h->vendor_id = vk->props.vendorID;
    h->device_id = vk->props.deviceID;
    h->driver_version = vk->props.driverVersion;
    memcpy(h->uuid, vk->props.pipelineCacheUUID, VK_UUID_SIZE);
}

static char *cache_path(const txlm_vk *vk)
{
    char *dir = txlm_pipeline_cache_dir();
    if (!dir || make_dirs(dir)) return free(dir), NULL;
    char uuid[2 * VK_UUID_SIZE + 1];
    for (unsigned i = 0; i < VK_UUID_SIZE; i++) snprintf(uuid + 2 * i, 3, "%02x", vk->props.pipelineCacheUUID[i]);
    size_t n = strlen(dir) + 96;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/pipelines-%04x-%04x-%08x-%s.bin", dir, vk->props.vendorID, vk->props.deviceID,
                 vk->props.driverVersion, uuid);
    free(dir);
    return p;
}

/* The driver's data in a file of ours, or NULL: anything that is not
 * exactly what this device and driver wrote (another device, another
 * driver version, a torn or edited file) is dropped here rather than
 * handed to a driver that might not check it. */
static void *read_cache(const txlm_vk *vk, const char *path, size_t *size)
{
    FILE *f;
    if (txlm_fopen_input(path, &f, NULL)) return NULL;
    txlm_pipeline_cache_header want, got;
    identity(vk, &want);
    void *data = NULL;
    int ok = fread(&got, sizeof got, 1, f) == 1 && !memcmp(got.magic, want.magic, sizeof got.magic) &&
             got.version == want.version && got.vendor_id == want.vendor_id && got.device_id == want.device_id &&
             got.driver_version == want.driver_version && !memcmp(got.uuid, want.uuid, VK_UUID_SIZE) &&
             got.size >= 16 + VK_UUID_SIZE && got.size <= CACHE_CAP && (data = malloc(got.size)) != NULL &&
             fread(data, 1, got.size, f) == got.size && fgetc(f) == EOF && XXH64(data, got.size, 0) == got.hash;
    fclose(f);
    /* the driver's own header (Vulkan spec, "Pipeline Cache"): length,
     * version one, vendor, device, UUID */
    uint32_t vh[4];
    if (ok) memcpy(vh, data, sizeof vh);
    ok = ok && vh[0] >= 16 + VK_UUID_SIZE && vh[0] <= got.size && vh[1] == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
         vh[2] == want.vendor_id && vh[3] == want.device_id && !memcmp((uint8_t *)data + 16, want.uuid, VK_UUID_SIZE);
    if (!ok) return free(data), NULL;
    *size = got.size;
    return data;
}

void txlm_pipeline_cache_open(txlm_vk *vk, txlm_pipeline_cache *pc)
{
    memset(pc, 0, sizeof *pc);
    pc->path = cache_path(vk);
    size_t size = 0;
    void *data = pc->path ? read_cache(vk, pc->path, &size) : NULL;
    VkPipelineCacheCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO, .initialDataSize = size,
                                    .pInitialData = data};
    if (vkCreatePipelineCache(vk->device, &ci, NULL, &pc->cache) == VK_SUCCESS) {
        pc->loaded = data ? size : 0;
    } else if (data) {
        /* the driver refused data it should have ignored: start empty */
        ci.initialDataSize = 0;
        ci.pInitialData = NULL;
        if (vkCreatePipelineCache(vk->device, &ci, NULL, &pc->cache) != VK_SUCCESS) pc->cache = VK_NULL_HANDLE;
    }
    free(data);
}

static void write_cache(txlm_vk *vk, txlm_pipeline_cache *pc)
{
    size_t size = 0;
    /* a run whose pipelines all came from the file adds nothing to it */
    if (vkGetPipelineCacheData(vk->device, pc->cache, &size, NULL) != VK_SUCCESS || size < 16 + VK_UUID_SIZE ||
        size > CACHE_CAP || size == pc->loaded)
        return;
    uint8_t *buf = malloc(sizeof(txlm_pipeline_cache_header) + size);
    if (!buf) return;
    txlm_pipeline_cache_header h;
    identity(vk, &h);
    VkResult r = vkGetPipelineCacheData(vk->device, pc->cache, &size, buf + sizeof h);
    if (r == VK_SUCCESS) {
        h.size = size;
        h.hash = XXH64(buf + sizeof h, size, 0);
        memcpy(buf, &h, sizeof h);
        txlm_atomic_write_file(pc->path, buf, sizeof h + size, NULL);
    }
    free(buf);
}

void txlm_pipeline_cache_close(txlm_vk *vk, txlm_pipeline_cache *pc, int changed)
{
    if (pc->cache && pc->path && changed) write_cache(vk, pc);
    if (pc->cache) vkDestroyPipelineCache(vk->device, pc->cache, NULL);
    free(pc->path);
    memset(pc, 0, sizeof *pc);
}
