/* CPU devices run shaders with subnormals flushed to zero
 * (engine/vk/fp_flush.h): a single-row product whose inputs are all
 * subnormal must come out exactly 0 there. With TXLM_KEEP_SUBNORMALS=1
 * (the second run in meson.build) lavapipe keeps them, and the same
 * product is the normal number 16 * 1e-39: that run shows this check
 * tells the two apart. GPUs decide for themselves: skipped. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "ops.h"
#include "../common/check.h"

enum { K = 16 };

int main(void)
{
    txlm_context *ctx;
    txlm_context_options o = {0};
    if (txlm_context_create(&o, &ctx)) return fprintf(stderr, "FAIL: no device: %s\n", txlm_last_error()), 1;
    txlm_vk *vk = &ctx->vk;
    if (vk->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU) {
        printf("SKIP: %s is not a CPU device\n", vk->props.deviceName);
        txlm_context_destroy(ctx);
        return 77;
    }
    const char *keep_env = getenv("TXLM_KEEP_SUBNORMALS");
    int keep = keep_env && *keep_env && strcmp(keep_env, "0") != 0;
    txlm_err e = {0};
    txlm_rec rec;
    txlm_buf x, y;
    txlm_gpu_tensor w;
    float xs[K], ws[K], tiny = 1e-39f; /* below FLT_MIN */
    for (int i = 0; i < K; i++) xs[i] = tiny, ws[i] = 1.0f;
    if (txlm_rec_init(&rec, vk, &ctx->kernels, txlm_view_of(&ctx->dummy), &e) || txlm_buf_create(vk, K * 4, TXLM_BUF_READBACK, &x, &e) ||
        txlm_buf_create(vk, 16, TXLM_BUF_READBACK, &y, &e) ||
        txlm_tensor_alloc(vk, 1, K, TXLM_DT_F32, TXLM_BUF_DEVICE, &w, &e) || txlm_tensor_write(vk, &w, ws, &e))
        return fprintf(stderr, "FAIL: %s\n", e.msg), 1;
    memcpy(x.map, xs, sizeof xs);
    memset(y.map, 0xff, 16);
    txlm_ops ops = {.rec = &rec, .dummy = txlm_view_of(&ctx->dummy)};
    if (txlm_rec_begin(&rec, &e)) return fprintf(stderr, "FAIL: %s\n", e.msg), 1;
    txlm_op_linear(&ops, &(txlm_linear_args){.x = txlm_arg_of(&x, 0, K), .w = &w, .n = 1, .y = txlm_arg_of(&y, 0, 1), .m = 1});
    if (txlm_rec_submit(&rec, &e)) return fprintf(stderr, "FAIL: %s\n", e.msg), 1;
    float got = ((const float *)y.map)[0];
    if (!keep) {
        CHECK(vk->flush_subnormals, "a CPU device was opened without flushing subnormals");
        CHECK(got == 0.0f, "16 subnormal products summed to %g on %s, want 0 (flushed)", got, vk->props.deviceName);
    } else {
        CHECK(!vk->flush_subnormals, "TXLM_KEEP_SUBNORMALS=1 did not keep subnormals");
        if (strstr(vk->props.deviceName, "llvmpipe"))
            CHECK(fabsf(got - K * tiny) <= 1e-6f * K * tiny, "kept: 16 subnormal products summed to %g, want %g", got,
                  K * tiny);
    }
    printf("%s on %s: %g\n", keep ? "kept" : "flushed", vk->props.deviceName, got);
    txlm_tensor_free(vk, &w);
    txlm_buf_destroy(vk, &x), txlm_buf_destroy(vk, &y);
    txlm_rec_destroy(&rec);
    txlm_context_destroy(ctx);
    return failures ? 1 : 0;
}
