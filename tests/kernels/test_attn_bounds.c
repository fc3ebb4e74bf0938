/* Streams of different position-key tables (sessions of other clamp_len or
 * mem_len) in one pass: every stream's attention in every mode of the
 * streams' test (kernel_cases_streams.c, test_streams_mixed), each
 * stream's position keys in a buffer of exactly its rows, against the
 * reference and each stream alone, and the plan's check that every group
 * binds position keys holding every row its streams read. A masked key's
 * score hides what a kernel read for it, so a read past a buffer shows in
 * no output: .ci/run runs this test again with the validation layer's
 * GPU-assisted validation (VK_LAYER_ENABLES=
 * VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT), which checks every
 * storage-buffer access against its binding and reports one past it, and
 * the test fails on any validation message.
 *   usage: test_attn_bounds */
#include <stdio.h>
#include <stdlib.h>

#include "kernel_harness.h"
#include "../common/check.h"

int main(void)
{
    txlm_context_options o = {0};
    if (txlm_context_create(&o, &ctx)) {
        fprintf(stderr, "FAIL: no device: %s\n", txlm_last_error());
        return 1;
    }
    txlm_err e = {0};
    ctx->vk.debug->count = 1; /* the streams' test counts dispatches */
    die_if(txlm_rec_init(&rec, &ctx->vk, &ctx->kernels, txlm_view_of(&ctx->dummy), &e), &e);
    ops.rec = &rec;
    ops.dummy = txlm_view_of(&ctx->dummy);
    have_texel = ctx->vk.texel_ok;
    int failed = test_streams_mixed();
    printf("ran:");
    for (uint32_t k = 0; k < TXLM_K_COUNT; k++)
        if (cases_run[k]) printf(" %s", ctx->kernels.k[k].name);
    printf("\n");
    uint64_t vmsgs = txlm_context_validation_messages(ctx);
    CHECK(vmsgs == 0, "%llu Vulkan validation messages", (unsigned long long)vmsgs);
    txlm_rec_destroy(&rec);
    txlm_context_destroy(ctx);
    if (failed + failures) {
        fprintf(stderr, "%d checks failed\n", failed + failures);
        return 1;
    }
    printf("all checks passed (validation: %s)\n", getenv("VK_LAYER_ENABLES") ? getenv("VK_LAYER_ENABLES") : "default");
    return 0;
}
