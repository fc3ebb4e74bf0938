/* GPU failures end in a status and a message, and a context can be torn
 * down and created again afterwards: a memory budget too small for the
 * model or for a session, a model larger than the device's heaps, and a
 * device lost in the middle of a text (TXLM_FAULT_DEVICE_LOST), the driver
 * out of memory at any allocation (TXLM_FAULT_ALLOC_FAIL). Run under
 * ASan/LSan in the sanitizer build, this also proves nothing leaks. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "context.h"
#include "faults_common.h"
#include "txlm_layout.h"

static char model_path[4096];
static const int32_t toks[6] = {3, 17, 5, 9, 100, 2};

/* Device memory in use by a context with nothing loaded, and with the model. */
/* submits_first_feed: submits before the first segment (uploads through
 * staging buffers on GPUs whose memory is not mapped), then per segment. */
static void measure(uint64_t *base, uint64_t *with_model, uint64_t *submits_first_feed, uint64_t *submits_per_feed,
                    uint64_t *allocs)
{
    txlm_context_options o = flt_options(0);
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    CHECK(txlm_context_create(&o, &ctx) == TXLM_OK, "context: %s", txlm_last_error());
    *base = ctx->vk.memory_used;
    CHECK(txlm_model_load(ctx, model_path, NULL, &m) == TXLM_OK, "load: %s", txlm_last_error());
    *with_model = ctx->vk.memory_used;
    CHECK(txlm_session_create(m, NULL, &s) == TXLM_OK, "session: %s", txlm_last_error());
    uint64_t before = ctx->vk.debug->submits;
    *submits_first_feed = before;
    CHECK(txlm_session_feed(s, toks, 6, NULL) == TXLM_OK, "feed: %s", txlm_last_error());
    *submits_per_feed = ctx->vk.debug->submits - before;
    *allocs = ctx->vk.debug->allocs;
    txlm_session_free(s);
    CHECK(ctx->vk.memory_used == *with_model, "session memory not returned: %llu in use, %llu expected",
          (unsigned long long)ctx->vk.memory_used, (unsigned long long)*with_model);
    txlm_model_free(m);
    CHECK(ctx->vk.memory_used == *base, "model memory not returned");
    txlm_context_destroy(ctx);
}

static void budgets(uint64_t base, uint64_t with_model)
{
    /* Too small for the weights: refused before any upload. */
    txlm_context_options o = flt_options(base + (with_model - base) / 2);
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    CHECK(txlm_context_create(&o, &ctx) == TXLM_OK, "context: %s", txlm_last_error());
    txlm_status st = txlm_model_load(ctx, model_path, NULL, &m);
    CHECK_STATUS(st, TXLM_ERR_OUT_OF_MEMORY, "budget");
    CHECK(m == NULL && ctx->vk.memory_used == base, "nothing kept after a refused load");
    txlm_context_destroy(ctx);

    /* Enough for the weights, not for a session's buffers. */
    o = flt_options(with_model + 4096);
    CHECK(txlm_context_create(&o, &ctx) == TXLM_OK, "context: %s", txlm_last_error());
    CHECK(txlm_model_load(ctx, model_path, NULL, &m) == TXLM_OK, "load within budget: %s", txlm_last_error());
    st = txlm_session_create(m, NULL, &s);
    CHECK_STATUS(st, TXLM_ERR_OUT_OF_MEMORY, "budget exceeded");
    CHECK(s == NULL && ctx->vk.memory_used == with_model, "session buffers kept after a refused session");
    /* A shorter session fits once the budget allows it: the context is still usable. */
    txlm_model_free(m);
    txlm_context_destroy(ctx);
}

/* The copy rate (txlm_context_copy_rate): a positive rate that gives back
 * every byte it took; under a budget it halves its buffers until two fit,
 * and with no room for two of 4 MiB it fails with a message, keeping
 * nothing. */
static void copy_rate(uint64_t base)
{
    double r = 0;
    CHECK_STATUS(txlm_context_copy_rate(NULL, &r), TXLM_ERR_INVALID_ARGUMENT, "txlm_context_copy_rate: NULL argument");
    static const struct {
        uint64_t room;
        txlm_status want;
    } cases[] = {{0, TXLM_OK}, {40u << 20, TXLM_OK}, {6u << 20, TXLM_ERR_OUT_OF_MEMORY}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        txlm_context_options o = flt_options(cases[i].room ? base + cases[i].room : 0);
        txlm_context *ctx = NULL;
        CHECK(txlm_context_create(&o, &ctx) == TXLM_OK, "context: %s", txlm_last_error());
        if (!ctx) return;
        if (i == 0) CHECK_STATUS(txlm_context_copy_rate(ctx, NULL), TXLM_ERR_INVALID_ARGUMENT, "txlm_context_copy_rate: NULL argument");
        r = 0;
        txlm_status st = txlm_context_copy_rate(ctx, &r);
        if (cases[i].want == TXLM_OK)
            CHECK(st == TXLM_OK && r > 0, "copy rate with %llu bytes of room: %s", (unsigned long long)cases[i].room,
                  txlm_last_error());
        else
            CHECK_STATUS(st, cases[i].want, "measuring the copy rate: device memory budget exceeded");
        CHECK(ctx->vk.memory_used == base, "the copy rate kept %lld bytes",
              (long long)ctx->vk.memory_used - (long long)base);
        txlm_context_destroy(ctx);
    }
}

/* A copy of the model with one extra tensor whose data is a hole of
 * `bytes` in a sparse file: nothing is written or read, the reader sees a
 * well-formed file (opened without hashing the data). */
static int write_huge(const char *path, uint64_t rows)
{
    size_t len;
    uint8_t *b = fmt_read_all(model_path, &len);
    if (!b) return 1;
    uint64_t table = txlm_rd64(b + TXLM_HDR_TABLE_OFFSET);
    uint32_t n = txlm_rd32(b + TXLM_HDR_SECTION_COUNT), es = txlm_rd32(b + TXLM_HDR_ENTRY_SIZE);
    uint8_t *tdir = NULL, *tdat = NULL;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *e = b + table + (uint64_t)i * es;
        if (!memcmp(e, TXLM_TAG_TDIR, 4)) tdir = e;
        if (!memcmp(e, TXLM_TAG_TDAT, 4)) tdat = e;
    }
    /* Re-point the last tensor of the directory at a huge [rows, 64] f32 block past the end. */
    uint8_t *d = b + txlm_rd64(tdir + TXLM_SEC_OFFSET);
    uint32_t count = txlm_rd32(d);
    uint8_t *te = d + TXLM_TDIR_HEAD + (uint64_t)(count - 1) * TXLM_TDIR_ENTRY_SIZE;
    uint64_t at = (len + 4095) & ~(uint64_t)4095, nbytes = rows * 64 * 4;
    txlm_wr32(te + TXLM_TE_RANK, 2);
    txlm_wr64(te + TXLM_TE_DIMS, rows);
    txlm_wr64(te + TXLM_TE_DIMS + 8, 64);
    txlm_wr64(te + TXLM_TE_OFFSET, at);
    txlm_wr64(te + TXLM_TE_NBYTES, nbytes);
    uint64_t total = at + nbytes;
    txlm_wr64(tdat + TXLM_SEC_SIZE, total - txlm_rd64(tdat + TXLM_SEC_OFFSET));
    txlm_wr32(tdat + TXLM_SEC_FLAGS, txlm_rd32(tdat + TXLM_SEC_FLAGS) | TXLM_SECF_NO_CHECKSUM);
    txlm_wr64(tdat + TXLM_SEC_CHECKSUM, 0);
    txlm_wr64(b + TXLM_HDR_FILE_SIZE, total);
    fmt_fix_checksums(b, total, 1); /* TDAT carries no checksum: its hole is never read */
    int rc = fmt_write_all(path, b, len);
    int fd = open(path, O_WRONLY);
    if (rc || fd < 0 || ftruncate(fd, (off_t)total) != 0) rc = 1;
    if (fd >= 0) close(fd);
    free(b);
    return rc;
}

static void larger_than_heaps(const char *dir)
{
    txlm_device_info info[8];
    uint32_t n = 0;
    CHECK(txlm_list_devices(info, 8, &n) == TXLM_OK, "devices: %s", txlm_last_error());
    uint64_t heap = 0;
    for (uint32_t i = 0; i < n && i < 8; i++)
        if (info[i].preferred) heap = info[i].device_local_bytes;
    char path[4096];
    snprintf(path, sizeof path, "%s/huge.txlm", dir);
    /* Twice the device-local heap, or 64 GiB where it reports none. */
    uint64_t rows = (heap ? 2 * heap : (1ull << 36)) / 256 + 1;
    if (write_huge(path, rows)) {
        CHECK(0, "cannot write the sparse model (file system without holes?)");
        return;
    }
    txlm_context_options o = flt_options(0);
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    CHECK(txlm_context_create(&o, &ctx) == TXLM_OK, "context: %s", txlm_last_error());
    uint64_t base = ctx->vk.memory_used;
    txlm_model_options mo = {.no_verify = 1};
    txlm_status st = txlm_model_load(ctx, path, &mo, &m);
    CHECK_STATUS(st, TXLM_ERR_OUT_OF_MEMORY, "heaps hold");
    CHECK(m == NULL && ctx->vk.memory_used == base, "nothing kept after a refused load");
    txlm_context_destroy(ctx);
    unlink(path);
}

static void device_lost(uint64_t submits_first_feed, uint64_t submits_per_feed)
{
    char n[32];
    snprintf(n, sizeof n, "%llu", (unsigned long long)(submits_first_feed + submits_per_feed + 1));
    setenv("TXLM_FAULT_DEVICE_LOST", n, 1);
    txlm_context_options o = flt_options(0);
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    CHECK(txlm_context_create(&o, &ctx) == TXLM_OK, "context: %s", txlm_last_error());
    unsetenv("TXLM_FAULT_DEVICE_LOST"); /* read once, at creation */
    CHECK(txlm_model_load(ctx, model_path, NULL, &m) == TXLM_OK, "load: %s", txlm_last_error());
    CHECK(txlm_session_create(m, NULL, &s) == TXLM_OK, "session: %s", txlm_last_error());
    float *lp = malloc(6 * 204 * sizeof *lp);
    CHECK(txlm_session_feed(s, toks, 6, lp) == TXLM_OK, "first segment: %s", txlm_last_error());
    txlm_status st = txlm_session_feed(s, toks, 6, lp);
    CHECK_STATUS(st, TXLM_ERR_DEVICE_LOST, "lost");
    /* Lost stays lost: later work fails the same way, quickly. */
    st = txlm_session_feed(s, toks, 2, lp);
    CHECK_STATUS(st, TXLM_ERR_DEVICE_LOST, "lost");
    int32_t next;
    st = txlm_session_sample(s, NULL, &next);
    CHECK(st != TXLM_OK, "sampling on a lost device succeeded");
    /* A second session and model on the lost context still free cleanly. */
    txlm_session *s2 = NULL;
    if (txlm_session_create(m, NULL, &s2) == TXLM_OK) {
        st = txlm_session_feed(s2, toks, 6, NULL);
        CHECK_STATUS(st, TXLM_ERR_DEVICE_LOST, "lost");
        txlm_session_free(s2);
    }
    free(lp);
    txlm_session_free(s);
    txlm_model_free(m);
    txlm_context_destroy(ctx);

    /* The application recreates the context and carries on. */
    for (int round = 0; round < 2; round++) {
        ctx = NULL, m = NULL, s = NULL;
        CHECK(txlm_context_create(&o, &ctx) == TXLM_OK, "context again: %s", txlm_last_error());
        CHECK(txlm_model_load(ctx, model_path, NULL, &m) == TXLM_OK, "load again: %s", txlm_last_error());
        CHECK(txlm_session_create(m, NULL, &s) == TXLM_OK, "session again: %s", txlm_last_error());
        CHECK(txlm_session_feed(s, toks, 6, NULL) == TXLM_OK && txlm_session_feed(s, toks, 6, NULL) == TXLM_OK,
              "feeding after recreation: %s", txlm_last_error());
        CHECK(txlm_context_validation_messages(ctx) == 0, "validation messages");
        txlm_session_free(s);
        txlm_model_free(m);
        txlm_context_destroy(ctx);
    }
}

/* The driver running out of memory at allocation N (TXLM_FAULT_ALLOC_FAIL),
 * for N across the context's dummy buffer, the model's tensors and the
 * session's buffers: each fails cleanly and returns all it allocated. */
static void allocation_failures(uint64_t total)
{
    uint64_t step = total / 8 ? total / 8 : 1;
    int refused = 0;
    for (uint64_t at = 1; at <= total + 1; at += (at + step > total && at < total) ? total - at : step) {
        char n[32];
        snprintf(n, sizeof n, "%llu", (unsigned long long)at);
        setenv("TXLM_FAULT_ALLOC_FAIL", n, 1);
        txlm_context_options o = flt_options(0);
        txlm_context *ctx = NULL;
        txlm_model *m = NULL;
        txlm_session *s = NULL;
        txlm_status st = txlm_context_create(&o, &ctx);
        unsetenv("TXLM_FAULT_ALLOC_FAIL");
        uint64_t base = ctx ? ctx->vk.memory_used : 0, with_model = 0;
        if (st == TXLM_OK) st = txlm_model_load(ctx, model_path, NULL, &m);
        if (st == TXLM_OK) with_model = ctx->vk.memory_used, st = txlm_session_create(m, NULL, &s);
        if (st == TXLM_OK) st = txlm_session_feed(s, toks, 6, NULL);
        if (at <= total) {
            CHECK_STATUS(st, TXLM_ERR_OUT_OF_MEMORY, "out of device memory");
            refused++;
        } else {
            CHECK(st == TXLM_OK, "allocation %llu of %llu: %s", (unsigned long long)at, (unsigned long long)total, txlm_last_error());
        }
        if (ctx) CHECK(ctx->vk.memory_used == (s ? ctx->vk.memory_used : m ? with_model : base),
                       "allocation %llu: device memory kept after the failure", (unsigned long long)at);
        if (ctx) CHECK(txlm_context_validation_messages(ctx) == 0, "validation messages");
        txlm_session_free(s);
        txlm_model_free(m);
        txlm_context_destroy(ctx);
    }
    CHECK(refused >= 8, "only %d allocation failures tried", refused);
}

/* Devices listed while contexts are open, and a second context opened
 * beside the first: each context keeps working and closes cleanly. The
 * list's own instance used to replace the process-wide entry points with
 * its own (without VK_EXT_debug_utils), and closing a validated context
 * then called a NULL messenger destructor. */
static void devices_while_open(void)
{
    txlm_context_options o = flt_options(0);
    txlm_context *ctx[2] = {NULL, NULL};
    txlm_model *m[2] = {NULL, NULL};
    txlm_session *s[2] = {NULL, NULL};
    const int32_t ids[3] = {3, 5, 7};
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 2; i++) {
            if (!ctx[i]) {
                CHECK(txlm_context_create(&o, &ctx[i]) == TXLM_OK, "context %d: %s", i, txlm_last_error());
                CHECK(ctx[i] && txlm_model_load(ctx[i], model_path, NULL, &m[i]) == TXLM_OK, "model %d: %s", i,
                      txlm_last_error());
                CHECK(m[i] && txlm_session_create(m[i], NULL, &s[i]) == TXLM_OK, "session %d: %s", i, txlm_last_error());
            }
            if (!s[i]) return;
            CHECK(txlm_session_feed(s[i], ids, 3, NULL) == TXLM_OK, "feed %d, round %d: %s", i, round, txlm_last_error());
            txlm_device_info info[8];
            uint32_t n = 0;
            CHECK(txlm_list_devices(info, 8, &n) == TXLM_OK && n >= 1, "devices: %s", txlm_last_error());
        }
    for (int i = 0; i < 2; i++) {
        txlm_session_free(s[i]);
        txlm_model_free(m[i]);
        txlm_context_destroy(ctx[i]);
    }
    printf("two contexts fed, devices listed between their calls, both closed\n");
}

int main(void)
{
    char *dir = fmt_mkdtemp();
    snprintf(model_path, sizeof model_path, "%s/m.txlm", dir);
    if (flt_pack("char_preln", TXLM_DT_F32, model_path)) return 1;
    uint64_t base = 0, with_model = 0, first_feed = 0, per_feed = 0, allocs = 0;
    measure(&base, &with_model, &first_feed, &per_feed, &allocs);
    CHECK(with_model > base && per_feed >= 1, "measured %llu / %llu bytes, %llu submits per segment",
          (unsigned long long)base, (unsigned long long)with_model, (unsigned long long)per_feed);
    budgets(base, with_model);
    copy_rate(base);
    larger_than_heaps(dir);
    devices_while_open();
    device_lost(first_feed, per_feed);
    allocation_failures(allocs);
    unlink(model_path);
    return flt_finish("device faults", dir);
}
