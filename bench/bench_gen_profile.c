/* Where the time of one generated token goes, op by op, for the
 * wt103-shaped model (18 layers, d_model 1024, 16 heads x 64, d_inner
 * 4096, memory 640, head of 20000 words). Each op is recorded 18 times
 * (once per layer, each layer with weights of its own, so they come from
 * memory as in a real token, not from the cache) in one command buffer,
 * so its time includes the fixed cost of its dispatches; the table adds
 * the ops up per token. A real token makes q, k and v in one product
 * (TXLM_LINF_SPLIT) and a post-norm model's two LayerNorms inside the o
 * and ff2 products (txlm_op_linear_ln); here they stay separate rows, so
 * the sum is a little above a real token (5 dispatches a layer,
 * docs/performance.md).
 * usage: bench_gen_profile [f32|q8_0] [reps] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "context.h"
#include "ops.h"
#include "quantize.h"

enum { LAYERS = 18, D = 1024, H = 16, DH = 64, DI = 4096, MEM = 640, HEAD = 20000 };

static txlm_context *ctx;
static txlm_rec rec;
static txlm_ops ops;
static txlm_err e;

static txlm_gpu_tensor weight(uint32_t rows, uint32_t cols, uint32_t dt)
{
    size_t n = (size_t)rows * cols;
    float *w = malloc(n * 4);
    uint8_t *q = malloc(n * 4);
    bench_pattern(w, n);
    if (dt == TXLM_DT_Q8_0) txlm_quantize_q8_0(w, n, q);
    else memcpy(q, w, n * 4);
    txlm_gpu_tensor t;
    if (txlm_tensor_alloc(&ctx->vk, rows, cols, dt, TXLM_BUF_DEVICE, &t, &e) || txlm_tensor_write(&ctx->vk, &t, q, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        exit(1);
    }
    free(w), free(q);
    return t;
}

typedef struct op {
    const char *name;
    uint32_t per_token; /* how many times a token runs it */
    double ms;          /* one run, median */
} op;

/* A wt103-shaped token's weights and buffers: every layer's weights are
 * rows [l * n, (l + 1) * n) of one tensor. */
typedef struct token {
    txlm_gpu_tensor wq, wkv, wo, w1, w2, head, proj, tiny, g, b, rw, rr, rk, kv;
    txlm_attn_shape sh;
    txlm_buf x, y, scratch, sync;
    txlm_arg xa, ya;
} token;

static void token_make(token *t, uint32_t dt)
{
    t->wq = weight(LAYERS * H * DH, D, dt), t->wkv = weight(LAYERS * 2 * H * DH, D, dt);
    t->wo = weight(LAYERS * D, H * DH, dt), t->w1 = weight(LAYERS * DI, D, dt), t->w2 = weight(LAYERS * D, DI, dt);
    t->head = weight(HEAD, D, dt);
    t->proj = weight(D, D, TXLM_DT_F32), t->tiny = weight(8, 8, TXLM_DT_F32);
    t->g = weight(1, D, TXLM_DT_F32), t->b = weight(1, D, TXLM_DT_F32);
    t->rw = weight(H, DH, TXLM_DT_F32), t->rr = weight(H, DH, TXLM_DT_F32);
    t->rk = weight(LAYERS * (MEM + 1), H * DH, TXLM_DT_F32);
    t->kv = weight(LAYERS * (MEM + 1), 2 * H * DH, TXLM_DT_F32); /* each layer its own memory, as in a real token */
    t->sh = (txlm_attn_shape){1, MEM, H, DH, MEM, 1, MEM, 0, 0, 0, 0, 0, 0};
    txlm_buf_create(&ctx->vk, (size_t)DI * 4, TXLM_BUF_DEVICE, &t->x, &e);
    txlm_buf_create(&ctx->vk, (size_t)HEAD * 4, TXLM_BUF_DEVICE, &t->y, &e);
    txlm_buf_create(&ctx->vk, txlm_attn_split_bytes(&t->sh), TXLM_BUF_DEVICE, &t->scratch, &e);
    /* the counts with which the last workgroup finishes an op, zero as a session keeps them
     * (TXLM_PROFILE_NO_SYNC=1: the separate merge dispatch instead) */
    txlm_buf_create(&ctx->vk, TXLM_SYNC_WORDS * 4, TXLM_BUF_READBACK, &t->sync, &e);
    memset(t->sync.map, 0, TXLM_SYNC_WORDS * 4);
    if (!getenv("TXLM_PROFILE_NO_SYNC")) ops.sync = txlm_view_of(&t->sync);
    bench_fill(&ctx->vk, &t->x, &e);
    t->xa = txlm_arg_of(&t->x, 0, DI), t->ya = txlm_arg_of(&t->y, 0, HEAD);
}

static void token_free(token *t)
{
    txlm_gpu_tensor *ts[] = {&t->wq, &t->wkv, &t->wo, &t->w1, &t->w2, &t->head, &t->proj,
                             &t->tiny, &t->g, &t->b, &t->rw, &t->rr, &t->rk, &t->kv};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) txlm_tensor_free(&ctx->vk, ts[i]);
    txlm_buf *bs[] = {&t->x, &t->y, &t->scratch, &t->sync};
    for (size_t i = 0; i < sizeof bs / sizeof *bs; i++) txlm_buf_destroy(&ctx->vk, bs[i]);
}

/* Op k of the table below, for layer l. */
static void record_op(token *t, size_t k, uint32_t l)
{
    txlm_arg xa = t->xa, ya = t->ya;
    switch (k) {
    case 0: txlm_op_linear(&ops, &(txlm_linear_args){.x = xa, .w = &t->wq, .row0 = l * H * DH, .n = H * DH, .y = ya, .m = 1}); break;
    case 1: txlm_op_linear(&ops, &(txlm_linear_args){.x = xa, .w = &t->wkv, .row0 = l * 2 * H * DH, .n = 2 * H * DH, .y = ya, .m = 1}); break;
    case 2:
        t->sh.kv_row0 = l * (MEM + 1);
        txlm_op_attention(&ops, &(txlm_attention_args){.shape = &t->sh, .q = txlm_view_of(&t->x), .kv = txlm_tensor_view(&t->kv),
                                                       .rk = txlm_tensor_view(&t->rk), .rk_off = l * (MEM + 1) * H * DH,
                                                       .r_w_bias = &t->rw, .r_r_bias = &t->rr,
                                                       .scratch = txlm_view_of(&t->scratch), .out = txlm_view_of(&t->y)});
        break;
    case 3: txlm_op_linear(&ops, &(txlm_linear_args){.x = xa, .w = &t->wo, .row0 = l * D, .n = D, .residual = &ya, .y = ya, .m = 1}); break;
    case 4:
        txlm_op_layernorm(&ops, &(txlm_layernorm_args){.x = xa, .g = &t->g, .b = &t->b, .y = ya, .rows = 1, .d = D,
                                                       .d_out = D, .eps = 1e-5f});
        break;
    case 5: txlm_op_linear(&ops, &(txlm_linear_args){.x = xa, .w = &t->w1, .row0 = l * DI, .n = DI, .y = ya, .m = 1, .flags = TXLM_LIN_RELU}); break;
    case 6: txlm_op_linear(&ops, &(txlm_linear_args){.x = xa, .w = &t->w2, .row0 = l * D, .n = D, .y = ya, .m = 1}); break;
    case 7: txlm_op_linear(&ops, &(txlm_linear_args){.x = xa, .w = &t->head, .n = HEAD, .y = ya, .m = 1}); break;
    case 8: txlm_op_linear(&ops, &(txlm_linear_args){.x = xa, .w = &t->proj, .n = D, .y = ya, .m = 1}); break;
    default: txlm_op_linear(&ops, &(txlm_linear_args){.x = xa, .w = &t->tiny, .n = 8, .y = ya, .m = 1}); break;
    }
}

static void print_table(const op *table, size_t n_ops)
{
    double total = 0;
    for (size_t k = 0; k < n_ops; k++) total += table[k].ms * table[k].per_token;
    printf("%-26s %6s %10s %12s %7s\n", "op", "count", "ms each", "ms per token", "share");
    for (size_t k = 0; k < n_ops; k++)
        printf("%-26s %6u %10.3f %12.2f %6.1f%%\n", table[k].name, table[k].per_token, table[k].ms,
               table[k].ms * table[k].per_token, 100 * table[k].ms * table[k].per_token / total);
    printf("%-26s %6s %10s %12.2f  (%.1f tokens/s if nothing else ran)\n", "sum", "", "", total, 1e3 / total);
}

int main(int argc, char **argv)
{
    uint32_t dt = argc > 1 && !strcmp(argv[1], "q8_0") ? TXLM_DT_Q8_0 : TXLM_DT_F32;
    uint32_t reps = argc > 2 ? (uint32_t)atoi(argv[2]) : 5;
    if (reps == 0 || reps > 64) reps = 5;
    txlm_context_options o = {0};
    if (txlm_context_create(&o, &ctx)) return fprintf(stderr, "%s\n", txlm_last_error()), 1;
    txlm_rec_init(&rec, &ctx->vk, &ctx->kernels, txlm_view_of(&ctx->dummy), &e);
    ops = (txlm_ops){.rec = &rec, .dummy = txlm_view_of(&ctx->dummy)};
    token t;
    token_make(&t, dt);
    op table[] = {
        {"q (1024x1024)", LAYERS, 0},        {"k,v (2048x1024)", LAYERS, 0},   {"attention, 640 keys", LAYERS, 0},
        {"o (1024x1024)", LAYERS, 0},        {"layernorm", 2 * LAYERS, 0},     {"ff1 (4096x1024)", LAYERS, 0},
        {"ff2 (1024x4096)", LAYERS, 0},      {"head (20000x1024)", 1, 0},      {"z·P (1024x1024 f32)", 1, 0},
        {"other dispatches (8x8)", 8, 0},
    };
    size_t n_ops = sizeof table / sizeof *table;
    printf("one generated token, wt103 shapes, %s weights, %s\n", txlm_dtype_get(dt)->name, ctx->vk.props.deviceName);
    int rc = 0;
    for (size_t k = 0; k < n_ops && !rc; k++) {
        double times[64];
        for (uint32_t r = 0; r < reps && !rc; r++) {
            txlm_rec_begin(&rec, &e);
            for (uint32_t l = 0; l < LAYERS; l++) record_op(&t, k, l);
            double t0 = now();
            if ((rc = txlm_rec_submit(&rec, &e))) fprintf(stderr, "%s\n", e.msg);
            times[r] = (now() - t0) / LAYERS;
        }
        qsort(times, reps, sizeof *times, cmp);
        table[k].ms = times[reps / 2] * 1e3;
    }
    if (!rc) print_table(table, n_ops);
    token_free(&t);
    txlm_rec_destroy(&rec);
    txlm_context_destroy(ctx);
    return rc != 0;
}
