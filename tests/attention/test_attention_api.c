/* Attention capture through the public API on golden models: the captured
 * probabilities are the softmax over unmasked keys of the captured terms
 * (a)+(b)+(c)+(d) scaled by 1/sqrt(d_head); rows sum to 1; masked entries
 * (causal, same_length) are exactly 0; capturing does not change the
 * log-probabilities.
 *
 * usage: test_attention_api ADAPTIVE_WORD.txlm CHAR_PRELN.txlm */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "txlm.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t next(uint32_t bound)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng % bound);
}

/* Written from the specification's section 4, independently of the engine's. */
static int masked(uint32_t i, uint32_t j, uint32_t qlen, uint32_t mlen, uint32_t mem_len, int same_length, int *lower)
{
    *lower = 0;
    if (j > mlen + i) return 1;
    if (!same_length) return 0;
    int64_t mask_len = (int64_t)(mlen + qlen) - mem_len;
    int64_t shift = mask_len > 0 ? (int64_t)qlen - mask_len : (int64_t)qlen;
    return *lower = (int64_t)j <= (int64_t)i - shift;
}

typedef struct scenario {
    const char *what;
    int model;             /* index into the model paths */
    int same_length;       /* -1: the model's */
    uint32_t segs[4], n_segs;
    uint32_t expect_mlen;
    int expect_lower_mask; /* same_length must hide some keys */
} scenario;

static float *feed_all(txlm_session *s, const int32_t *tokens, const scenario *sc, int capture, uint32_t n_token)
{
    uint32_t at = 0, last = sc->segs[sc->n_segs - 1];
    float *lp = malloc((size_t)last * n_token * sizeof *lp);
    for (uint32_t k = 0; k < sc->n_segs; k++) {
        int is_last = k + 1 == sc->n_segs;
        if (is_last && capture) CHECK(txlm_session_capture_attention(s, (txlm_capture_mode)capture) == TXLM_OK, "capture");
        txlm_status st = txlm_session_feed(s, tokens + at, sc->segs[k], is_last ? lp : NULL);
        CHECK(st == TXLM_OK, "%s: feed: %s", sc->what, txlm_last_error());
        at += sc->segs[k];
    }
    return lp;
}

/* Checks one layer's probabilities against its terms; returns the entries
 * hidden by same_length's lower bound. */
static uint32_t check_layer(const scenario *sc, uint32_t layer, const txlm_attention_shape *sh, const float *probs,
                            const float *terms, uint32_t d_head, uint32_t mem_len, int same_length)
{
    size_t plane = (size_t)sh->n_head * sh->qlen * sh->klen;
    double scale = 1.0 / sqrt((double)d_head), worst = 0, worst_sum = 0;
    uint32_t lower_masked = 0;
    double *x = malloc(sh->klen * sizeof *x);
    for (uint32_t h = 0; h < sh->n_head; h++)
        for (uint32_t i = 0; i < sh->qlen; i++) {
            size_t row = ((size_t)h * sh->qlen + i) * sh->klen;
            double mx = -INFINITY, sum = 0, psum = 0;
            for (uint32_t j = 0; j < sh->klen; j++) {
                int lower, m = masked(i, j, sh->qlen, sh->mlen, mem_len, same_length, &lower);
                lower_masked += lower;
                if (m) {
                    CHECK(probs[row + j] == 0.0f, "%s: layer %u head %u masked (%u,%u) prob %g", sc->what, layer, h, i, j,
                          probs[row + j]);
                    for (int t = 0; t < 4; t++)
                        CHECK(terms[t * plane + row + j] == 0.0f, "%s: masked term %d is %g", sc->what, t,
                              terms[t * plane + row + j]);
                    x[j] = -INFINITY;
                    continue;
                }
                x[j] = 0;
                for (int t = 0; t < 4; t++) x[j] += terms[t * plane + row + j];
                x[j] *= scale;
                if (x[j] > mx) mx = x[j];
            }
            for (uint32_t j = 0; j < sh->klen; j++) sum += isinf(x[j]) ? 0 : exp(x[j] - mx);
            for (uint32_t j = 0; j < sh->klen; j++) {
                double want = isinf(x[j]) ? 0 : exp(x[j] - mx) / sum, d = fabs(want - probs[row + j]);
                if (d > worst) worst = d;
                psum += probs[row + j];
            }
            if (fabs(psum - 1) > worst_sum) worst_sum = fabs(psum - 1);
        }
    free(x);
    CHECK(worst <= 1e-5, "%s: layer %u: probabilities differ from softmax of the terms by %g", sc->what, layer, worst);
    CHECK(worst_sum <= 1e-5, "%s: layer %u: a row sums to 1 %+g", sc->what, layer, worst_sum);
    return lower_masked;
}

static void run(txlm_model **models, const scenario *sc)
{
    txlm_model *m = models[sc->model];
    txlm_model_params p;
    txlm_model_get_params(m, &p);
    uint32_t n = 0, longest = 0;
    for (uint32_t k = 0; k < sc->n_segs; k++) n += sc->segs[k], longest = sc->segs[k] > longest ? sc->segs[k] : longest;
    int32_t *tokens = malloc(n * sizeof *tokens);
    for (uint32_t i = 0; i < n; i++) tokens[i] = (int32_t)next(p.n_token);
    txlm_session_options so = {.same_length = sc->same_length, .max_segment = longest};
    int same_length = sc->same_length >= 0 ? sc->same_length : p.same_length;

    txlm_session *s = NULL, *plain = NULL, *probs_only = NULL;
    CHECK(txlm_session_create(m, &so, &s) == TXLM_OK, "session: %s", txlm_last_error());
    CHECK(txlm_session_create(m, &so, &plain) == TXLM_OK, "session: %s", txlm_last_error());
    CHECK(txlm_session_create(m, &so, &probs_only) == TXLM_OK, "session: %s", txlm_last_error());
    if (!s || !plain || !probs_only) return;
    CHECK(txlm_session_attention(s, 0, NULL, NULL, NULL) == TXLM_ERR_INVALID_ARGUMENT, "attention before capture");
    CHECK(txlm_session_capture_attention(s, (txlm_capture_mode)3) == TXLM_ERR_INVALID_ARGUMENT &&
              strstr(txlm_last_error(), "mode out of range"),
          "capture mode 3: %s", txlm_last_error());

    float *lp = feed_all(s, tokens, sc, TXLM_CAPTURE_TERMS, p.n_token);
    float *lp_plain = feed_all(plain, tokens, sc, TXLM_CAPTURE_OFF, p.n_token);
    float *lp_probs = feed_all(probs_only, tokens, sc, TXLM_CAPTURE_PROBS, p.n_token);
    double worst = 0;
    for (size_t e = 0; e < (size_t)sc->segs[sc->n_segs - 1] * p.n_token; e++)
        if (fabs(lp[e] - lp_plain[e]) > worst) worst = fabs(lp[e] - lp_plain[e]);
    CHECK(worst < 1e-4, "%s: capturing changed the log-probabilities by %g", sc->what, worst);

    txlm_attention_shape sh = {0};
    CHECK(txlm_session_attention(s, 0, NULL, NULL, &sh) == TXLM_OK, "shape: %s", txlm_last_error());
    CHECK(sh.n_layer == p.n_layer && sh.n_head == p.n_head && sh.qlen == sc->segs[sc->n_segs - 1] &&
              sh.mlen == sc->expect_mlen && sh.klen == sh.mlen + sh.qlen,
          "%s: shape %u layers %u heads qlen %u mlen %u klen %u", sc->what, sh.n_layer, sh.n_head, sh.qlen, sh.mlen,
          sh.klen);
    CHECK(txlm_session_attention(s, p.n_layer, NULL, NULL, NULL) == TXLM_ERR_INVALID_ARGUMENT, "layer out of range");
    size_t plane = (size_t)sh.n_head * sh.qlen * sh.klen;
    float *probs = malloc(plane * sizeof *probs), *terms = malloc(4 * plane * sizeof *terms);
    float *probs2 = malloc(plane * sizeof *probs2);
    CHECK(txlm_session_attention(probs_only, 0, probs2, terms, NULL) == TXLM_ERR_INVALID_ARGUMENT,
          "terms from a probabilities-only capture");
    uint32_t lower = 0;
    for (uint32_t l = 0; l < sh.n_layer; l++) {
        for (size_t e = 0; e < 4 * plane; e++) terms[e] = NAN;
        CHECK(txlm_session_attention(s, l, probs, terms, NULL) == TXLM_OK, "attention: %s", txlm_last_error());
        lower += check_layer(sc, l, &sh, probs, terms, p.d_head, p.mem_len, same_length);
        CHECK(txlm_session_attention(probs_only, l, probs2, NULL, NULL) == TXLM_OK, "attention: %s", txlm_last_error());
        CHECK(!memcmp(probs, probs2, plane * sizeof *probs), "%s: layer %u: probabilities differ between capture modes",
              sc->what, l);
    }
    CHECK(!sc->expect_lower_mask == !lower, "%s: %u entries hidden by same_length (expected %s)", sc->what, lower,
          sc->expect_lower_mask ? "some" : "none");
    printf("%s: %u layers, %u heads, qlen %u, mlen %u, same_length %d (%u lower-masked entries)\n", sc->what, sh.n_layer,
           sh.n_head, sh.qlen, sh.mlen, same_length, lower);

    /* Turning capture off and on again forgets what was captured. */
    CHECK(txlm_session_capture_attention(s, TXLM_CAPTURE_OFF) == TXLM_OK, "capture off");
    CHECK(txlm_session_attention(s, 0, probs, NULL, NULL) == TXLM_ERR_INVALID_ARGUMENT, "attention after capture off");
    free(probs), free(probs2), free(terms), free(lp), free(lp_plain), free(lp_probs), free(tokens);
    txlm_session_free(s), txlm_session_free(plain), txlm_session_free(probs_only);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s ADAPTIVE_WORD.txlm CHAR_PRELN.txlm\n", argv[0]);
        return 2;
    }
    txlm_context *ctx = NULL;
    txlm_context_options co = {0};
    if (txlm_context_create(&co, &ctx)) {
        fprintf(stderr, "FAIL: no device: %s\n", txlm_last_error());
        return 1;
    }
    txlm_model *models[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++)
        if (txlm_model_load(ctx, argv[1 + k], NULL, &models[k])) {
            fprintf(stderr, "FAIL: %s: %s\n", argv[1 + k], txlm_last_error());
            return 1;
        }
    /* adaptive_word: same_length, mem_len 16, clamp_len 20; char_preln: pre-LN, mem_len 12, no clamp. */
    static const scenario cases[] = {
        {"same_length, memory 14 of 16", 0, -1, {7, 7, 7}, 3, 14, 1},
        {"same_length, memory not yet past mem_len", 0, -1, {5, 6}, 2, 5, 0},
        {"no same_length, full memory, distances past clamp_len", 0, 0, {9, 9, 9}, 3, 16, 0},
        {"pre-LN, short last segment", 1, -1, {5, 6, 3}, 3, 11, 0},
        {"pre-LN, one-token step with same_length", 1, 1, {13, 1}, 2, 12, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) run(models, &cases[k]);
    uint64_t vmsgs = txlm_context_validation_messages(ctx);
    CHECK(vmsgs == 0, "%llu Vulkan validation messages", (unsigned long long)vmsgs);
    for (int k = 0; k < 2; k++) txlm_model_free(models[k]);
    txlm_context_destroy(ctx);
    if (failures) fprintf(stderr, "%d failures\n", failures);
    return failures ? 1 : 0;
}
