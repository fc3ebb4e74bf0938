/* Start-up: a context compiles no pipeline until a kernel is first used,
 * and the pipeline cache on disk (engine/pipeline_cache.c) is written
 * back after a run and ignored, without harm, when it is damaged, foreign,
 * not a file or not writable. Every run must give the same bits as the
 * first, whatever the cache held. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "context.h"
#include "faults_common.h"

#define NTOK 6
#define V 204 /* char_preln's vocabulary */
static const int32_t toks[NTOK] = {3, 17, 5, 9, 100, 2};

static const char *model_path;
static size_t loaded; /* bytes of cache the last run's context accepted */

/* One context, one segment; its log-probabilities into lp. The number
 * of pipelines made is checked: none before the first feed, some after,
 * and far fewer than all. */
static int run(float *lp)
{
    txlm_context_options o = flt_options(0);
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    int rc = txlm_context_create(&o, &ctx) != TXLM_OK;
    if (!rc) CHECK(ctx->kernels.n_made == 0, "a new context made %u pipelines", ctx->kernels.n_made);
    loaded = rc ? 0 : ctx->kernels.cache.loaded;
    rc = rc || txlm_model_load(ctx, model_path, NULL, &m) || txlm_session_create(m, NULL, &s) ||
         txlm_session_feed(s, toks, NTOK, lp);
    if (rc) fprintf(stderr, "run: %s\n", txlm_last_error());
    if (!rc)
        CHECK(ctx->kernels.n_made > 0 && ctx->kernels.n_made < TXLM_K_COUNT / 3, "%u pipelines made for one model",
              ctx->kernels.n_made);
    txlm_session_free(s);
    txlm_model_free(m);
    txlm_context_destroy(ctx);
    return rc;
}

/* The one cache file in dir (its full path into out), or 0 if none. */
static int cache_file(const char *dir, char *out, size_t n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, "pipelines-", 10) && strstr(e->d_name, ".bin")) {
            snprintf(out, n, "%s/%s", dir, e->d_name);
            found++;
        }
    if (d) closedir(d);
    CHECK(found <= 1, "%d cache files in %s", found, dir);
    return found == 1;
}

/* The file is one this library wrote for this device: magic, identity, hash. */
static int valid_cache(const char *path, const txlm_device_info *dev)
{
    size_t len;
    uint8_t *b = fmt_read_all(path, &len);
    txlm_pipeline_cache_header h;
    int ok = b && len >= sizeof h;
    if (ok) memcpy(&h, b, sizeof h);
    ok = ok && !memcmp(h.magic, TXLM_PIPELINE_CACHE_MAGIC, 8) && h.vendor_id == dev->vendor_id &&
         h.device_id == dev->device_id && h.size == len - sizeof h && XXH64(b + sizeof h, h.size, 0) == h.hash;
    free(b);
    return ok;
}

static void same_bits(const float *a, const float *b, const char *what)
{
    CHECK(!memcmp(a, b, sizeof(float) * NTOK * V), "%s: log-probabilities differ from the first run", what);
}

/* The cache file replaced by `bytes`, then a run: same bits, and a valid
 * file again afterwards (the run wrote its own). */
static void damaged(const char *path, const void *bytes, size_t n, const float *ref, const txlm_device_info *dev,
                    const char *what)
{
    float lp[NTOK * V];
    unlink(path);
    fmt_write_all(path, bytes, n);
    CHECK(!run(lp), "%s: the run failed", what);
    CHECK(loaded == 0, "%s: accepted as a cache", what);
    same_bits(ref, lp, what);
    CHECK(valid_cache(path, dev), "%s: the cache was not written again", what);
    printf("ignored: %s\n", what);
}

static void damage_cases(const char *path, const float *ref, const txlm_device_info *dev)
{
    size_t len;
    uint8_t *good = fmt_read_all(path, &len), junk[4096];
    txlm_pipeline_cache_header h;
    if (!good || len < sizeof h) {
        CHECK(0, "no cache to damage");
        return;
    }
    memcpy(&h, good, sizeof h);
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (uint8_t)(i * 131 + 7);
    damaged(path, junk, sizeof junk, ref, dev, "random bytes");
    damaged(path, good, sizeof h - 4, ref, dev, "a cut header");
    damaged(path, good, len - 1, ref, dev, "a cut payload");
    uint8_t *b = malloc(len + 1);
    memcpy(b, good, len);
    b[len - 1] ^= 0x40;
    damaged(path, b, len, ref, dev, "a payload byte flipped");
    /* more data after the driver's header (as real drivers write), not what the hash says */
    uint8_t *more = calloc(1, len + 64);
    memcpy(more, good, len);
    ((txlm_pipeline_cache_header *)more)->size += 64;
    damaged(path, more, len + 64, ref, dev, "data that does not match its hash");
    ((txlm_pipeline_cache_header *)more)->hash = XXH64(more + sizeof h, len + 64 - sizeof h, 0);
    fmt_write_all(path, more, len + 64);
    float lp[NTOK * V];
    CHECK(!run(lp), "a longer valid cache: the run failed");
    CHECK(loaded == len + 64 - sizeof h, "a longer valid cache was not accepted (%zu bytes)", loaded);
    same_bits(ref, lp, "a longer valid cache");
    free(more);
    /* foreign: another device, with a matching hash */
    memcpy(b, good, len);
    ((txlm_pipeline_cache_header *)b)->device_id ^= 1;
    damaged(path, b, len, ref, dev, "another device's cache");
    /* the driver's own header inside names another vendor, hash made to match */
    memcpy(b, good, len);
    b[sizeof h + 8] ^= 1;
    ((txlm_pipeline_cache_header *)b)->hash = XXH64(b + sizeof h, len - sizeof h, 0);
    damaged(path, b, len, ref, dev, "a driver header of another vendor");
    /* a size far beyond the file: not allocated, not read */
    memcpy(b, good, len);
    ((txlm_pipeline_cache_header *)b)->size = (uint64_t)1 << 40;
    damaged(path, b, len, ref, dev, "a size of 1 TiB");
    memcpy(b, good, len);
    b[len] = 0;
    damaged(path, b, len + 1, ref, dev, "a byte past the end");
    free(b);
    free(good);
}

/* Not a regular file at the cache's path: a directory, a FIFO (a reader
 * that blocked on it would hang here until the alarm). */
static void not_a_file(const char *path, const float *ref)
{
    float lp[NTOK * V];
    unlink(path);
    CHECK(mkdir(path, 0700) == 0, "mkdir %s", path);
    CHECK(!run(lp), "a directory as the cache: the run failed");
    same_bits(ref, lp, "a directory as the cache");
    rmdir(path);
    CHECK(mkfifo(path, 0600) == 0, "mkfifo %s", path);
    alarm(60);
    CHECK(!run(lp), "a FIFO as the cache: the run failed");
    alarm(0);
    same_bits(ref, lp, "a FIFO as the cache");
    unlink(path);
}

static int remove_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag;
    if (f->level > 0) remove(p);
    return 0;
}

int main(void)
{
    char *dir = fmt_mkdtemp(), path[4096], cache[4096], file[4096], home[4096];
    snprintf(path, sizeof path, "%s/m.txlm", dir);
    snprintf(cache, sizeof cache, "%s/cache/deeper", dir);
    if (flt_pack("char_preln", TXLM_DT_F32, path)) return 1;
    model_path = path;
    setenv("TXLM_CACHE_DIR", cache, 1);

    float ref[NTOK * V], lp[NTOK * V];
    if (run(ref)) return flt_finish("pipeline_cache", dir);
    txlm_context_options o = flt_options(0);
    txlm_context *ctx = NULL;
    txlm_device_info dev = {0};
    if (txlm_context_create(&o, &ctx) || txlm_context_device(ctx, &dev)) return 1;
    txlm_context_destroy(ctx);

    CHECK(cache_file(cache, file, sizeof file), "no cache file in %s after a run", cache);
    CHECK(valid_cache(file, &dev), "%s is not a valid cache of this device", file);
    CHECK(!run(lp), "second run failed");
    CHECK(loaded > 0, "the second run did not take the first one's cache");
    same_bits(ref, lp, "a warm cache");
    damage_cases(file, ref, &dev);
    not_a_file(file, ref);

    /* a cache directory that cannot be made (a file is in its way) */
    snprintf(home, sizeof home, "%s/blocked", dir);
    fmt_write_all(home, "x", 1);
    snprintf(cache, sizeof cache, "%s/blocked/cache", dir);
    setenv("TXLM_CACHE_DIR", cache, 1);
    CHECK(!run(lp), "an impossible cache directory failed the run");
    same_bits(ref, lp, "an impossible cache directory");

    /* XDG_CACHE_HOME, then HOME, then off */
    unsetenv("TXLM_CACHE_DIR");
    snprintf(home, sizeof home, "%s/xdg", dir);
    setenv("XDG_CACHE_HOME", home, 1);
    CHECK(!run(lp), "run with XDG_CACHE_HOME failed");
    snprintf(cache, sizeof cache, "%s/xdg/txlm", dir);
    CHECK(cache_file(cache, file, sizeof file), "no cache file under XDG_CACHE_HOME (%s)", cache);
    unsetenv("XDG_CACHE_HOME");
    snprintf(home, sizeof home, "%s/home", dir);
    setenv("HOME", home, 1);
    CHECK(!run(lp), "run with HOME failed");
    snprintf(cache, sizeof cache, "%s/home/.cache/txlm", dir);
    CHECK(cache_file(cache, file, sizeof file), "no cache file under HOME (%s)", cache);
    snprintf(home, sizeof home, "%s/home2", dir);
    setenv("HOME", home, 1);
    setenv("TXLM_CACHE_DIR", "off", 1);
    CHECK(!run(lp), "run with the cache off failed");
    struct stat st;
    CHECK(stat(home, &st) != 0, "TXLM_CACHE_DIR=off still made %s", home);
    nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    return flt_finish("pipeline_cache", dir);
}
