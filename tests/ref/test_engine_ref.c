/* The engine against the CPU reference on synthetic models (txlm-pack
 * --synthetic's generator, packed in the build folder): every
 * log-probability of several segments fed through one session, memory
 * carried. Cases cover what the golden ones do not: quantised weights,
 * one head of 128, head size 8, and a model whose embedding (160 MiB)
 * exceeds one storage-buffer binding (128 MiB on lavapipe), so it is
 * split across bindings both for the gather and for the tied output layer.
 * Models whose widths the engine pads (model_pad.c) check that it did, and
 * every case saves its session's state after the segments and continues it
 * in a model loaded with the other layout (padded / not), against the
 * reference.
 *
 * usage: test_engine_ref WORK_DIR CASE */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <txlm.h>

#include "context.h"
#include "model.h"
#include "ref_model.h"
#include "ref_pack.h"
#include "txlm_file.h"

typedef struct test_case {
    const char *name, *config;
    uint32_t dtype;
    uint32_t segs[4];     /* segment lengths, 0-terminated */
    uint64_t min_largest; /* bytes the largest tensor must exceed */
    int32_t clamp_len;    /* session overrides, as in txlm_session_options (0, -1: the model's) */
    int same_length;
    uint32_t dev[3];      /* device widths d, dh, d_inner the engine must choose ({0}: the model's) */
} test_case;

static const test_case cases[] = {
    /* 40000 x 1024 f32 embedding, tied to the output layer: 160 MiB in one tensor */
    {"big_embedding",
     "{\"n_token\": 40000, \"d_model\": 1024, \"n_head\": 2, \"d_head\": 16, \"d_inner\": 64, \"n_layer\": 1,"
     " \"mem_len\": 4}",
     TXLM_DT_F32, {5, 3}, 128ull << 20, 0, -1, {0}},
    {"preln_q8_0_dh8",
     "{\"n_token\": 700, \"d_model\": 64, \"d_embed\": 128, \"n_head\": 5, \"d_head\": 8, \"d_inner\": 96, \"n_layer\": 2,"
     " \"div_val\": 2, \"cutoffs\": [100, 400], \"pre_lnorm\": true, \"untie_r\": false, \"same_length\": true,"
     " \"clamp_len\": 6, \"mem_len\": 9}",
     TXLM_DT_Q8_0, {7, 1, 6, 9}, 0, 0, -1, {0}},
    {"div1_f16_one_head_128",
     "{\"n_token\": 500, \"d_model\": 64, \"d_embed\": 32, \"n_head\": 1, \"d_head\": 128, \"d_inner\": 128,"
     " \"n_layer\": 2, \"cutoffs\": [60, 200], \"tie_projs\": [true, false, true], \"mem_len\": 5}",
     TXLM_DT_F16, {6, 6, 2}, 0, 0, -1, {0}},
    {"q4_0_untied",
     "{\"n_token\": 300, \"d_model\": 96, \"n_head\": 3, \"d_head\": 32, \"d_inner\": 160, \"n_layer\": 2,"
     " \"tie_weight\": false, \"same_length\": true, \"mem_len\": 20, \"clamp_len\": 15}",
     TXLM_DT_Q4_0, {9, 5, 13}, 0, 0, -1, {0}},
    /* the same model with the session overriding clamp_len and same_length */
    {"q4_0_session_options",
     "{\"n_token\": 300, \"d_model\": 96, \"n_head\": 3, \"d_head\": 32, \"d_inner\": 160, \"n_layer\": 2,"
     " \"tie_weight\": false, \"same_length\": true, \"mem_len\": 20, \"clamp_len\": 15}",
     TXLM_DT_Q4_0, {9, 5, 13}, 0, 4, 0, {0}},
    /* nothing a multiple of 8 or 4; with projections d_model stays 36, heads
     * are padded to 16 and d_inner to 64 (TXLM_NO_PAD: the plain kernels and
     * three-pass attention throughout) */
    {"odd_dims",
     "{\"n_token\": 97, \"d_model\": 36, \"n_head\": 3, \"d_head\": 7, \"d_inner\": 50, \"n_layer\": 3,"
     " \"div_val\": 3, \"cutoffs\": [20, 50], \"tie_projs\": [false, true, false], \"mem_len\": 3, \"clamp_len\": 5}",
     TXLM_DT_F32, {5, 7, 1, 6}, 0, 0, -1, {36, 16, 64}},
    /* no memory with same_length masks every key of every query: the
     * reference's softmax over all-lowest scores is uniform over the keys */
    {"same_length_no_memory",
     "{\"n_token\": 120, \"d_model\": 32, \"n_head\": 2, \"d_head\": 16, \"d_inner\": 64, \"n_layer\": 2,"
     " \"same_length\": true, \"mem_len\": 0}",
     TXLM_DT_F32, {6, 3, 1}, 0, 0, -1, {0}},
    /* the base shape's oddities, small: d_model, d_head and d_inner all padded
     * (410/41/2100 -> 416/48/2112 there), post-norm, f32 */
    {"padded_direct",
     "{\"n_token\": 150, \"d_model\": 38, \"n_head\": 3, \"d_head\": 7, \"d_inner\": 50, \"n_layer\": 2,"
     " \"cutoffs\": [40, 90], \"mem_len\": 6, \"clamp_len\": 5}",
     TXLM_DT_F32, {5, 7, 1, 6}, 0, 0, -1, {48, 16, 64}},
    /* segments of 16 rows and more (the block kernels, workgroup-memory tiles on GPUs) */
    {"long_segments_q8_0",
     "{\"n_token\": 400, \"d_model\": 64, \"d_embed\": 128, \"n_head\": 4, \"d_head\": 16, \"d_inner\": 96,"
     " \"n_layer\": 2, \"div_val\": 2, \"cutoffs\": [100, 250], \"same_length\": true, \"mem_len\": 24,"
     " \"clamp_len\": 30}",
     TXLM_DT_Q8_0, {20, 17, 1, 33}, 0, 0, -1, {0}},
    /* the same in f16: the matrix units' products where the device has them (GPU kernels) */
    {"long_segments_f16",
     "{\"n_token\": 400, \"d_model\": 64, \"d_embed\": 128, \"n_head\": 4, \"d_head\": 16, \"d_inner\": 96,"
     " \"n_layer\": 2, \"div_val\": 2, \"cutoffs\": [100, 250], \"same_length\": true, \"mem_len\": 24,"
     " \"clamp_len\": 30}",
     TXLM_DT_F16, {20, 17, 1, 33}, 0, 0, -1, {0}},
    /* memories past 64 keys: a generated token's attention split into runs
     * that the last run merges, pre-norm LayerNorms made by the product
     * before them, post-norm ones by the product's last workgroup (GPU
     * kernels: attn_tile_merge or attn_cm_merge, gemv_gpu_ln) */
    {"long_memory_preln_f16",
     "{\"n_token\": 300, \"d_model\": 64, \"n_head\": 4, \"d_head\": 16, \"d_inner\": 96, \"n_layer\": 2,"
     " \"cutoffs\": [80], \"pre_lnorm\": true, \"mem_len\": 100}",
     TXLM_DT_F16, {90, 1, 1, 20}, 0, 0, -1, {0}},
    {"long_memory_q8_0",
     "{\"n_token\": 300, \"d_model\": 64, \"d_embed\": 128, \"n_head\": 2, \"d_head\": 32, \"d_inner\": 128,"
     " \"n_layer\": 2, \"div_val\": 2, \"cutoffs\": [80, 200], \"same_length\": true, \"mem_len\": 120,"
     " \"clamp_len\": 90}",
     TXLM_DT_Q8_0, {100, 1, 2, 1}, 0, 0, -1, {0}},
    /* pre-norm, f16, untied output layer, shared r biases, same_length, 10 heads of 41 */
    {"padded_preln_f16",
     "{\"n_token\": 90, \"d_model\": 42, \"n_head\": 10, \"d_head\": 41, \"d_inner\": 70, \"n_layer\": 2,"
     " \"cutoffs\": [30], \"pre_lnorm\": true, \"tie_weight\": false, \"untie_r\": false, \"same_length\": true,"
     " \"mem_len\": 7}",
     TXLM_DT_F16, {6, 1, 9, 2}, 0, 0, -1, {48, 48, 80}},
};

/* The largest tensor's bytes. */
static uint64_t largest_tensor(const char *path)
{
    txlm_file *f = NULL;
    txlm_err err = {0, ""};
    uint64_t most = 0;
    if (txlm_file_open(path, TXLM_OPEN_NO_VERIFY, &f, &err)) return 0;
    for (uint32_t i = 0; i < txlm_file_tensor_count(f); i++)
        if (txlm_file_tensor(f, i)->nbytes > most) most = txlm_file_tensor(f, i)->nbytes;
    txlm_file_close(f);
    return most;
}

/* What ran on the matrix units (the context counts dispatches by kernel):
 * never an f32 model's work; and where a test wants them (CI on a
 * lavapipe that has them: TXLM_TEST_WANT_COOPMAT) with the GPU kernels,
 * the attention on attn_cm wherever the q|k|v projection is stored in a
 * smaller type and the heads are what that kernel takes (whole 16-wide
 * fragments, at most 64). Returns 1 on a failure. */
static int check_matrix_units(const test_case *c, const txlm_context *ctx, const txlm_model *m)
{
    const uint32_t *uses = ctx->vk.debug->kernel_uses;
    uint32_t attn = uses[TXLM_K_ATTN_CM] + uses[TXLM_K_ATTN_CM_X8] + uses[TXLM_K_ATTN_CM_MERGE] + uses[TXLM_K_ATTN_CM_MERGE_X8],
             products = 0;
    for (uint32_t k = 0; k < TXLM_K_COUNT; k++)
        if (txlm_kernel_descs[k].needs & TXLM_NEED_COOPMAT) products += uses[k];
    products -= attn;
    if (ctx->vk.coopmat.on) printf("%s: matrix units: %u dispatches of linear_cm_*, %u of attn_cm\n", c->name, products, attn);
    if (c->dtype == TXLM_DT_F32 && products + attn) {
        fprintf(stderr, "FAIL %s: an f32 model on the matrix units (%u dispatches)\n", c->name, products + attn);
        return 1;
    }
    const char *want = getenv("TXLM_TEST_WANT_COOPMAT");
    int smaller = m->layers[0].qkv->dtype != TXLM_DT_F32;
    if (want && *want && ctx->vk.gpu_kernels && smaller && m->dev.dh % 16 == 0 && m->dev.dh <= 64 && !attn) {
        fprintf(stderr, "FAIL %s: the attention did not run on the matrix units (attn_cm)%s%s\n", c->name,
                ctx->vk.coopmat.on ? "" : ": ", ctx->vk.coopmat.on ? "" : ctx->vk.coopmat.off_why);
        return 1;
    }
    return 0;
}

/* Every matrix the model binds has the device's widths (model_pad.c
 * widens by the tensor table's terms): d_model's columns, heads of dh,
 * d_inner; without projections the embedding and output tables and the
 * cluster weights are rows of the device's d_model. Rows a kernel reads
 * in whole texels: a width left narrow still computes the same numbers,
 * on the slower kernels, so only this sees it. 1 on a mismatch. */
static int check_device_widths(const test_case *c, const txlm_model *m)
{
    const txlm_dims *dv = &m->dev;
    const txlm_hparams *h = &m->h;
    int direct = h->div_val == 1 && h->d_embed == h->d_model, bad = 0;
    for (uint32_t n = 0; n < h->n_layer; n++) {
        const txlm_layer *L = &m->layers[n];
        bad |= L->qkv->rows != 3 * h->n_head * dv->dh || L->qkv->cols != dv->d || L->r_net->rows != h->n_head * dv->dh ||
               L->o_net->rows != dv->d || L->o_net->cols != h->n_head * dv->dh || L->r_w_bias->cols != dv->dh ||
               L->attn_ln_g->cols != dv->d || L->ff_w1->rows != dv->di || L->ff_b1->cols != dv->di ||
               L->ff_w2->rows != dv->d || L->ff_w2->cols != dv->di || L->ff_ln_b->cols != dv->d;
    }
    if (direct)
        bad |= m->emb[0].table->cols != dv->d || m->out[0].weight->cols != dv->d || (m->cluster_w && m->cluster_w->cols != dv->d);
    if (bad) fprintf(stderr, "FAIL %s: a tensor's device shape is not the device widths %u/%u/%u\n", c->name, dv->d, dv->dh, dv->di);
    return bad;
}

static int run_case(const test_case *c, const char *work)
{
    char path[1024];
    txlm_err err = {0, ""};
    snprintf(path, sizeof path, "%s/%s.txlm", work, c->name);
    if (ref_pack_synthetic(c->config, c->dtype, 42, path, &err)) {
        fprintf(stderr, "FAIL %s: packing: %s\n", c->name, err.msg);
        return 1;
    }
    uint64_t largest = largest_tensor(path);
    if (largest <= c->min_largest) {
        fprintf(stderr, "FAIL %s: largest tensor %llu bytes, expected more than %llu\n", c->name,
                (unsigned long long)largest, (unsigned long long)c->min_largest);
        unlink(path);
        return 1;
    }
    ref_model *rm = NULL;
    ref_session *rs = NULL;
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    uint32_t max_seg = 0, total = 0;
    for (int i = 0; i < 4 && c->segs[i]; i++) {
        max_seg = c->segs[i] > max_seg ? c->segs[i] : max_seg;
        total += c->segs[i];
    }
    txlm_session_options so = {0, c->clamp_len, c->same_length, max_seg, 0};
    ref_session_options ro = {0, c->clamp_len, c->same_length};
    int failed = ref_model_open(path, &rm, &err) || ref_session_new(rm, &ro, &rs, &err);
    if (failed) fprintf(stderr, "FAIL %s: reference: %s\n", c->name, err.msg);
    txlm_status st = failed ? TXLM_OK : txlm_context_create(NULL, &ctx);
    if (!st && !failed) ctx->vk.debug->count = 1; /* kernels by name: check_matrix_units */
    if (!st && !failed) st = txlm_model_load(ctx, path, NULL, &m);
    if (!st && !failed) st = txlm_session_create(m, &so, &s);
    /* the same file in the other layout, for the state to continue in */
    txlm_model *m2 = NULL;
    txlm_session *s2 = NULL;
    if (!st && !failed) {
        int padded = m->dev.d != m->h.d_model || m->dev.dh != m->h.d_head || m->dev.di != m->h.d_inner;
        ctx->vk.debug->no_pad = padded;
        st = txlm_model_load(ctx, path, NULL, &m2);
        ctx->vk.debug->no_pad = 0;
        if (!st) st = txlm_session_create(m2, &so, &s2);
        uint32_t want[3] = {c->dev[0] ? c->dev[0] : m->h.d_model, c->dev[0] ? c->dev[1] : m->h.d_head,
                            c->dev[0] ? c->dev[2] : m->h.d_inner};
        if (!st && (m->dev.d != want[0] || m->dev.dh != want[1] || m->dev.di != want[2])) {
            fprintf(stderr, "FAIL %s: device widths %u/%u/%u, expected %u/%u/%u\n", c->name, m->dev.d, m->dev.dh,
                    m->dev.di, want[0], want[1], want[2]);
            failed = 1;
        }
        if (!st && (check_device_widths(c, m) || check_device_widths(c, m2))) failed = 1;
        if (!st && padded && (m2->dev.d != m->h.d_model || m2->dev.dh != m->h.d_head || m2->dev.di != m->h.d_inner)) {
            fprintf(stderr, "FAIL %s: no_pad did not change the layout\n", c->name);
            failed = 1;
        }
    }
    unlink(path); /* a large temporary: gone whatever happens next */
    /* a state with no memory yet moves between the layouts too */
    if (!st && !failed) {
        size_t size = txlm_session_state_size(s), wrote = 0;
        void *buf = malloc(size);
        if ((st = txlm_session_save(s, buf, size, &wrote)) || (st = txlm_session_restore(s2, buf, wrote))) {
            fprintf(stderr, "FAIL %s: empty state: %s\n", c->name, txlm_last_error());
            failed = 1;
        }
        free(buf);
    }
    if (st) {
        fprintf(stderr, "FAIL %s: %s\n", c->name, txlm_last_error());
        failed = 1;
    }
    uint32_t V = rm ? ref_model_hparams(rm)->n_token : 0;
    double worst = 0;
    uint64_t seed = 0x2545f4914f6cdd1dull;
    for (int k = 0; !failed && k < 4 && c->segs[k]; k++) {
        uint32_t n = c->segs[k];
        int32_t tok[128];
        if (n > sizeof tok / sizeof *tok) {
            fprintf(stderr, "FAIL %s: a segment of %u tokens, more than this test holds\n", c->name, n);
            failed = 1;
            break;
        }
        for (uint32_t i = 0; i < n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            tok[i] = (int32_t)((seed >> 33) % V);
        }
        float *want = malloc((size_t)n * V * sizeof *want), *got = malloc((size_t)n * V * sizeof *got);
        if (ref_forward(rs, tok, n, want, &err)) {
            fprintf(stderr, "FAIL %s: reference: %s\n", c->name, err.msg);
            failed = 1;
        } else if (k % 2 == 0 && (st = txlm_session_feed(s, tok, n, got))) {
            fprintf(stderr, "FAIL %s: feed: %s\n", c->name, txlm_last_error());
            failed = 1;
        } else if (k % 2 == 0) {
            for (size_t i = 0; i < (size_t)n * V; i++) {
                double d = fabs((double)got[i] - want[i]);
                if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
            }
        } else {
            /* odd segments through the scoring path (head and only the tails the targets need) */
            int32_t tgt[64];
            for (uint32_t i = 0; i < n; i++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                tgt[i] = (int32_t)((seed >> 33) % V);
            }
            if ((st = txlm_session_score(s, tok, tgt, n, got))) {
                fprintf(stderr, "FAIL %s: score: %s\n", c->name, txlm_last_error());
                failed = 1;
            }
            for (uint32_t i = 0; !st && i < n; i++) {
                double d = fabs((double)got[i] - want[(size_t)i * V + (uint32_t)tgt[i]]);
                if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
            }
        }
        free(want), free(got);
    }
    /* the state, continued in the other layout */
    if (!failed) {
        size_t size = txlm_session_state_size(s), wrote = 0;
        void *buf = malloc(size);
        uint32_t n = 3;
        int32_t tok[3] = {1, (int32_t)(V / 2), (int32_t)V - 1};
        float *want = malloc((size_t)n * V * sizeof *want), *got = malloc((size_t)n * V * sizeof *got);
        if ((st = txlm_session_save(s, buf, size, &wrote)) || (st = txlm_session_restore(s2, buf, wrote)) ||
            (st = txlm_session_feed(s2, tok, n, got))) {
            fprintf(stderr, "FAIL %s: state: %s\n", c->name, txlm_last_error());
            failed = 1;
        } else if (ref_forward(rs, tok, n, want, &err)) {
            fprintf(stderr, "FAIL %s: reference: %s\n", c->name, err.msg);
            failed = 1;
        }
        for (size_t i = 0; !failed && i < (size_t)n * V; i++) {
            double d = fabs((double)got[i] - want[i]);
            if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
        }
        free(buf), free(want), free(got);
    }
    /* the matrix units multiply f16 (activations rounded to 11 bits, a
     * quantised block's scaled values too): the bound of f16 weights */
    double bound = ctx && ctx->vk.coopmat.on && ctx->vk.gpu_kernels && c->dtype != TXLM_DT_F32 ? 2e-2 : 1e-3;
    if (!failed && !(worst < bound)) {
        fprintf(stderr, "FAIL %s: max |log-prob diff| %g over %u positions\n", c->name, worst, total);
        failed = 1;
    }
    if (!failed) failed = check_matrix_units(c, ctx, m);
    if (ctx) {
        uint64_t vm = txlm_context_validation_messages(ctx);
        if (vm) fprintf(stderr, "FAIL %s: %llu Vulkan validation messages\n", c->name, (unsigned long long)vm);
        failed |= vm != 0;
        printf("%s: largest tensor %.2f MiB, weights split every %llu bytes, %u positions, max |log-prob diff| %.3g\n",
               c->name, largest / 1048576.0, (unsigned long long)ctx->vk.split_bytes, total, worst);
    }
    txlm_session_free(s);
    txlm_session_free(s2);
    txlm_model_free(m);
    txlm_model_free(m2);
    txlm_context_destroy(ctx);
    ref_session_free(rs);
    ref_model_free(rm);
    return failed;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s WORK_DIR CASE\n", argv[0]);
        return 2;
    }
    mkdir(argv[1], 0755);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(cases[i].name, argv[2])) {
            return run_case(&cases[i], argv[1]);
        }
    fprintf(stderr, "unknown case '%s'\n", argv[2]);
    return 2;
}
