/* A program's own frame loop while txlm evaluates (docs/performance.md,
 * "Sharing a GPU with a renderer"). The program makes its device
 * (tests/common/host_device.h: what a renderer does, txlm's needs
 * added); a thread of it submits a frame every --frame-ms (a clear of a
 * 1 MiB buffer, waited for by its fence: the least a frame can be) on
 * its queue, under its queue lock; meanwhile the main thread has txlm
 * score segments of --tgt-len tokens with the model's memory. Per
 * configuration, the gaps between the completions of consecutive frames:
 * the longest, the 99th percentile, the frames later than a period past
 * their schedule, and txlm's tokens/s. Configurations, each run for
 * --seconds in every round, rounds alternating them:
 *   alone          the frame loop with txlm idle (the floor)
 *   shared[:N]     txlm on the program's device and queue (txlm_context_create_on_device),
 *                  at most N dispatches a submission (0 or none: a segment whole)
 *   own[:N]        txlm on a device of its own (txlm_context_create) on the same GPU
 *   own-low[:N]    the same with a low-priority queue (txlm_context_options.low_priority)
 * Built against libtxlm.so and the public headers only, as a program is.
 *
 * usage: frame_gap -m MODEL [--configs LIST] [--seconds S] [--rounds R] [--frame-ms F]
 *                  [--tgt-len L] [--mem-len M] [--validation] [--json] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host_device.h"

enum { MAX_CONFIGS = 8, MAX_FRAMES = 1 << 16 };

typedef enum { ALONE, SHARED, OWN, OWN_LOW } mode;

typedef struct config {
    char name[32];
    mode mode;
    uint32_t budget;
    txlm_context *ctx;
    txlm_model *m;
    txlm_session *s;
    /* over every round */
    double *gaps;   /* ms between consecutive frames' completions */
    uint32_t n_gaps, late, frames;
    double tokens, seconds;
} config;

typedef struct loop {
    host_device *h;
    double period;      /* seconds */
    int stop;           /* atomic */
    double *done;       /* completion times */
    double *due;        /* schedule */
    uint32_t n;
    int failed;
} loop;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void sleep_until(double t)
{
    struct timespec ts = {.tv_sec = (time_t)t, .tv_nsec = (long)((t - floor(t)) * 1e9)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) continue;
}

/* The program's frames: a clear of its buffer every period, on schedule
 * (a late frame is not made up for: the next is due a period after). */
static void *frames(void *arg)
{
    loop *l = arg;
    host_device *h = l->h;
    VkBuffer buf;
    VkDeviceMemory mem;
    void *map;
    VkCommandPool pool;
    VkCommandBuffer cmd;
    VkFence fence;
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = h->family};
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (host_device_buffer(h, 1 << 20, &buf, &mem, &map) || h->f.CreateCommandPool(h->device, &pci, NULL, &pool) ||
        h->f.CreateFence(h->device, &fci, NULL, &fence))
        return l->failed = 1, NULL;
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    if (h->f.AllocateCommandBuffers(h->device, &cai, &cmd)) return l->failed = 1, NULL;
    h->f.BeginCommandBuffer(cmd, &bi);
    h->f.CmdFillBuffer(cmd, buf, 0, VK_WHOLE_SIZE, 0);
    h->f.EndCommandBuffer(cmd);
    double next = now();
    while (!__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE) && l->n < MAX_FRAMES) {
        sleep_until(next);
        if (host_device_submit(h, cmd, fence) != VK_SUCCESS) return l->failed = 1, NULL;
        l->due[l->n] = next;
        l->done[l->n++] = now();
        next += l->period;
        if (next < now()) next = now(); /* behind: the next frame at once */
    }
    h->f.DestroyFence(h->device, fence, NULL);
    h->f.DestroyCommandPool(h->device, pool, NULL);
    h->f.UnmapMemory(h->device, mem);
    h->f.DestroyBuffer(h->device, buf, NULL);
    h->f.FreeMemory(h->device, mem, NULL);
    return NULL;
}

static int parse_config(const char *tok, size_t len, config *c)
{
    static const char *const names[] = {"alone", "shared", "own", "own-low"};
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%.*s", (int)len, tok);
    char *colon = strchr(c->name, ':');
    if (colon) c->budget = (uint32_t)strtoul(colon + 1, NULL, 10), *colon = 0;
    for (int i = 0; i < 4; i++)
        if (!strcmp(c->name, names[i])) {
            c->mode = (mode)i;
            if (colon) *colon = ':';
            return c->mode == ALONE && c->budget ? 1 : 0;
        }
    return 1;
}

/* txlm scores segments for `seconds` (nothing in ALONE). */
static int work(config *c, double seconds, uint32_t tgt, uint32_t V, uint64_t *rng)
{
    double t0 = now(), t = t0;
    int32_t tok[1024], tgt_ids[1024];
    float lp[1024];
    while ((t = now()) - t0 < seconds) {
        if (c->mode == ALONE) {
            sleep_until(t0 + seconds);
            continue;
        }
        for (uint32_t i = 0; i < tgt; i++) {
            *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
            tok[i] = (int32_t)((*rng >> 33) % V), tgt_ids[i] = (int32_t)((*rng >> 13) % V);
        }
        if (txlm_session_score(c->s, tok, tgt_ids, tgt, lp)) return fprintf(stderr, "score: %s\n", txlm_last_error()), 1;
        c->tokens += tgt;
    }
    c->seconds += now() - t0;
    return 0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const char *model = NULL, *list = "alone,shared,shared:64,own,own-low,own-low:64";
    double seconds = 5, frame_ms = 1000.0 / 60;
    uint32_t rounds = 3, tgt = 128, mem_len = 0;
    int json = 0, validation = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--validation")) validation = 1;
        else if (!v) return fprintf(stderr, "frame_gap: %s needs a value\n", a), 2;
        else if (!strcmp(a, "-m")) model = v, i++;
        else if (!strcmp(a, "--configs")) list = v, i++;
        else if (!strcmp(a, "--seconds")) seconds = atof(v), i++;
        else if (!strcmp(a, "--rounds")) rounds = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--frame-ms")) frame_ms = atof(v), i++;
        else if (!strcmp(a, "--tgt-len")) tgt = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--mem-len")) mem_len = (uint32_t)atoi(v), i++;
        else return fprintf(stderr, "frame_gap: unknown option %s\n", a), 2;
    }
    if (!model || tgt == 0 || tgt > 1024 || seconds <= 0 || frame_ms <= 0 || rounds == 0)
        return fprintf(stderr, "usage: frame_gap -m MODEL [--configs LIST] [--seconds S] [--rounds R] [--frame-ms F] "
                               "[--tgt-len L<=1024] [--mem-len M] [--validation] [--json]\n"), 2;
    config cfg[MAX_CONFIGS];
    uint32_t n_cfg = 0;
    for (const char *p = list; *p && n_cfg < MAX_CONFIGS;) {
        size_t len = strcspn(p, ",");
        if (parse_config(p, len, &cfg[n_cfg++])) return fprintf(stderr, "frame_gap: bad configuration \"%.*s\"\n", (int)len, p), 2;
        p += len + (p[len] == ',');
    }
    host_device h;
    hd_options ho = {.validation = validation};
    if (host_device_open(&h, &ho)) return 1;
    uint32_t V = 0;
    for (uint32_t i = 0; i < n_cfg; i++) {
        config *c = &cfg[i];
        c->gaps = malloc(MAX_FRAMES * sizeof *c->gaps);
        if (c->mode == ALONE) continue;
        txlm_context_options co = {.validation = validation, .max_submit_dispatches = c->budget, .low_priority = c->mode == OWN_LOW};
        txlm_session_options so = {.mem_len = mem_len, .max_segment = tgt};
        txlm_status st = c->mode == SHARED ? host_device_context(&h, &co, &c->ctx) : txlm_context_create(&co, &c->ctx);
        if (!st) st = txlm_model_load(c->ctx, model, NULL, &c->m);
        if (!st) st = txlm_session_create(c->m, &so, &c->s);
        if (st) return fprintf(stderr, "%s: %s\n", c->name, txlm_last_error()), 1;
        V = txlm_vocab_size(c->m);
        uint64_t rng = 1;
        if (work(c, 1.0, tgt, V, &rng)) return 1; /* kernels compiled, memory filled */
        c->tokens = c->seconds = 0;
    }
    loop l = {.h = &h, .period = frame_ms / 1000, .done = malloc(MAX_FRAMES * sizeof(double)),
              .due = malloc(MAX_FRAMES * sizeof(double))};
    uint64_t rng = 7;
    for (uint32_t r = 0; r < rounds; r++)
        for (uint32_t i = 0; i < n_cfg; i++) {
            config *c = &cfg[i];
            l.n = 0, l.stop = 0;
            pthread_t t;
            if (pthread_create(&t, NULL, frames, &l)) return 1;
            int bad = work(c, seconds, tgt, V, &rng);
            __atomic_store_n(&l.stop, 1, __ATOMIC_RELEASE);
            pthread_join(t, NULL);
            if (bad || l.failed) return fprintf(stderr, "%s: the frame loop failed\n", c->name), 1;
            for (uint32_t k = 1; k < l.n && c->n_gaps < MAX_FRAMES; k++) {
                c->gaps[c->n_gaps++] = (l.done[k] - l.done[k - 1]) * 1e3;
                c->late += l.done[k] - l.due[k] > l.period;
            }
            c->frames += l.n;
        }
    if (json) printf("{\"frame_ms\": %.3f, \"seconds\": %.3f, \"rounds\": %u, \"tgt_len\": %u, \"configs\": [\n", frame_ms,
                     seconds, rounds, tgt);
    else
        printf("frames every %.1f ms, %u rounds of %.1f s per configuration, txlm scoring segments of %u tokens\n"
               "%-16s %8s %12s %12s %12s %8s %12s\n", frame_ms, rounds, seconds, tgt, "configuration", "frames",
               "longest gap", "p99 gap", "median gap", "late", "txlm tok/s");
    for (uint32_t i = 0; i < n_cfg; i++) {
        config *c = &cfg[i];
        qsort(c->gaps, c->n_gaps, sizeof *c->gaps, cmp);
        double most = c->n_gaps ? c->gaps[c->n_gaps - 1] : NAN, p99 = c->n_gaps ? c->gaps[(size_t)(0.99 * (c->n_gaps - 1))] : NAN;
        double med = c->n_gaps ? c->gaps[c->n_gaps / 2] : NAN, tps = c->seconds > 0 ? c->tokens / c->seconds : 0;
        if (json)
            printf("  {\"name\": \"%s\", \"frames\": %u, \"longest_gap_ms\": %.3f, \"p99_gap_ms\": %.3f, \"median_gap_ms\": %.3f, "
                   "\"late\": %u, \"txlm_tokens_per_s\": %.3f}%s\n", c->name, c->frames, most, p99, med, c->late, tps,
                   i + 1 < n_cfg ? "," : "");
        else
            printf("%-16s %8u %9.1f ms %9.1f ms %9.1f ms %8u %12.1f\n", c->name, c->frames, most, p99, med, c->late, tps);
    }
    if (json) printf("]}\n");
    int rc = 0;
    for (uint32_t i = 0; i < n_cfg; i++) {
        config *c = &cfg[i];
        if (c->ctx && txlm_context_validation_messages(c->ctx)) rc = 1;
        txlm_session_free(c->s), txlm_model_free(c->m), txlm_context_destroy(c->ctx), free(c->gaps);
    }
    if (h.messages) rc = 1, fprintf(stderr, "%llu validation messages\n", (unsigned long long)h.messages);
    host_device_close(&h);
    free(l.done), free(l.due);
    return rc;
}
