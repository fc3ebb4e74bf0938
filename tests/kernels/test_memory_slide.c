/* Each layer's keys and values are a ring: the memory slides by moving
 * its first row, wrapping past the ring's end, and no row ever moves. A
 * session fed many short segments (generation-like) must match the CPU
 * reference at every step, through wraps of the memory and of a
 * segment's own rows, and a state saved while the memory wraps must
 * continue identically in a fresh session.
 *
 * usage: test_memory_slide GOLDEN_DIR WORK_DIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "context.h"
#include "ref_pack.h"
#include "ref_model.h"
#include "session.h"
#include "../common/check.h"

#define TOLERANCE 1e-4

static double max_abs_diff(const float *a, const float *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs((double)a[i] - b[i]));
    return m;
}

int main(int argc, char **argv)
{
    if (argc != 3) return fprintf(stderr, "usage: test_memory_slide GOLDEN_DIR WORK_DIR\n"), 2;
    char dir[1024], model[1200];
    snprintf(dir, sizeof dir, "%s/decode_steps", argv[1]);
    mkdir(argv[2], 0777);
    snprintf(model, sizeof model, "%s/memory_slide.txlm", argv[2]);
    txlm_err err = {0, ""};
    if (ref_pack_dir(dir, model, &err)) return fprintf(stderr, "FAIL packing: %s\n", err.msg), 1;

    ref_model *rm = NULL;
    ref_session *rs = NULL;
    ref_session_options ro = {.mem_len = 5, .same_length = -1};
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_session *s = NULL, *s2 = NULL;
    txlm_context_options co = {0}; /* TXLM_VALIDATION in the environment turns the layer on */
    txlm_session_options so = {.mem_len = 5, .same_length = -1, .max_segment = 4};
    if (ref_model_open(model, &rm, &err) || ref_session_new(rm, &ro, &rs, &err))
        return fprintf(stderr, "FAIL reference: %s\n", err.msg), 1;
    if (txlm_context_create(&co, &ctx) || txlm_model_load(ctx, model, NULL, &m) || txlm_session_create(m, &so, &s))
        return fprintf(stderr, "FAIL opening: %s\n", txlm_last_error()), 1;
    unlink(model);

    uint32_t V = ref_model_hparams(rm)->n_token, n_tok = 80;
    float *want = malloc((size_t)4 * V * 4), *got = malloc((size_t)4 * V * 4), *got2 = malloc((size_t)4 * V * 4);
    int32_t tokens[80];
    uint64_t x = 12345;
    for (uint32_t i = 0; i < n_tok; i++) tokens[i] = (int32_t)((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 33) % (int32_t)V;
    /* mostly single tokens, with longer segments in between so that the
     * memory and the segments wrap at different fill levels */
    static const uint32_t lens[] = {4, 1, 1, 1, 1, 2, 1, 3, 1, 1, 3, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 4,
                                    4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1};
    uint32_t max_base = 0, wraps = 0, split_segments = 0, at = 0, step = 0;
    size_t state_cap = 0;
    void *state = NULL;
    for (; step < sizeof lens / sizeof *lens && at + lens[step] <= n_tok; at += lens[step], step++) {
        uint32_t n = lens[step], base_before = s->kv_base;
        split_segments += (s->kv_base + s->mlen) % s->kv_rows + n > s->kv_rows;
        if (ref_forward(rs, tokens + at, n, want, &err)) return fprintf(stderr, "FAIL reference: %s\n", err.msg), 1;
        CHECK(txlm_session_feed(s, tokens + at, n, got) == TXLM_OK, "feed: %s", txlm_last_error());
        double d = max_abs_diff(got, want, (size_t)n * V);
        CHECK(d < TOLERANCE, "step %u (%u tokens, memory from row %u): max diff %g", step, n, base_before, d);
        if (s2) {
            CHECK(txlm_session_feed(s2, tokens + at, n, got2) == TXLM_OK, "feed (restored): %s", txlm_last_error());
            d = max_abs_diff(got2, want, (size_t)n * V);
            CHECK(d < TOLERANCE, "step %u in the restored session: max diff %g", step, d);
        }
        if (s->kv_base > max_base) max_base = s->kv_base;
        wraps += s->kv_base < base_before;
        CHECK(txlm_session_memory_len(s) == ref_session_memory_len(rs), "step %u: memory %u rows, reference %u", step,
              txlm_session_memory_len(s), ref_session_memory_len(rs));
        if (!s2 && s->kv_base + s->mlen > s->kv_rows) {
            /* saved while the memory runs past the ring's end; restored at row 0 */
            state_cap = txlm_session_state_size(s);
            size_t written = 0;
            state = malloc(state_cap);
            CHECK(txlm_session_save(s, state, state_cap, &written) == TXLM_OK, "save: %s", txlm_last_error());
            CHECK(txlm_session_create(m, &so, &s2) == TXLM_OK, "session: %s", txlm_last_error());
            CHECK(txlm_session_restore(s2, state, written) == TXLM_OK, "restore: %s", txlm_last_error());
        }
    }
    CHECK(s->kv_rows == 5 + 4, "ring of %u rows, not mem_len + longest segment", s->kv_rows);
    CHECK(max_base > 0 && wraps >= 2 && split_segments >= 3,
          "the memory never slid (first row at most %u), wrapped %u times, or a segment wrapped %u times", max_base, wraps,
          split_segments);
    CHECK(s2 != NULL, "no state was saved while the memory wrapped");
    uint64_t vmsgs = txlm_context_validation_messages(ctx);
    CHECK(vmsgs == 0, "%llu Vulkan validation messages", (unsigned long long)vmsgs);

    free(state), free(want), free(got), free(got2);
    txlm_session_free(s2);
    txlm_session_free(s);
    txlm_model_free(m);
    txlm_context_destroy(ctx);
    ref_session_free(rs);
    ref_model_free(rm);
    if (failures) return fprintf(stderr, "%d memory checks failed\n", failures), 1;
    printf("memory slide: %u steps match the reference (%u wraps of the memory, %u segments wrapping)\n", step, wraps,
           split_segments);
    return 0;
}
