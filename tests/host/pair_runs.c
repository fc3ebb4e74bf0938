/* Two contexts, the same work, the same bits (pair_runs.h). */
#include "pair_runs.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/slurp.h"
#include "text_util.h"

enum { GEN = 8, K = 3 };

int pack_golden(const char *pack, const char *golden, const char *name, const char *out, const char *dtype)
{
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/%s", golden, name);
    const char *argv[] = {pack, dir, "-o", out, dtype ? "--dtype" : NULL, dtype, NULL};
    char *err = NULL;
    int st = run_tool(argv, NULL, &err);
    if (st) fprintf(stderr, "txlm-pack %s: exit %d: %s", name, st, err ? err : "");
    free(err);
    return st != 0;
}

int validation_on(void)
{
    const char *v = getenv("TXLM_VALIDATION");
    return v && *v && strcmp(v, "0") != 0;
}

/* The case's segments (token arrays, -1 ended), malloc'd; n segments. */
int32_t **read_segments(const char *golden, const char *name, uint32_t *n)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s/segments.json", golden, name);
    char *text = slurp(path, NULL);
    cJSON *root = text ? cJSON_Parse(text) : NULL, *segs = cJSON_GetObjectItem(root, "segments");
    free(text);
    *n = (uint32_t)cJSON_GetArraySize(segs);
    int32_t **out = calloc(*n + 1, sizeof *out);
    for (uint32_t i = 0; out && i < *n; i++) {
        cJSON *toks = cJSON_GetObjectItem(cJSON_GetArrayItem(segs, (int)i), "tokens");
        int len = cJSON_GetArraySize(toks);
        out[i] = malloc(((size_t)len + 1) * sizeof **out);
        for (int j = 0; j < len; j++) out[i][j] = cJSON_GetArrayItem(toks, j)->valueint;
        out[i][len] = -1;
    }
    cJSON_Delete(root);
    return out;
}

void free_segments(int32_t **segs, uint32_t n)
{
    for (uint32_t i = 0; segs && i < n; i++) free(segs[i]);
    free(segs);
}

uint32_t seg_len(const int32_t *seg)
{
    uint32_t n = 0;
    while (seg[n] >= 0) n++;
    return n;
}

/* Both sessions: the same call's rows, to the bit. */
void same_bits(const float *a, const float *b, size_t n, const char *what)
{
    size_t at = 0;
    while (at < n && !memcmp(&a[at], &b[at], sizeof *a)) at++;
    if (at < n) fprintf(stderr, "%s: first difference at %zu: %.9g vs %.9g\n", what, at, a[at], b[at]);
    TCHECK(at == n);
}

/* Every segment, then GEN drawn and fed tokens, on both. */
void run_segments(pair *p, int32_t **segs, uint32_t n_seg)
{
    txlm_session *s[2] = {NULL, NULL};
    for (int c = 0; c < 2; c++) TCHECK(txlm_session_create(p->m[c], NULL, &s[c]) == TXLM_OK);
    if (!s[0] || !s[1]) return;
    for (uint32_t i = 0; i < n_seg; i++) {
        uint32_t n = seg_len(segs[i]);
        float *lp[2];
        for (int c = 0; c < 2; c++) {
            lp[c] = malloc((size_t)n * p->V * sizeof(float));
            TCHECK(txlm_session_feed(s[c], segs[i], n, lp[c]) == TXLM_OK);
        }
        same_bits(lp[0], lp[1], (size_t)n * p->V, "segment");
        free(lp[0]), free(lp[1]);
    }
    int32_t tok[2][GEN];
    for (int c = 0; c < 2; c++) {
        txlm_session_set_seed(s[c], 42);
        TCHECK(txlm_session_generate(s[c], NULL, NULL, GEN, tok[c], NULL, NULL, NULL) == TXLM_OK);
    }
    TCHECK(memcmp(tok[0], tok[1], sizeof tok[0]) == 0);
    float *next[2] = {malloc(p->V * sizeof(float)), malloc(p->V * sizeof(float))};
    for (int c = 0; c < 2; c++) TCHECK(txlm_session_next_logprobs(s[c], next[c]) == TXLM_OK);
    same_bits(next[0], next[1], p->V, "next row");
    free(next[0]), free(next[1]);
    txlm_session_free(s[0]), txlm_session_free(s[1]);
}

/* A batch of K sessions, segments of 8, 1, and 5/3/7 tokens from the
 * case's stream, all rows asked for: both contexts to the bit. */
void run_batch(pair *p, int32_t **segs, uint32_t n_seg)
{
    int32_t stream[64];
    uint32_t len = 0;
    for (uint32_t i = 0; i < n_seg && len < 64; i++)
        for (const int32_t *t = segs[i]; *t >= 0 && len < 64; t++) stream[len++] = *t;
    txlm_session_options so = {.same_length = -1, .max_segment = 8};
    txlm_session *s[2][K] = {{NULL}};
    txlm_batch *b[2] = {NULL, NULL};
    for (int c = 0; c < 2; c++) {
        for (int i = 0; i < K; i++) TCHECK(txlm_session_create(p->m[c], &so, &s[c][i]) == TXLM_OK);
        TCHECK(txlm_batch_create(p->m[c], K, &so, &b[c]) == TXLM_OK);
        if (!b[c]) return;
    }
    static const uint32_t third[] = {5, 3, 7, 2};
    for (uint32_t step = 0, at = 0; step < 4; step++) {
        uint32_t lens[K] = {8, 1, third[step]}, rows = lens[0] + lens[1] + lens[2];
        float *lp[2];
        for (int c = 0; c < 2; c++) {
            lp[c] = malloc((size_t)rows * p->V * sizeof(float));
            txlm_stream_feed f[K];
            for (uint32_t i = 0, off = 0; i < K; off += lens[i], i++)
                f[i] = (txlm_stream_feed){.session = s[c][i], .tokens = stream + (at + 7 * i) % (len - 8), .n = lens[i],
                                          .logprobs = lp[c] + (size_t)off * p->V};
            TCHECK(txlm_batch_feed(b[c], f, K) == TXLM_OK);
        }
        same_bits(lp[0], lp[1], (size_t)rows * p->V, "batch");
        free(lp[0]), free(lp[1]);
        at += 3;
    }
    for (int c = 0; c < 2; c++) {
        txlm_batch_free(b[c]);
        for (int i = 0; i < K; i++) txlm_session_free(s[c][i]);
    }
}

