/* txlm eval's figures: the per-token NLLs (--per-token) are the API's
 * scores, the mean and its standard error (and the perplexity's, or the
 * bits per character's) match a direct computation over them, <unk>
 * targets are counted with a warning when many, and Ctrl-C (a SIGINT sent
 * while an endless text streams in) prints valid JSON over what was scored
 * and exits 130.
 * usage: test_eval_cli TXLM TXLM_PACK GOLDEN_DIR */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scoring_util.h"
#include "txlm.h"

/* Mean and standard error of the mean (sample variance), two passes in double. */
static void direct(const float *x, size_t n, double *mean, double *se)
{
    double s = 0, v = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    *mean = s / (double)n;
    for (size_t i = 0; i < n; i++) v += (x[i] - *mean) * (x[i] - *mean);
    *se = sqrt(v / (double)(n - 1) / (double)n);
}

/* The NLLs of the API's scoring of ids in segments of seg (the protocol). */
static double *api_nlls(const char *model, const int32_t *ids, size_t n, uint32_t seg)
{
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    txlm_session_options so = {.same_length = -1, .max_segment = seg};
    double *out = malloc(n * sizeof *out);
    float lp[64];
    int bad = seg > 64 || txlm_context_create(NULL, &ctx) || txlm_model_load(ctx, model, NULL, &m) ||
              txlm_session_create(m, &so, &s);
    for (size_t at = 0; !bad && at + 1 < n; at += seg) {
        uint32_t len = n - 1 - at < seg ? (uint32_t)(n - 1 - at) : seg;
        bad = txlm_session_score(s, ids + at, ids + at + 1, len, lp) != TXLM_OK;
        for (uint32_t i = 0; !bad && i < len; i++) out[at + i] = -(double)lp[i];
    }
    txlm_session_free(s);
    txlm_model_free(m);
    txlm_context_destroy(ctx);
    if (bad) free(out);
    return bad ? NULL : out;
}

/* eval --json --per-token on a golden stream; every figure against the NLLs. */
static void test_figures(const char *model, const char *name)
{
    int32_t *t = NULL;
    uint32_t seg = 0;
    double golden_nll = 0;
    size_t n = golden_stream(sc_golden, name, &t, &seg, &golden_nll);
    const char *text = sc_path("stream.txt"), *nll_path = sc_path("nll.f32");
    char seg_s[16], *out = NULL, *err = NULL;
    snprintf(seg_s, sizeof seg_s, "%u", seg);
    TCHECK(n > 2 && sc_write_stream(text, t, n) == 0);
    const char *args[] = {"eval", "-m", model, text, "--tgt-len", seg_s, "--json", "--per-token", nll_path, NULL};
    TCHECK(sc_txlm_run(args, &out, &err) == 0);
    cJSON *j = cJSON_Parse(out ? out : "");
    size_t nn = 0;
    float *nll = sc_read_f32(nll_path, &nn);
    double *api = api_nlls(model, t, n, seg);
    TCHECK(j && nll && api && nn == n - 1 && sc_num(j, "tokens") == (double)(n - 1));
    for (size_t i = 0; nll && api && i < nn && i + 1 < n; i++) TCHECK(fabs(nll[i] - api[i]) < 1e-6);
    double mean = 0, se = 0;
    if (nll && nn > 1) direct(nll, nn, &mean, &se);
    if (fabs(sc_num(j, "mean_nll_se") - se) > 2e-6) fprintf(stderr, "%s: se %.6f, direct %.6f\n", name, sc_num(j, "mean_nll_se"), se);
    TCHECK(fabs(sc_num(j, "mean_nll") - mean) < 2e-6 && fabs(mean - golden_nll) < 1e-3);
    TCHECK(se > 0 && fabs(sc_num(j, "mean_nll_se") - se) < 2e-6);
    /* perplexity +/- its standard error as llama.cpp's perplexity tool gives it: exp(mean) * se */
    TCHECK(fabs(sc_num(j, "perplexity") - exp(mean)) < 1e-6 * exp(mean));
    TCHECK(fabs(sc_num(j, "perplexity_se") - exp(mean) * se) < 1e-5 * exp(mean) * se);
    TCHECK(sc_num(j, "unk") == 0 && sc_num(j, "unk_rate") == 0 && cJSON_IsFalse(cJSON_GetObjectItem(j, "interrupted")));
    TCHECK(err && !strstr(err, "warning"));
    cJSON_Delete(j);
    free(out), free(err), free(nll), free(api), free(t);

    /* the text line says the same */
    const char *plain[] = {"eval", "-m", model, text, "--tgt-len", seg_s, NULL};
    TCHECK(sc_txlm_run(plain, &out, NULL) == 0);
    char want[256];
    snprintf(want, sizeof want, "mean NLL %.4f +/- %.4f, perplexity %.4f +/- %.4f, 0 <unk> (0.00%%)", mean, se, exp(mean),
             exp(mean) * se);
    if (!out || !strstr(out, want)) fprintf(stderr, "got %s, want %s\n", out, want);
    TCHECK(out && strstr(out, want));
    free(out);
}

/* A byte model: bits per character, their standard error the NLL's / ln 2. */
static void test_bpc(void)
{
    char vocab[8192];
    size_t vl = 0;
    for (int b = 0; b < 256; b++) vl += (size_t)sprintf(vocab + vl, "%d\n", b);
    for (int i = 256; i < 1000; i++) vl += (size_t)sprintf(vocab + vl, "pad%d\n", i);
    const char *model = sc_path("bytes.txlm"), *vpath = sc_path("bytes.txt"), *text = sc_path("bytes_text.txt");
    const char *nll_path = sc_path("bytes_nll.f32"), *s = "Pack my box with five dozen liquor jugs.\n";
    TCHECK(sc_write(vpath, vocab, vl) == 0 && sc_write(text, s, strlen(s)) == 0);
    TCHECK(sc_pack_vocab("adaptive_word", vpath, "char", model, NULL) == 0);
    const char *args[] = {"eval", "-m", model, text, "--json", "--per-token", nll_path, NULL};
    char *out = NULL;
    TCHECK(sc_txlm_run(args, &out, NULL) == 0);
    cJSON *j = cJSON_Parse(out ? out : "");
    size_t nn = 0;
    float *nll = sc_read_f32(nll_path, &nn);
    double mean = 0, se = 0;
    TCHECK(j && nll && nn == strlen(s) - 1);
    if (nll && nn > 1) direct(nll, nn, &mean, &se);
    TCHECK(fabs(sc_num(j, "bpc") - mean / log(2.0)) < 2e-6 && fabs(sc_num(j, "bpc_se") - se / log(2.0)) < 2e-6);
    TCHECK(!cJSON_GetObjectItem(j, "perplexity"));
    cJSON_Delete(j);
    free(out), free(nll);
}

/* Words the vocabulary lacks: counted among the targets, and a warning. */
static void test_unk(const char *model)
{
    const char *text = sc_path("unk.txt");
    TCHECK(sc_write(text, "zz0 w5 zz1 zz2 w12 w3\n", 22) == 0);
    const char *args[] = {"eval", "-m", model, text, "--json", NULL};
    char *out = NULL, *err = NULL;
    TCHECK(sc_txlm_run(args, &out, &err) == 0);
    cJSON *j = cJSON_Parse(out ? out : "");
    /* 7 tokens (the line's <eos> too), 6 targets (not the first), 2 of them <unk> */
    TCHECK(j && sc_num(j, "tokens") == 6 && sc_num(j, "unk") == 2 && fabs(sc_num(j, "unk_rate") - 2.0 / 6) < 1e-6);
    TCHECK(err && strstr(err, "warning: 33.3% of the tokens scored are <unk>"));
    cJSON_Delete(j);
    free(out), free(err);
}

/* Ctrl-C while an endless text streams in from a pipe: exit 130 and the
 * figures over what was scored, as valid JSON; --per-token holds them. */
static void test_sigint(const char *model)
{
    const char *out_path = sc_path("sigint.out"), *err_path = sc_path("sigint.err"), *nll_path = sc_path("sigint.f32");
    /* once it is scoring (the progress bar has printed a line with the running figure) */
    const char *args[] = {"eval", "-m", model, "-", "--tgt-len", "8", "--json", "--progress", "--per-token", nll_path, NULL};
    TCHECK(sc_interrupt(args, out_path, err_path, "PPL") == 130);
    char *out = slurp(out_path, NULL);
    cJSON *j = cJSON_Parse(out ? out : "");
    size_t nn = 0;
    float *nll = sc_read_f32(nll_path, &nn);
    double mean = 0, se = 0;
    if (nll && nn > 1) direct(nll, nn, &mean, &se);
    TCHECK(j && cJSON_IsTrue(cJSON_GetObjectItem(j, "interrupted")) && sc_num(j, "tokens") > 8);
    TCHECK(j && nll && sc_num(j, "tokens") == (double)nn && fabs(sc_num(j, "mean_nll") - mean) < 2e-6);
    TCHECK(sc_file_has(err_path, "txlm: interrupted"));
    if (!j) fprintf(stderr, "stdout after Ctrl-C: [%s]\n", out ? out : "");
    cJSON_Delete(j);
    free(out), free(nll);
}

int main(int argc, char **argv)
{
    if (sc_start(argc, argv)) return 2;
    const char *aw = sc_path("aw.txlm"), *cp = sc_path("cp.txlm");
    char *model = strdup(aw);
    TCHECK(pack_case(sc_pack, sc_golden, "adaptive_word", model, NULL) == 0 &&
           pack_case(sc_pack, sc_golden, "char_preln", cp, NULL) == 0);
    test_figures(model, "adaptive_word");
    test_figures(sc_path("cp.txlm"), "char_preln");
    test_bpc();
    test_unk(model);
    test_sigint(model);
    free(model);
    return sc_finish();
}
