/* A bound on the work in one submission (txlm_context_options.
 * max_submit_dispatches, engine/vk/recorder.h) on a packed golden case:
 * a context unbounded and one bounded to B dispatches a submission run
 * every segment of the case (all rows asked for), 8 drawn and fed
 * tokens (kept recordings replayed, in pieces) and a batch of three
 * ragged streams; every log-probability identical to the bit. Counted
 * through each context's debug counters (engine/vk/debug.h): every
 * submission of the unbounded context is one recording of d dispatches;
 * the bounded one's submissions must be exactly those recordings cut
 * into pieces of B, in order (B, B, ..., d mod B), no piece above B.
 * A third context also asks for a low-priority queue: where the device
 * offers VK_KHR/EXT_global_priority it gets one (lavapipe does), and its
 * numbers are the same.
 *
 * usage: test_submit_budget TXLM_PACK GOLDEN_DIR CASE B */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stb/stb_ds.h>

#include "context.h"
#include "pair_runs.h"
#include "text_util.h"
#include "vk_context.h"

/* The submissions the bounded context should make: each of the
 * unbounded one's recordings (one submission each) cut into pieces of b. */
static uint32_t *expected_pieces(const uint32_t *whole, size_t n, uint32_t b)
{
    uint32_t *out = NULL;
    for (size_t i = 0; i < n; i++) {
        uint32_t d = whole[i];
        for (; d > b; d -= b) arrput(out, b);
        arrput(out, d);
    }
    return out;
}

static int open_ctx(const char *path, uint32_t budget, int low, txlm_context **c, txlm_model **m)
{
    txlm_context_options co = {.validation = validation_on(), .max_submit_dispatches = budget, .low_priority = low};
    if (txlm_context_create(&co, c) || txlm_model_load(*c, path, NULL, m))
        return fprintf(stderr, "setup: %s\n", txlm_last_error()), 1;
    (*c)->vk.debug->count = 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 5) return fprintf(stderr, "usage: %s TXLM_PACK GOLDEN_DIR CASE B\n", argv[0]), 2;
    uint32_t budget = (uint32_t)atoi(argv[4]);
    char *dir = make_tmp_dir(), path[1200];
    snprintf(path, sizeof path, "%s/%s.txlm", dir ? dir : ".", argv[3]);
    uint32_t n_seg = 0;
    int32_t **segs = read_segments(argv[2], argv[3], &n_seg);
    if (!dir || budget == 0 || pack_case(argv[1], argv[2], argv[3], path, NULL) || !segs || n_seg < 2)
        return fprintf(stderr, "setup failed\n"), 1;
    txlm_context *c[3] = {NULL, NULL, NULL};
    txlm_model *m[3] = {NULL, NULL, NULL};
    if (open_ctx(path, 0, 0, &c[0], &m[0]) || open_ctx(path, budget, 0, &c[1], &m[1]) ||
        open_ctx(path, budget, 1, &c[2], &m[2]))
        return 1;
    TCHECK(c[0]->vk.submit_dispatches == 0 && c[1]->vk.submit_dispatches == budget);
    /* the unbounded and the bounded context */
    pair p = {{m[0], m[1]}, txlm_vocab_size(m[0])};
    run_segments(&p, segs, n_seg);
    run_batch(&p, segs, n_seg);
    const txlm_debug *whole = c[0]->vk.debug, *cut = c[1]->vk.debug;
    size_t n_whole = (size_t)arrlen(whole->submit_dispatches), n_cut = (size_t)arrlen(cut->submit_dispatches);
    uint32_t *want = expected_pieces(whole->submit_dispatches, n_whole, budget), most = 0;
    uint64_t dispatches = 0;
    for (size_t i = 0; i < n_cut; i++) {
        most = cut->submit_dispatches[i] > most ? cut->submit_dispatches[i] : most;
        dispatches += cut->submit_dispatches[i];
    }
    TCHECK((size_t)arrlen(want) == n_cut && !memcmp(want, cut->submit_dispatches, n_cut * sizeof *want));
    TCHECK(most == budget && n_cut > n_whole);
    /* and both contexts counted the same dispatches, replays included */
    uint64_t uses[2] = {0, 0};
    for (int i = 0; i < 2; i++)
        for (uint32_t k = 0; k < TXLM_K_COUNT; k++) uses[i] += c[i]->vk.debug->kernel_uses[k];
    TCHECK(uses[0] == uses[1] && uses[1] == dispatches);
    TCHECK(whole->replays > 0 && whole->replays == cut->replays);
    /* the bounded one at low priority (after the counts: it runs the first context again) */
    pair low = {{m[0], m[2]}, p.V};
    run_segments(&low, segs, n_seg);
    int offered = txlm_vk_has_device_ext(c[2]->vk.phys, "VK_KHR_global_priority") ||
                  txlm_vk_has_device_ext(c[2]->vk.phys, "VK_EXT_global_priority");
    TCHECK(c[2]->vk.low_priority == offered && c[1]->vk.low_priority == 0);
    for (int i = 0; i < 3; i++) TCHECK(txlm_context_validation_messages(c[i]) == 0);
    printf("%s: %zu recordings (%llu dispatches, %u replays) in %zu submissions of at most %u; low priority %s\n", argv[3],
           n_whole, (unsigned long long)dispatches, whole->replays, n_cut, budget,
           c[2]->vk.low_priority ? "granted" : "not offered");
    arrfree(want);
    for (int i = 0; i < 3; i++) txlm_model_free(m[i]), txlm_context_destroy(c[i]);
    free_segments(segs, n_seg);
    rm_tree(dir);
    free(dir);
    if (text_failures) fprintf(stderr, "FAIL: %d checks\n", text_failures);
    return text_failures != 0;
}
