/* The authors' TensorFlow checkpoints (tf_ckpts/gen.py: the four model
 * shapes of the paper and one more, written as TensorFlow writes bundles,
 * with the data folder download.sh fetches), each packed with one
 * txlm-pack command from the top folder, the model folder, a prefix or an
 * .index, and run: every log-probability of several segments, memory
 * carried, within 5e-4 of tf/model.py's computation (gen.py's reference:
 * zero memories, epsilon 1e-12, _create_mask's same_length), through the
 * library with the file's defaults and once through txlm logprobs.
 *
 * usage: test_import_tf_ckpts TXLM_PACK TXLM FIXTURE_DIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <txlm.h>

#include "txlm_file.h"
#include "util.h"
#include "../common/run_tool.h"

#define TOL 5e-4

static const char *pack_exe, *txlm_exe, *dir;
static txlm_context *ctx;

typedef struct tf_case {
    const char *name, *path, *expect, *dataset;
    int32_t tokens[256];
    int segments[32], n_seg, n_tok;
    uint32_t n_token, mem_len;
    int32_t clamp_len;
} tf_case;

/* txlm-pack PATH -o OUT; its stderr must tell the dataset's settings. */
static char *pack(const tf_case *c, int k)
{
    char path[1024], name[64];
    snprintf(path, sizeof path, "%s/%s", dir, c->path);
    snprintf(name, sizeof name, "tf%d.txlm", k);
    char *out_path = strdup(tmp_path(name));
    const char *argv[] = {pack_exe, path, "-o", out_path, NULL};
    char *so = NULL, *se = NULL, want[64];
    int st = run_tool(argv, &so, &se);
    snprintf(want, sizeof want, "dataset %s: the lengths of tf/sota/%s.sh", c->dataset, c->dataset);
    int ok = st == 0 && so && !so[0] && se && strstr(se, want) && strstr(se, "LayerNorm epsilon 1e-12") &&
             strstr(se, "mem_len rows of zeros") && strstr(se, "tail-cluster order: forward") && strstr(se, "NVIDIA's rule");
    if (!ok) fprintf(stderr, "%s: txlm-pack exit %d, stdout \"%s\", stderr \"%s\"\n", c->name, st, so ? so : "", se ? se : "");
    CHECK(ok);
    free(so), free(se);
    if (!ok) free(out_path);
    return ok ? out_path : NULL;
}

/* What the file says of itself: the paper's lengths and TensorFlow's semantics. */
static void check_file(const tf_case *c, const char *model)
{
    static const struct { const char *ds; uint32_t tgt, mem; int32_t clamp; } paper[] = {
        {"wt103", 128, 1600, 1000}, {"lm1b", 32, 128, -1}, {"enwik8", 128, 3800, 1000}, {"text8", 128, 3800, 1000}};
    txlm_err err = {0, ""};
    txlm_file *f = NULL;
    EXPECT_OK(txlm_file_open(model, 0, &f, &err), &err);
    if (!f) return;
    const txlm_hparams *h = txlm_file_hparams(f);
    CHECK(h->layer_norm_epsilon == 1e-12f && h->zero_memory == 1 && h->same_length && h->same_length_rule == 1);
    for (size_t i = 0; i < sizeof paper / sizeof *paper; i++)
        if (!strcmp(paper[i].ds, c->dataset)) CHECK(h->tgt_len == paper[i].tgt && h->mem_len == paper[i].mem && h->clamp_len == paper[i].clamp);
    txlm_file_close(f);
}

/* txlm info shows the file's zero start, NVIDIA's same_length rule and
 * (lm1b) the <eos> that opens every line. */
static void check_info(const tf_case *c, const char *model)
{
    const char *argv[] = {txlm_exe, "info", "-m", model, "--no-verify", NULL};
    char *so = NULL, *se = NULL;
    int st = run_tool(argv, &so, &se);
    int lm1b = !strcmp(c->dataset, "lm1b");
    int ok = st == 0 && so && strstr(so, "same_length_rule 1 (NVIDIA's") && strstr(so, "zero_memory 1 (a session starts from") &&
             (strstr(so, ", eos also opens every line") != NULL) == lm1b;
    if (!ok) fprintf(stderr, "%s: txlm info exit %d, stdout \"%s\"\n", c->name, st, so ? so : "");
    CHECK(ok);
    free(so), free(se);
}

/* Packed again (another --dtype), the model keeps its zero start. */
static void check_repack(const char *model)
{
    const char *again = tmp_path("tf_again.txlm");
    const char *argv[] = {pack_exe, model, "--dtype", "f16", "-o", again, NULL};
    char *so = NULL, *se = NULL;
    int st = run_tool(argv, &so, &se);
    CHECK(st == 0 && se && strstr(se, "mem_len rows of zeros") && strstr(se, "stored in the file"));
    free(so), free(se);
    txlm_err err = {0, ""};
    txlm_file *f = NULL;
    EXPECT_OK(txlm_file_open(again, 0, &f, &err), &err);
    CHECK(f && txlm_file_hparams(f)->zero_memory == 1 && txlm_file_hparams(f)->same_length_rule == 1);
    txlm_file_close(f);
}

static float *run_api(const tf_case *c, const char *model, int zero)
{
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    float *lp = calloc((size_t)c->n_tok * c->n_token, sizeof *lp);
    txlm_session_options so = {.mem_len = c->mem_len, .clamp_len = c->clamp_len, .same_length = -1, .zero_memory = zero};
    int ok = lp && !txlm_model_load(ctx, model, NULL, &m) && !txlm_session_create(m, &so, &s);
    for (int k = 0, at = 0; ok && k < c->n_seg; at += c->segments[k++])
        ok = !txlm_session_feed(s, c->tokens + at, (uint32_t)c->segments[k], lp + (size_t)at * c->n_token);
    if (!ok) fprintf(stderr, "%s: %s\n", model, txlm_last_error());
    CHECK(ok);
    txlm_session_free(s);
    txlm_model_free(m);
    if (!ok) free(lp), lp = NULL;
    return lp;
}

/* txlm logprobs with the file's defaults (the first case of each dataset
 * uses them: zero memories and the paper's lengths). */
static float *run_cli(const tf_case *c, const char *model, size_t *len)
{
    char tokens[2048] = "", segments[256] = "";
    for (int i = 0; i < c->n_tok; i++) snprintf(tokens + strlen(tokens), sizeof tokens - strlen(tokens), "%s%d", i ? "," : "", c->tokens[i]);
    for (int i = 0; i < c->n_seg; i++)
        snprintf(segments + strlen(segments), sizeof segments - strlen(segments), "%s%d", i ? "," : "", c->segments[i]);
    return run_logprobs(txlm_exe, model, tokens, segments, NULL, NULL, len);
}

static void run_case(const tf_case *c, int k)
{
    char *model = pack(c, k);
    if (!model) return;
    check_file(c, model);
    check_info(c, model);
    if (k == 0) check_repack(model);
    char expect[1024];
    snprintf(expect, sizeof expect, "%s/%s", dir, c->expect);
    size_t lb = 0, n = (size_t)c->n_tok * c->n_token;
    float *b = (float *)read_file(expect, &lb), *a = run_api(c, model, 0);
    CHECK(b && lb == n * 4);
    double worst = a && b && lb == n * 4 ? max_abs_diff(a, b, n) : INFINITY;
    printf("%-52s max |txlm - tf/model.py| = %.3g\n", c->name, worst);
    CHECK(worst <= TOL);
    free(a);
    if (!c->mem_len && !c->clamp_len && b) { /* the model's own settings: also through the command */
        size_t la = 0;
        a = run_cli(c, model, &la);
        worst = a && la == lb ? max_abs_diff(a, b, n) : INFINITY;
        printf("%-52s max |txlm logprobs - tf/model.py| = %.3g\n", c->name, worst);
        CHECK(worst <= TOL);
        free(a);
    } else if (b) { /* an empty memory instead of zeros is another model: the check can see it */
        a = run_api(c, model, -1);
        worst = a ? max_abs_diff(a, b, n) : 0;
        printf("%-52s with an empty memory instead: %.3g\n", c->name, worst);
        CHECK(worst > 100 * TOL);
        free(a);
    }
    free(b);
    free(model);
}

static int read_case(const cJSON *j, tf_case *c)
{
    memset(c, 0, sizeof *c);
    c->name = cJSON_GetObjectItemCaseSensitive(j, "name")->valuestring;
    c->path = cJSON_GetObjectItemCaseSensitive(j, "path")->valuestring;
    c->expect = cJSON_GetObjectItemCaseSensitive(j, "expect")->valuestring;
    c->dataset = cJSON_GetObjectItemCaseSensitive(j, "dataset")->valuestring;
    c->n_token = (uint32_t)cJSON_GetObjectItemCaseSensitive(j, "n_token")->valueint;
    c->mem_len = (uint32_t)cJSON_GetObjectItemCaseSensitive(j, "mem_len")->valueint;
    c->clamp_len = cJSON_GetObjectItemCaseSensitive(j, "clamp_len")->valueint;
    for (const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "tokens")->child; t && c->n_tok < 256; t = t->next)
        c->tokens[c->n_tok++] = t->valueint;
    for (const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "segments")->child; t && c->n_seg < 32; t = t->next)
        c->segments[c->n_seg++] = t->valueint;
    return c->n_tok > 0 && c->n_seg > 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s TXLM_PACK TXLM FIXTURE_DIR\n", argv[0]);
        return 2;
    }
    pack_exe = argv[1], txlm_exe = argv[2], dir = argv[3];
    char manifest[1024];
    snprintf(manifest, sizeof manifest, "%s/cases.json", dir);
    size_t len = 0;
    char *text = read_file(manifest, &len);
    cJSON *m = text ? cJSON_ParseWithLength(text, len) : NULL;
    CHECK(m != NULL);
    int n = 0;
    if (m && !txlm_context_create(NULL, &ctx)) {
        static tf_case c;
        for (const cJSON *j = cJSON_GetObjectItemCaseSensitive(m, "cases")->child; j; j = j->next, n++)
            if (read_case(j, &c)) run_case(&c, n);
        CHECK(txlm_context_validation_messages(ctx) == 0);
        txlm_context_destroy(ctx);
    }
    CHECK(n >= 8);
    cJSON_Delete(m);
    free(text);
    tmp_cleanup();
    if (test_failures) fprintf(stderr, "%d check(s) failed\n", test_failures);
    return test_failures ? 1 : 0;
}
