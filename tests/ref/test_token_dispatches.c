/* The commands of a generated token, counted (engine/vk/debug.h): a
 * one-token step of a session whose memory is full (its kept recording
 * submitted again, as generation does), on synthetic models of 1 and 3
 * layers, so that the difference is exactly two layers' dispatches and
 * barriers and the rest is what a token costs besides its layers (the
 * embedding, pre-norm's first LayerNorm). Post-norm (the wt103 models')
 * and pre-norm, f16 weights, heads of 64; the draw that precedes the step
 * is counted too. A layer must be 5 dispatches and 5 barriers where the
 * device runs the fused kernels (fused()): the product of q, k and v, the
 * attention with its runs merged by the last, the output projection with
 * the residual and a LayerNorm, ff1, ff2 with the residual and a
 * LayerNorm; at most 8 elsewhere (the LayerNorms and the merge apart). The
 * rest of a step and the draw must be what they are (shapes[]), so a
 * change that adds a command to a token fails here, as one that drops
 * one it needs.
 *
 * Then the same for a batch of 4 and of 16 streams generating: 6
 * dispatches a layer for 4 streams on the GPU kernels (the keys and
 * values put into the rings apart, the streams' attention in one
 * dispatch), at most a dispatch per stream more than a token's elsewhere.
 *
 * The path is the context's: lavapipe's texel kernels by default, the
 * GPU-shaped kernels with TXLM_TEXEL=0 TXLM_GPU_KERNELS=1 and a GPU's
 * several streams an attention dispatch, TXLM_STREAM_SLOTS=1 (meson.build
 * runs both).
 *
 * The products' kernel choices are explained on the log meanwhile
 * (txlm_debug.explain_kernels, TXLM_EXPLAIN_KERNELS): the kernels the
 * lines say were dispatched must be exactly the product kernels counted.
 *
 * usage: test_token_dispatches WORK_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <txlm.h>

#include "context.h"
#include "dtype.h"
#include "ref_pack.h"

/* a memory long enough for the attention's keys to be split into runs
 * (merged by the last run where the kernels can) */
enum { MEM = 160, WARM = 3, STEPS = 4, STREAMS_MOST = 16 };

/* The product kernels the log's explanations named as dispatched (the
 * kernel after "=> ", or after "run as " where a twin normalises too),
 * since the last clear; other messages go to stderr. */
static unsigned char explained[TXLM_K_COUNT];
static uint32_t explain_lines;

static void on_log(void *user, txlm_log_level level, const char *msg)
{
    (void)user;
    if (level != TXLM_LOG_INFO || strncmp(msg, "kernel choice: ", 15)) {
        fprintf(stderr, "txlm: %s\n", msg);
        return;
    }
    explain_lines++;
    const char *at = strstr(msg, ", run as ");
    at = at ? at + 9 : strstr(msg, " => ") ? strstr(msg, " => ") + 4 : NULL;
    if (!at || strstr(msg, "its two parts follow")) return;
    size_t n = strcspn(at, ",: ");
    for (uint32_t k = 0; k < TXLM_K_COUNT; k++)
        if (strlen(txlm_kernel_descs[k].name) == n && !strncmp(at, txlm_kernel_descs[k].name, n)) explained[k] = 1;
}

/* Whether the kernels explained are the product kernels counted in ctx. */
static int check_explained(const char *path, const txlm_context *ctx)
{
    int failed = explain_lines == 0;
    if (failed) fprintf(stderr, "FAIL %s: no kernel choice explained\n", path);
    for (uint32_t k = 0; k < TXLM_K_COUNT; k++) {
        int counted = txlm_kernel_descs[k].tile_n && ctx->vk.debug->kernel_uses[k];
        if (counted != explained[k]) {
            fprintf(stderr, "FAIL %s: product kernel %s %s\n", path, txlm_kernel_descs[k].name,
                    counted ? "ran, but no explanation named it" : "was named, but did not run");
            failed = 1;
        }
    }
    return failed;
}

typedef struct counts {
    uint32_t dispatches, barriers, copies, fills;
    uint32_t uses[TXLM_K_COUNT];
} counts;

static counts now(const txlm_context *ctx)
{
    const txlm_debug *d = ctx->vk.debug;
    counts c = {0, d->commands[TXLM_COUNT_BARRIERS], d->commands[TXLM_COUNT_COPIES], d->commands[TXLM_COUNT_FILLS], {0}};
    for (uint32_t k = 0; k < TXLM_K_COUNT; k++) c.dispatches += c.uses[k] = d->kernel_uses[k];
    return c;
}

static counts minus(counts a, counts b)
{
    counts c = {a.dispatches - b.dispatches, a.barriers - b.barriers, a.copies - b.copies, a.fills - b.fills, {0}};
    for (uint32_t k = 0; k < TXLM_K_COUNT; k++) c.uses[k] = a.uses[k] - b.uses[k];
    return c;
}

/* "name xN, ..." of the kernels counted in c, each count divided by per. */
static const char *kernel_list(const counts *c, uint32_t per)
{
    static char buf[2048];
    size_t at = 0;
    buf[0] = 0;
    for (uint32_t k = 0; k < TXLM_K_COUNT && at < sizeof buf - 64; k++)
        if (c->uses[k])
            at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s x%u", at ? ", " : "", txlm_kernel_descs[k].name,
                                   c->uses[k] / per);
    return buf;
}

/* A draw and a step of one token of each of n streams: n == 1 a lone
 * session's calls, else a batch's of n sessions. */
typedef struct streams {
    txlm_session *s[STREAMS_MOST];
    txlm_batch *b;
    uint32_t n;
} streams;

static txlm_status feed(streams *st, const int32_t *tokens, uint32_t len)
{
    if (st->n == 1) return txlm_session_feed(st->s[0], tokens, len, NULL);
    txlm_stream_feed f[STREAMS_MOST];
    for (uint32_t i = 0; i < st->n; i++) f[i] = (txlm_stream_feed){.session = st->s[i], .tokens = tokens + i * len, .n = len};
    return txlm_batch_feed(st->b, f, st->n);
}

static txlm_status draw(streams *st, int32_t *tokens)
{
    static const txlm_sampling plain = {.temperature = 1.0f};
    if (st->n == 1) return txlm_session_sample(st->s[0], &plain, tokens);
    return txlm_batch_sample(st->b, st->s, st->n, &plain, NULL, tokens);
}

/* The counts of one generated token's step of n streams (and *draw: its
 * draw's) on the model at path, after a prompt that fills each memory;
 * 1 on a failure. */
static int token_counts(const char *path, uint32_t n, counts *step, counts *drawn, txlm_context **ctx_out)
{
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    streams st = {.n = n};
    txlm_session_options so = {.mem_len = MEM, .same_length = -1, .max_segment = MEM};
    int failed = txlm_context_create(NULL, &ctx) || txlm_model_load(ctx, path, NULL, &m) ||
                 (n > 1 && txlm_batch_create(m, n, &so, &st.b));
    for (uint32_t i = 0; i < n && !failed; i++) failed = txlm_session_create(m, &so, &st.s[i]) != TXLM_OK;
    *ctx_out = ctx;
    int32_t *prompt = malloc((size_t)n * MEM * sizeof *prompt), tok[STREAMS_MOST];
    for (uint32_t i = 0; i < n * MEM; i++) prompt[i] = (int32_t)(i * 37 % 400);
    if (!failed) ctx->vk.debug->count = ctx->vk.debug->explain_kernels = 1;
    memset(explained, 0, sizeof explained), explain_lines = 0;
    failed = failed || feed(&st, prompt, MEM) != TXLM_OK;
    for (uint32_t i = 0; i < n && !failed; i++) txlm_session_set_seed(st.s[i], 5 + i);
    counts draw_sum = {0};
    for (uint32_t t = 0; t < WARM + STEPS && !failed; t++) {
        counts c0 = now(ctx);
        failed = draw(&st, tok) != TXLM_OK;
        counts c1 = now(ctx);
        uint32_t replays = ctx->vk.debug->replays;
        for (uint32_t i = 0; i < n; i++) tok[i] = tok[i] < 0 ? 0 : tok[i];
        failed = failed || feed(&st, tok, 1) != TXLM_OK;
        counts c2 = now(ctx);
        if (t < WARM || failed) continue;
        if (ctx->vk.debug->replays != replays + 1) {
            fprintf(stderr, "FAIL %s: step %u of %u streams was recorded afresh, not replayed\n", path, t, n);
            failed = 1;
        }
        counts d = minus(c1, c0), s = minus(c2, c1);
        if (t > WARM && memcmp(&s, step, sizeof s)) {
            fprintf(stderr, "FAIL %s: step %u of %u streams made %u dispatches, the step before %u\n", path, t, n,
                    s.dispatches, step->dispatches);
            failed = 1;
        }
        *step = s;
        draw_sum.dispatches += d.dispatches, draw_sum.barriers += d.barriers;
    }
    if (failed) fprintf(stderr, "FAIL %s (%u streams): %s\n", path, n, txlm_last_error());
    failed = failed || check_explained(path, ctx);
    *drawn = (counts){draw_sum.dispatches / STEPS, draw_sum.barriers / STEPS, 0, 0, {0}};
    for (uint32_t i = 0; i < n; i++) txlm_session_free(st.s[i]);
    txlm_batch_free(st.b);
    txlm_model_free(m);
    free(prompt);
    return failed;
}

/* A layer's commands where the fused kernels run, and at most elsewhere. */
enum { LAYER_FUSED = 5, LAYER_MOST = 8 };

/* Whether the context runs a token's fused kernels (f16 weights, heads of 64). */
static int fused(const txlm_context *ctx)
{
    const txlm_vk *vk = &ctx->vk;
    if (vk->gpu_kernels) /* the f16 models' attention: on the matrix units where they are (attention.c) */
        return txlm_kernel_usable(vk, TXLM_K_GEMV_GPU_LN_F16) &&
               txlm_kernel_usable(vk, txlm_kernel_usable(vk, TXLM_K_ATTN_CM) ? TXLM_K_ATTN_CM_MERGE : TXLM_K_ATTN_TILE_MERGE);
    return vk->texel && txlm_kernel_usable(vk, TXLM_K_GEMV_TEX_LN_F16) && txlm_kernel_usable(vk, TXLM_K_ATTN_SPLIT_SG64_MERGE);
}

/* rest: a step's dispatches besides its layers (post-norm: each of the 4
 * clusters' gather and projection; pre-norm: the gather and layer 0's
 * LayerNorm), and the same where the LayerNorms run apart (pre-norm: each
 * layer then has the next one's, the last none); draw: the most a draw
 * may make */
static const struct shape {
    const char *name, *config;
    uint32_t rest, rest_apart, draw;
} shapes[] = {
    /* wt103's layout, small: post-norm, four clusters of the adaptive input */
    {"post-norm",
     "{\"n_token\": 400, \"d_model\": 64, \"d_embed\": 256, \"n_head\": 2, \"d_head\": 64, \"d_inner\": 128,"
     " \"n_layer\": %u, \"div_val\": 4, \"cutoffs\": [100, 200, 300], \"tie_projs\": [false, true, true, true],"
     " \"same_length\": true, \"clamp_len\": 1000, \"mem_len\": 160}", 8, 8, 5},
    {"pre-norm",
     "{\"n_token\": 400, \"d_model\": 64, \"n_head\": 2, \"d_head\": 64, \"d_inner\": 128, \"n_layer\": %u,"
     " \"pre_lnorm\": true, \"mem_len\": 160}", 2, 1, 2},
};

/* The streams of a step the test counts: one (a generated token), and a
 * batch's 4 and 16 (a batch generating) */
static const uint32_t stream_counts[] = {1, 4, 16};
#define N_COUNTS (sizeof stream_counts / sizeof *stream_counts)
/* A batch of 4's layer where the fused kernels run on GPUs: the product
 * of q, k and v, the keys and values put into the rings (kv_put), the
 * streams' attention in one dispatch, the two products with a LayerNorm,
 * ff1 */
enum { BATCH4_GPU = 6 };

/* Checks one shape's counts on n streams (c1, c3: of the 1- and 3-layer
 * models); returns 1 on a failure. */
static int check_counts(const struct shape *sh, uint32_t n, const txlm_context *ctx, const counts *step, const counts *drawn)
{
    counts two = minus(step[1], step[0]);
    uint32_t layer = two.dispatches / 2, barriers = two.barriers / 2, rest = step[0].dispatches - layer;
    int f = fused(ctx);
    printf("%s, %u stream%s (%s kernels%s): a layer %u dispatches and %u barriers, %u copies, %u fills; the rest of a step "
           "%u dispatches and %u barriers; a draw %u dispatches and %u barriers (1 layer) %u and %u (3)\n",
           sh->name, n, n > 1 ? "s" : "", ctx->vk.gpu_kernels ? "GPU" : ctx->vk.texel ? "texel" : "storage-buffer",
           f ? ", fused" : "", layer, barriers, two.copies / 2, two.fills / 2, rest, step[0].barriers - barriers,
           drawn[0].dispatches, drawn[0].barriers, drawn[1].dispatches, drawn[1].barriers);
    printf("  a layer: %s\n", kernel_list(&two, 2));
    int ok = two.copies == 0 && two.fills == 0;
    if (n == 1)
        ok = ok && (f ? layer == LAYER_FUSED && barriers == LAYER_FUSED : layer <= LAYER_MOST && barriers <= LAYER_MOST) &&
             rest == (f ? sh->rest : sh->rest_apart) && drawn[0].dispatches <= sh->draw && drawn[1].dispatches <= sh->draw;
    else if (n == 4 && f && ctx->vk.gpu_kernels)
        ok = ok && layer == BATCH4_GPU && barriers == BATCH4_GPU;
    else
        ok = ok && layer <= LAYER_MOST + n + 1; /* the attention a dispatch per stream at worst */
    if (!ok && n == 1)
        fprintf(stderr, "FAIL %s: a layer must make %s%u dispatches and barriers and no copies or fills, the rest of a step "
                        "%u dispatches, a draw at most %u\n",
                sh->name, f ? "" : "at most ", f ? LAYER_FUSED : LAYER_MOST, f ? sh->rest : sh->rest_apart, sh->draw);
    else if (!ok)
        fprintf(stderr, "FAIL %s, %u streams: a layer must make %s%u dispatches and no copies or fills\n", sh->name, n,
                n == 4 && f && ctx->vk.gpu_kernels ? "" : "at most ",
                n == 4 && f && ctx->vk.gpu_kernels ? BATCH4_GPU : LAYER_MOST + n + 1);
    return !ok;
}

/* Packs shape sh with 1 and 3 layers and checks the counts of each
 * number of streams; returns the failures. */
static int shape_counts(const struct shape *sh, const char *work)
{
    char path[2][1024];
    int failures = 0;
    for (int j = 0; j < 2; j++) {
        char json[1024];
        txlm_err err = {0, ""};
        snprintf(path[j], sizeof path[j], "%s/%s-%u.txlm", work, sh->name, 1 + 2 * j);
        snprintf(json, sizeof json, sh->config, 1 + 2 * j);
        if (ref_pack_synthetic(json, TXLM_DT_F16, 7, path[j], &err)) {
            fprintf(stderr, "FAIL %s: packing: %s\n", sh->name, err.msg);
            return 1;
        }
    }
    for (size_t c = 0; c < N_COUNTS; c++) {
        counts step[2], drawn[2];
        txlm_context *ctx[2] = {NULL, NULL};
        int failed = 0;
        for (int j = 0; j < 2 && !failed; j++) failed = token_counts(path[j], stream_counts[c], &step[j], &drawn[j], &ctx[j]);
        failures += failed ? 1 : check_counts(sh, stream_counts[c], ctx[0], step, drawn);
        for (int j = 0; j < 2; j++) {
            uint64_t vm = ctx[j] ? txlm_context_validation_messages(ctx[j]) : 0;
            if (vm) fprintf(stderr, "FAIL %s: %llu validation messages\n", sh->name, (unsigned long long)vm);
            failures += vm != 0;
            txlm_context_destroy(ctx[j]);
        }
    }
    unlink(path[0]), unlink(path[1]);
    return failures;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s WORK_DIR\n", argv[0]);
        return 2;
    }
    mkdir(argv[1], 0755);
    txlm_set_log_callback(on_log, NULL);
    int failures = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) failures += shape_counts(&shapes[i], argv[1]);
    return failures ? 1 : 0;
}
