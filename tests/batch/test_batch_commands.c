/* A lone session and a batch of one record the same commands: the same
 * script of calls (a prompt with all its log-probabilities, later rows
 * only, targets, generation with and without outputs past a full memory,
 * so that kept recordings are made and replayed, draws at temperature 1
 * and with top-k, a reset) on one session alone and on another through
 * txlm_batch_feed and txlm_batch_sample with a batch of one stream, each
 * recorded command traced (engine/vk/debug.h: kernel, grid, push
 * constants, the views' offsets and sizes; copies, fills, barriers,
 * replays). The two traces must be equal word for word, and every
 * output and token the same. With "three-pass" only the three-pass
 * attention kernels run (the stream attends alone). Then a session of a
 * longer memory than its batch was made for: the batch makes a larger
 * scratch for it, and its outputs are the lone session's to the bit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stb/stb_ds.h>

#include "../common/kernel_switches.h"
#include "golden_model.h"
#include "../common/test_context.h"
#include "text_util.h"

enum { SEG = 8, STEPS = 30 };

/* One call of the script, alone (b NULL) or through the batch. */
static txlm_status feed(txlm_batch *b, txlm_session *s, const int32_t *t, uint32_t n, uint32_t first, float *lp,
                        const int32_t *targets, float *tlp)
{
    if (!b) return targets ? txlm_session_score(s, t, targets, n, tlp) : txlm_session_feed_rows(s, t, n, first, lp);
    txlm_stream_feed f = {.session = s, .tokens = t, .n = n, .first_row = first, .logprobs = lp, .targets = targets,
                          .target_logprobs = tlp};
    return txlm_batch_feed(b, &f, 1);
}

static txlm_status draw(txlm_batch *b, txlm_session *s, const txlm_sampling *o, int32_t *tok)
{
    return b ? txlm_batch_sample(b, &s, 1, o, NULL, tok) : txlm_session_sample(s, o, tok);
}

/* The script on s (alone, or through b); every output appended to *out
 * (stb_ds), every token drawn too. */
static void script(txlm_batch *b, txlm_session *s, uint32_t V, float **out)
{
    static const int32_t words[SEG] = {3, 250, 700, 1, 42, 999, 201, 17};
    float *lp = malloc((size_t)SEG * V * 4);
    int32_t prompt[SEG], targets[SEG];
    for (uint32_t i = 0; i < SEG; i++) prompt[i] = words[i] % (int32_t)V, targets[i] = (words[(i + 1) % SEG] * 7) % (int32_t)V;
    TCHECK(feed(b, s, prompt, SEG, 0, lp, NULL, NULL) == TXLM_OK);
    for (size_t i = 0; i < (size_t)SEG * V; i++) arrput(*out, lp[i]);
    TCHECK(feed(b, s, prompt + 2, 5, 3, lp, NULL, NULL) == TXLM_OK);
    for (size_t i = 0; i < (size_t)2 * V; i++) arrput(*out, lp[i]);
    TCHECK(feed(b, s, prompt + 1, 6, 0, NULL, targets, lp) == TXLM_OK);
    for (size_t i = 0; i < 6; i++) arrput(*out, lp[i]);
    txlm_session_set_seed(s, 11);
    txlm_sampling plain = {.temperature = 1.0f}, top = {.temperature = 0.8f, .top_k = 5};
    for (uint32_t t = 0; t < STEPS; t++) {
        int32_t tok = -1;
        TCHECK(draw(b, s, t % 4 == 3 ? &top : &plain, &tok) == TXLM_OK);
        arrput(*out, (float)tok);
        if (tok < 0) tok = 1;
        /* log-probabilities every seventh step (not kept), none otherwise */
        TCHECK(feed(b, s, &tok, 1, 0, t % 7 == 6 ? lp : NULL, NULL, NULL) == TXLM_OK);
        if (t % 7 == 6)
            for (size_t i = 0; i < V; i++) arrput(*out, lp[i]);
        if (t == STEPS / 2) { /* a new text */
            txlm_session_reset(s);
            TCHECK(feed(b, s, prompt, 3, 3, NULL, NULL, NULL) == TXLM_OK);
        }
    }
    free(lp);
}

/* The commands the script records on a fresh session, and its outputs. */
static size_t run(txlm_context *ctx, txlm_model *m, int batched, uint32_t **trace, float **out)
{
    txlm_session_options so = {.same_length = -1, .mem_len = 6, .max_segment = SEG};
    txlm_session *s = NULL;
    txlm_batch *b = NULL;
    TCHECK(txlm_session_create(m, &so, &s) == TXLM_OK);
    if (batched) TCHECK(txlm_batch_create(m, 1, &so, &b) == TXLM_OK);
    txlm_debug *d = ctx->vk.debug;
    txlm_debug_trace_clear(d);
    d->trace = d->count = 1;
    uint32_t replays = d->replays;
    script(b, s, txlm_vocab_size(m), out);
    d->trace = 0;
    size_t n;
    const uint32_t *w = txlm_debug_trace(d, &n);
    *trace = malloc(n * sizeof **trace + 1);
    memcpy(*trace, w, n * sizeof *w);
    txlm_batch_free(b);
    txlm_session_free(s);
    TCHECK(d->replays > replays + STEPS / 4); /* kept recordings made and submitted again */
    return n;
}

/* A session whose memory is longer than the batch's options: its
 * attention needs more scratch than the batch has (made at the pass,
 * txlm_workspace_fit); its numbers do not change. */
static void check_longer_memory(txlm_model *m)
{
    txlm_session_options small = {.same_length = -1, .mem_len = 1, .max_segment = SEG},
                         so = {.same_length = -1, .mem_len = 30, .max_segment = SEG};
    txlm_session *a = NULL, *s = NULL;
    txlm_batch *b = NULL;
    txlm_memory_use before, after;
    TCHECK(txlm_session_create(m, &so, &a) == TXLM_OK && txlm_session_create(m, &so, &s) == TXLM_OK);
    TCHECK(txlm_batch_create(m, 1, &small, &b) == TXLM_OK && txlm_batch_memory(b, &before) == TXLM_OK);
    float *oa = NULL, *ob = NULL;
    script(NULL, a, txlm_vocab_size(m), &oa);
    script(b, s, txlm_vocab_size(m), &ob);
    TCHECK(txlm_batch_memory(b, &after) == TXLM_OK && after.device_bytes > before.device_bytes);
    TCHECK(arrlen(oa) == arrlen(ob) && !memcmp(oa, ob, (size_t)arrlen(oa) * sizeof *oa));
    arrfree(oa), arrfree(ob);
    txlm_batch_free(b);
    txlm_session_free(a), txlm_session_free(s);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s TXLM_PACK GOLDEN_DIR CASE [three-pass]\n", argv[0]);
        return 2;
    }
    char *dir = NULL;
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    if (open_golden_model(argv[1], argv[2], argv[3], &dir, &ctx, &m)) return 1;
    if (argc > 4 && !strcmp(argv[4], "three-pass")) kernel_switch(ctx, NO_FUSED_ATTENTION, 1);
    uint32_t *ta = NULL, *tb = NULL;
    float *oa = NULL, *ob = NULL;
    size_t na = run(ctx, m, 0, &ta, &oa), nb = run(ctx, m, 1, &tb, &ob);
    size_t at = 0;
    while (at < na && at < nb && ta[at] == tb[at]) at++;
    printf("alone: %zu trace words, a batch of one: %zu, the same up to word %zu\n", na, nb, at);
    TCHECK(na == nb && at == na && na > 1000);
    TCHECK(arrlen(oa) == arrlen(ob) && !memcmp(oa, ob, (size_t)arrlen(oa) * sizeof *oa));
    check_longer_memory(m);
    TCHECK(txlm_context_validation_messages(ctx) == 0);
    free(ta), free(tb);
    arrfree(oa), arrfree(ob);
    txlm_model_free(m);
    test_context_destroy(ctx);
    rm_tree(dir);
    free(dir);
    printf("%d failures\n", text_failures);
    return text_failures != 0;
}
