/* Sampling draws from the distribution the model gives. From one fed
 * state (sampling does not move it), many seeded draws are counted and
 * compared with the log-probabilities of the same row:
 *   temperature 1 (the hierarchical draw: head, then one tail cluster,
 *   never the full distribution) against p, also cluster by cluster;
 *   temperature 0.5 (the full distribution) against p^2 renormalised;
 *   top-k 5 against the 5 most likely renormalised, and nothing else;
 *   top-k of the whole vocabulary accepted, one more refused (the rule
 *   txlm serve's top_k and txlm generate --top-k follow).
 * Pearson's chi-square over bins of at least 40 expected draws must stay
 * below df + 8 sqrt(2 df), far in the tail for a right sampler (the seeds
 * are fixed, so the run is the same every time), while a cluster drawn
 * with the wrong weight or a tail drawn uniformly lands far above it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm.h>

#include "golden_model.h"
#include "../common/test_context.h"
#include "text_util.h"

enum { V = 1000, FED = 6 };

static double *want_p; /* for sorting indices by probability */
static int by_p_desc(const void *a, const void *b)
{
    double x = want_p[*(const int *)a], y = want_p[*(const int *)b];
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Chi-square of counts[V] (n draws) against want[V], bins of >= 40 expected. */
static void check_counts(const char *what, const uint32_t *counts, uint32_t n, double *want)
{
    int idx[V];
    for (int i = 0; i < V; i++) idx[i] = i;
    want_p = want;
    qsort(idx, V, sizeof *idx, by_p_desc);
    /* bins of >= 40 expected; what is left at the end joins the last one */
    static double be[V], bo[V];
    double e = 0, o = 0, chi2 = 0;
    int bins = 0, outside = 0;
    for (int k = 0; k < V; k++) {
        int i = idx[k];
        if (want[i] == 0) outside += counts[i] != 0;
        e += n * want[i];
        o += counts[i];
        if (e >= 40) {
            be[bins] = e, bo[bins] = o, bins++;
            e = o = 0;
        }
    }
    if (bins) be[bins - 1] += e, bo[bins - 1] += o;
    for (int b = 0; b < bins; b++) chi2 += (bo[b] - be[b]) * (bo[b] - be[b]) / be[b];
    double df = bins - 1, bound = df + 8 * sqrt(2 * df);
    printf("%s: %u draws, %d bins, chi-square %.1f (bound %.1f)\n", what, n, bins, chi2, bound);
    TCHECK(bins >= 2);
    TCHECK(chi2 < bound);
    TCHECK(outside == 0);
}

static void draw_many(txlm_session *s, const txlm_sampling *o, uint32_t n, uint32_t *counts)
{
    memset(counts, 0, V * sizeof *counts);
    for (uint32_t i = 0; i < n; i++) {
        int32_t t = -1;
        if (txlm_session_sample(s, o, &t) != TXLM_OK || t < 0 || t >= V) {
            fprintf(stderr, "sample: %s\n", txlm_last_error());
            text_failures++;
            return;
        }
        counts[t]++;
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s TXLM_PACK GOLDEN_DIR\n", argv[0]);
        return 2;
    }
    char *dir = NULL;
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    if (open_golden_model(argv[1], argv[2], "adaptive_word", &dir, &ctx, &m)) return 1;
    if (txlm_session_create(m, NULL, &s)) {
        fprintf(stderr, "setup: %s\n", txlm_last_error());
        rm_tree(dir);
        return 1;
    }
    txlm_model_params mp;
    txlm_model_get_params(m, &mp);
    TCHECK(mp.n_token == V);
    static const int32_t fed[FED] = {3, 17, 250, 41, 777, 9};
    static float lp[FED * V];
    static double p[V], q[V];
    static uint32_t counts[V];
    TCHECK(txlm_session_feed(s, fed, FED, lp) == TXLM_OK);
    for (int i = 0; i < V; i++) p[i] = exp((double)lp[(FED - 1) * V + i]);

    /* temperature 1: the hierarchical draw */
    txlm_session_set_seed(s, 1);
    const uint32_t n1 = 24000; /* the tail clusters hold about 1% here */
    draw_many(s, NULL, n1, counts);
    check_counts("temperature 1", counts, n1, p);
    static const int cut[4] = {0, 200, 500, V}; /* the case's clusters */
    for (int c = 0; c < 3; c++) {
        double e = 0, o = 0;
        for (int i = cut[c]; i < cut[c + 1]; i++) e += n1 * p[i], o += counts[i];
        printf("  cluster %d: %.0f draws, %.1f expected\n", c, o, e);
        TCHECK(e > 100 && fabs(o - e) < 5 * sqrt(e));
    }

    /* temperature 0.5: the full distribution, sharpened */
    txlm_sampling half = {.temperature = 0.5f};
    double z = 0;
    for (int i = 0; i < V; i++) z += q[i] = p[i] * p[i];
    for (int i = 0; i < V; i++) q[i] /= z;
    txlm_session_set_seed(s, 2);
    draw_many(s, &half, 4000, counts);
    check_counts("temperature 0.5", counts, 4000, q);

    /* top-k 5 at temperature 1 */
    txlm_sampling top = {.temperature = 1.0f, .top_k = 5};
    int idx[V];
    for (int i = 0; i < V; i++) idx[i] = i;
    want_p = p;
    qsort(idx, V, sizeof *idx, by_p_desc);
    memset(q, 0, sizeof q);
    z = 0;
    for (int k = 0; k < 5; k++) z += p[idx[k]];
    for (int k = 0; k < 5; k++) q[idx[k]] = p[idx[k]] / z;
    txlm_session_set_seed(s, 3);
    draw_many(s, &top, 2000, counts);
    check_counts("top-k 5", counts, 2000, q);
    int32_t tok = -1;
    txlm_sampling all = {.temperature = 1.0f, .top_k = V}, more = {.temperature = 1.0f, .top_k = V + 1};
    TCHECK(txlm_session_sample(s, &all, &tok) == TXLM_OK && tok >= 0 && tok < V);
    TCHECK(txlm_session_sample(s, &more, &tok) == TXLM_ERR_INVALID_ARGUMENT &&
           strstr(txlm_last_error(), "top_k 1001 is more than the vocabulary's 1000 tokens"));

    TCHECK(txlm_context_validation_messages(ctx) == 0);
    txlm_session_free(s);
    txlm_model_free(m);
    test_context_destroy(ctx);
    rm_tree(dir);
    free(dir);
    printf("%d failures\n", text_failures);
    return text_failures != 0;
}
