/* Draws on the host from log-probabilities read back (sample.c): the
 * sampler's generator, a draw at a temperature, top-k and top-p, and the
 * check of a head row before a draw from it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nonfinite.h"
#include "sample.h"
#include "stream.h"

uint64_t txlm_rng_next(uint64_t *state)
{
    /* splitmix64: tiny, fast, and the same stream on every platform */
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform(uint64_t *state) { return (double)(txlm_rng_next(state) >> 11) * (1.0 / 9007199254740992.0); }

/* Index drawn with probability proportional to exp(lp[i] / t) over [0, n). */
uint32_t txlm_draw(const float *lp, uint32_t n, double t, uint64_t *rng)
{
    double max = -INFINITY, sum = 0;
    for (uint32_t i = 0; i < n; i++) max = fmax(max, lp[i]);
    for (uint32_t i = 0; i < n; i++) sum += exp((lp[i] - max) / t);
    double u = uniform(rng) * sum, acc = 0;
    for (uint32_t i = 0; i < n; i++) {
        acc += exp((lp[i] - max) / t);
        if (u < acc) return i;
    }
    return n - 1;
}

static int by_prob_desc(const void *a, const void *b, void *lp_)
{
    const float *lp = lp_;
    float x = lp[*(const uint32_t *)a], y = lp[*(const uint32_t *)b];
    return x < y ? 1 : x > y ? -1 : 0;
}

/* qsort_r is not C11; a small merge sort keeps this portable. */
static void sort_desc(uint32_t *idx, uint32_t *tmp, uint32_t n, const float *lp)
{
    if (n < 2) return;
    uint32_t h = n / 2;
    sort_desc(idx, tmp, h, lp);
    sort_desc(idx + h, tmp, n - h, lp);
    uint32_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = by_prob_desc(&idx[j], &idx[i], (void *)lp) < 0 ? idx[j++] : idx[i++];
    while (i < h) tmp[k++] = idx[i++];
    while (j < n) tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

/* Temperature, then top-k, then top-p (nucleus) on a full distribution. */
int txlm_draw_filtered(const float *lp, uint32_t n, const txlm_sampling *o, uint64_t *rng, int32_t *token, txlm_err *err)
{
    if (o->temperature <= 0) { /* greedy */
        uint32_t best = 0;
        for (uint32_t i = 1; i < n; i++)
            if (lp[i] > lp[best]) best = i;
        *token = (int32_t)best;
        return 0;
    }
    double t = o->temperature;
    int filter = o->top_k || (o->top_p > 0 && o->top_p < 1);
    if (!filter) {
        *token = (int32_t)txlm_draw(lp, n, t, rng);
        return 0;
    }
    uint32_t *idx = malloc(2 * (size_t)n * sizeof *idx);
    float *keep = malloc((size_t)n * sizeof *keep);
    if (!idx || !keep) {
        free(idx), free(keep);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    for (uint32_t i = 0; i < n; i++) idx[i] = i;
    sort_desc(idx, idx + n, n, lp);
    uint32_t m = o->top_k && o->top_k < n ? o->top_k : n;
    if (o->top_p > 0 && o->top_p < 1) {
        double max = lp[idx[0]], total = 0, acc = 0;
        for (uint32_t i = 0; i < m; i++) total += exp((lp[idx[i]] - max) / t);
        uint32_t i = 0;
        while (i < m) {
            acc += exp((lp[idx[i]] - max) / t);
            i++;
            if (acc >= o->top_p * total) break;
        }
        m = i;
    }
    for (uint32_t i = 0; i < m; i++) keep[i] = lp[idx[i]];
    *token = (int32_t)idx[txlm_draw(keep, m, t, rng)];
    free(idx), free(keep);
    return 0;
}

/* A distribution with NaN or infinity is refused before any draw: a draw
 * from it would be garbage (the last token, or the first). The head holds
 * the shortlist's tokens, then one entry per tail cluster. */
int txlm_check_head(const txlm_session *s, const float *lp, uint32_t row, uint32_t n, txlm_err *err)
{
    uint32_t shortlist = s->m->h.cutoffs[0];
    uint64_t i = txlm_first_nonfinite(lp, n);
    if (i == n) return 0;
    char what[48];
    snprintf(what, sizeof what, i < shortlist ? "token %llu" : "tail cluster %llu",
             (unsigned long long)(i < shortlist ? i : i - shortlist + 1));
    return txlm_session_nonfinite(s, row, what, lp[i], err);
}

int txlm_sample_exact(const txlm_hparams *h, const txlm_sampling *o, const txlm_repeat_penalty *pen)
{
    return h->n_cutoffs && o->temperature == 1.0f && !o->top_k && !(o->top_p > 0 && o->top_p < 1) &&
           !txlm_sampling_penalized(pen);
}
