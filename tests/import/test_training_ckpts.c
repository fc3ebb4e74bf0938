/* Checkpoints in the layouts of the codes that trained the published
 * Transformer-XL models (training_ckpts/gen.py: the authors' state dicts,
 * whole models and cache.pt, NVIDIA's training checkpoints in float32 and
 * float16, HF v4 folders), each packed with one txlm-pack command and run
 * with txlm logprobs: every log-probability of several segments, memory
 * carried, within 5e-4 of what that code computes (through the library,
 * and HF's zero-memory start once through txlm logprobs' flag).
 * txlm-pack must also say which tail-cluster order it used (on stderr:
 * its stdout stays empty).
 *
 * usage: test_import_training_ckpts TXLM_PACK TXLM FIXTURE_DIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <txlm.h>

#include "util.h"
#include "../common/run_tool.h"

#define TOL 5e-4

static const char *pack_exe, *txlm_exe, *dir;
static txlm_context *ctx;

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", a, b);
    return p;
}

/* Packs one case; returns the model path (malloc'd) or NULL. */
static char *pack(const cJSON *c, const char *name, const char *order)
{
    const char *argv[16];
    char *owned[16];
    int n = 0, k = 0;
    argv[n++] = pack_exe;
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(c, "args");
    int raw = 0;
    for (const cJSON *a = args->child; a && n < 12; a = a->next) {
        /* file names are the fixture's; options and their words stay as they are */
        if (a->valuestring[0] == '-' || raw) argv[n++] = a->valuestring;
        else argv[n++] = owned[k++] = join(dir, a->valuestring);
        raw = !strcmp(a->valuestring, "--cluster-order");
    }
    char model[64];
    snprintf(model, sizeof model, "case%d.txlm", (int)(cJSON_GetArraySize(args) * 131 + (int)strlen(name)));
    char *out_path = strdup(tmp_path(model));
    argv[n++] = "-o";
    argv[n++] = out_path;
    argv[n] = NULL;
    char *out = NULL, *err = NULL;
    int st = run_tool(argv, &out, &err);
    char want[64];
    snprintf(want, sizeof want, "tail-cluster order: %s", order);
    if (st != 0 || !err || !strstr(err, want) || (out && out[0])) {
        fprintf(stderr, "%s: txlm-pack exit %d, stdout \"%s\", stderr \"%s\" (wanted \"%s\")\n", name, st, out ? out : "",
                err ? err : "", want);
        free(out_path);
        out_path = NULL;
    }
    CHECK(out_path != NULL);
    free(out);
    free(err);
    while (k) free(owned[--k]);
    return out_path;
}

/* The packed model through one session (the library: one device for all
 * cases), segment by segment; zero: HF's zero-memory start. */
static float *run_api(const char *model, const int *segments, int n_seg, const int32_t *tokens, size_t n_floats, int zero)
{
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    float *lp = calloc(n_floats, sizeof *lp);
    txlm_session_options so = {.same_length = -1, .zero_memory = zero};
    int ok = lp && !txlm_model_load(ctx, model, NULL, &m) && !txlm_session_create(m, &so, &s);
    txlm_model_params p;
    if (ok) txlm_model_get_params(m, &p);
    for (int k = 0, at = 0; ok && k < n_seg; at += segments[k++])
        ok = !txlm_session_feed(s, tokens + at, (uint32_t)segments[k], lp + (size_t)at * p.n_token);
    if (!ok) fprintf(stderr, "%s: %s\n", model, txlm_last_error());
    CHECK(ok);
    txlm_session_free(s);
    txlm_model_free(m);
    if (!ok) free(lp);
    return ok ? lp : NULL;
}

/* The same through `txlm logprobs` (its --zero-memory flag). */
static float *run_cli(const char *model, const char *tokens, const char *segments, int zero, size_t *len)
{
    return run_logprobs(txlm_exe, model, tokens, segments, zero ? "--zero-memory" : NULL, "1", len);
}

typedef struct manifest {
    int32_t tokens[256];
    int segments[64];
    int n_seg;
    char tokens_s[2048], segments_s[256];
    size_t n_floats;
} manifest;

static void run_case(const cJSON *c, const manifest *mf, int via_cli)
{
    const char *name = cJSON_GetObjectItemCaseSensitive(c, "name")->valuestring;
    const char *order = cJSON_GetObjectItemCaseSensitive(c, "order")->valuestring;
    char *model = pack(c, name, order);
    if (!model) return;
    int zero = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "zero_memory"));
    size_t la = mf->n_floats * 4, lb = 0;
    float *a = via_cli ? run_cli(model, mf->tokens_s, mf->segments_s, zero, &la)
                       : run_api(model, mf->segments, mf->n_seg, mf->tokens, mf->n_floats, zero);
    char *expect = join(dir, cJSON_GetObjectItemCaseSensitive(c, "expect")->valuestring);
    float *b = (float *)read_file(expect, &lb);
    CHECK(a && b && la == mf->n_floats * 4 && lb == la);
    double worst = a && b && la == lb ? max_abs_diff(a, b, la / 4) : INFINITY;
    printf("%-28s%s max |txlm - reference| = %.3g\n", name, via_cli ? " (txlm logprobs)" : "", worst);
    CHECK(worst <= TOL);
    free(a), free(b), free(expect), free(model);
}

static int read_manifest(const cJSON *m, manifest *mf)
{
    memset(mf, 0, sizeof *mf);
    size_t n = 0;
    for (const cJSON *t = cJSON_GetObjectItemCaseSensitive(m, "tokens")->child; t && n < 256; t = t->next, n++) {
        mf->tokens[n] = t->valueint;
        snprintf(mf->tokens_s + strlen(mf->tokens_s), sizeof mf->tokens_s - strlen(mf->tokens_s), "%s%d", n ? "," : "",
                 t->valueint);
    }
    for (const cJSON *t = cJSON_GetObjectItemCaseSensitive(m, "segments")->child; t && mf->n_seg < 64; t = t->next) {
        mf->segments[mf->n_seg] = t->valueint;
        snprintf(mf->segments_s + strlen(mf->segments_s), sizeof mf->segments_s - strlen(mf->segments_s), "%s%d",
                 mf->n_seg++ ? "," : "", t->valueint);
    }
    mf->n_floats = n * (size_t)cJSON_GetObjectItemCaseSensitive(m, "n_token")->valueint;
    return n > 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s TXLM_PACK TXLM FIXTURE_DIR\n", argv[0]);
        return 2;
    }
    pack_exe = argv[1], txlm_exe = argv[2], dir = argv[3];
    char *manifest_path = join(dir, "cases.json");
    size_t len = 0;
    char *text = read_file(manifest_path, &len);
    cJSON *m = text ? cJSON_ParseWithLength(text, len) : NULL;
    CHECK(m != NULL);
    static manifest mf;
    if (m && read_manifest(m, &mf) && !txlm_context_create(NULL, &ctx)) {
        int n_cases = 0;
        for (const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "cases")->child; c; c = c->next, n_cases++) {
            run_case(c, &mf, 0);
            /* the command line's flag, once */
            if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "zero_memory")) && n_cases < 8) run_case(c, &mf, 1);
        }
        CHECK(n_cases >= 10);
        CHECK(txlm_context_validation_messages(ctx) == 0);
        txlm_context_destroy(ctx);
    } else {
        fprintf(stderr, "setup: %s\n", m ? txlm_last_error() : "no cases.json");
        test_failures++;
    }
    cJSON_Delete(m);
    free(text);
    free(manifest_path);
    tmp_cleanup();
    if (test_failures) fprintf(stderr, "%d check(s) failed\n", test_failures);
    return test_failures ? 1 : 0;
}
