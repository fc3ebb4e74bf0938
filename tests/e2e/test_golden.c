/* End to end, through the shipped tools: txlm-pack a golden case, run
 * `txlm logprobs` with its segments through one session, and compare
 * every log-probability with the reference implementation's.
 *
 * usage: test_golden TXLM TXLM_PACK GOLDEN_DIR CASE WORK_DIR [WEIGHTS_FILE|- [DTYPE]]
 *
 * With DTYPE (f16, q8_0, q4_0) the weight matrices are stored in that type
 * and the bounds are those of docs/format.md, "Accuracy": f16 max
 * |diff| <= 0.05; q8_0 / q4_0 mean NLL over all targets within 1% / 5% of
 * the reference's (float32, which the f32 engine matches within 1e-3).
 * TXLM_RUN_WRAPPER, where set, is put before the txlm command (a program
 * to run it under). With TXLM_TEST_WANT_COOPMAT set (CI on a lavapipe
 * with cooperative matrices, the GPU kernels forced), txlm runs with
 * TXLM_PROFILE=1 and its kernels are checked: an f32 model's work never
 * on the matrix units, an f16 model's attention on attn_cm (every golden
 * case's heads are 16 wide, as that kernel takes; a block type leaves a
 * q|k|v projection whose rows are not whole blocks in f32, and with it
 * the attention, so q8_0 and q4_0 may take either). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../common/slurp.h"

#define TOLERANCE 5e-4
#define F16_TOLERANCE 0.05
#define Q8_0_NLL_REL 0.01
#define Q4_0_NLL_REL 0.05

static int run(const char *cmd)
{
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "FAIL: command failed (status %d): %s\n", st, cmd);
        return 1;
    }
    return 0;
}

/* The kernels txlm's profile (TXLM_PROFILE=1, on stderr into `profile`)
 * names, against what the matrix units take: 0, or 1 with a message. */
static int check_matrix_units(const char *profile, const char *dtype)
{
    char *text = slurp(profile, NULL);
    int attn = text && strstr(text, "\nattn_cm") != NULL, products = text && strstr(text, "\nlinear_cm_") != NULL;
    int f16 = dtype && !strcmp(dtype, "f16");
    int bad = !text || (f16 && !attn) || (!dtype && (attn || products));
    if (bad)
        fprintf(stderr, "FAIL: %s model: %s\n%s\n", dtype ? dtype : "an f32",
                dtype ? "its attention did not run on the matrix units (attn_cm)" : "its work ran on the matrix units",
                text ? text : "(no profile)");
    else
        printf("matrix units: %s%s\n", attn ? "attn_cm" : "not attn_cm", products ? ", linear_cm_*" : "");
    free(text);
    remove(profile);
    return bad;
}

/* Appends "a,b,c" of a JSON int array to a growing string. */
static void append_ints(char **s, size_t *len, size_t *cap, const cJSON *arr, int *count)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        if (*len + 16 > *cap) {
            *cap = (*cap + 16) * 2;
            *s = realloc(*s, *cap);
        }
        *len += (size_t)snprintf(*s + *len, *cap - *len, "%s%d", *len ? "," : "", it->valueint);
        (*count)++;
    }
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: %s TXLM TXLM_PACK GOLDEN_DIR CASE WORK_DIR [WEIGHTS_FILE]\n", argv[0]);
        return 2;
    }
    const char *txlm = argv[1], *pack = argv[2], *golden = argv[3], *name = argv[4], *work = argv[5];
    const char *weights = argc > 6 && strcmp(argv[6], "-") ? argv[6] : NULL;
    const char *dtype = argc > 7 && strcmp(argv[7], "f32") ? argv[7] : NULL;
    char tag[256];
    snprintf(tag, sizeof tag, "%s%s%s%s", weights ? "-" : "", weights ? weights : "", dtype ? "-" : "", dtype ? dtype : "");
    char dir[1024], path[1200], model[1200], out[1200], cmd[8192];
    mkdir(work, 0755);
    snprintf(dir, sizeof dir, "%s/%s", golden, name);
    snprintf(model, sizeof model, "%s/%s%s.txlm", work, name, tag);
    snprintf(out, sizeof out, "%s/%s%s.f32", work, name, tag);

    int n = snprintf(cmd, sizeof cmd, "'%s' '%s' -o '%s'", pack, dir, model);
    if (weights) n += snprintf(cmd + n, sizeof cmd - (size_t)n, " --weights '%s/%s'", dir, weights);
    if (dtype) snprintf(cmd + n, sizeof cmd - (size_t)n, " --dtype %s", dtype);
    if (run(cmd)) return 1;

    snprintf(path, sizeof path, "%s/segments.json", dir);
    char *json = slurp(path, NULL);
    cJSON *root = json ? cJSON_Parse(json) : NULL;
    const cJSON *segs = cJSON_GetObjectItemCaseSensitive(root, "segments");
    if (!cJSON_IsArray(segs)) {
        fprintf(stderr, "FAIL: cannot read %s\n", path);
        return 1;
    }
    char *tokens = NULL, *lens = NULL;
    size_t tl = 0, tc = 0, ll = 0, lc = 0;
    int n_tokens = 0, n_segs = 0;
    const cJSON *seg;
    cJSON_ArrayForEach(seg, segs)
    {
        int before = n_tokens;
        append_ints(&tokens, &tl, &tc, cJSON_GetObjectItemCaseSensitive(seg, "tokens"), &n_tokens);
        cJSON *len = cJSON_CreateArray();
        cJSON_AddItemToArray(len, cJSON_CreateNumber(n_tokens - before));
        append_ints(&lens, &ll, &lc, len, &n_segs);
        cJSON_Delete(len);
    }
    /* TXLM_RUN_WRAPPER: a program txlm runs under (CI: another Vulkan driver, scripts/newer-vulkan.sh run) */
    const char *wrap = getenv("TXLM_RUN_WRAPPER"), *want_cm = getenv("TXLM_TEST_WANT_COOPMAT");
    int profiled = want_cm && *want_cm;
    char profile[1300];
    snprintf(profile, sizeof profile, "%s.profile", out);
    n = snprintf(cmd, sizeof cmd, "%s%s%s'%s' logprobs -m '%s' --tokens %s --segments %s -o '%s'",
                 profiled ? "TXLM_PROFILE=1 " : "", wrap ? wrap : "", wrap ? " " : "", txlm, model, tokens, lens, out);
    if (profiled) snprintf(cmd + n, sizeof cmd - (size_t)n, " 2> '%s'", profile);
    if (run(cmd) || (profiled && check_matrix_units(profile, dtype))) return 1;

    size_t got_len;
    float *got = (float *)slurp(out, &got_len);
    if (!got || got_len % (sizeof(float) * (size_t)n_tokens)) {
        fprintf(stderr, "FAIL: %s has %zu bytes, not a multiple of %d rows\n", out, got_len, n_tokens);
        return 1;
    }
    size_t V = got_len / sizeof(float) / (size_t)n_tokens;
    double worst = 0, nll_all = 0, ref_all = 0;
    size_t row = 0;
    int k = 0, failed = 0;
    cJSON_ArrayForEach(seg, segs)
    {
        const cJSON *file = cJSON_GetObjectItemCaseSensitive(seg, "logprobs_file");
        const cJSON *targets = cJSON_GetObjectItemCaseSensitive(seg, "targets");
        const cJSON *mean = cJSON_GetObjectItemCaseSensitive(seg, "mean_nll");
        int n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(seg, "tokens"));
        snprintf(path, sizeof path, "%s/%s", dir, file->valuestring);
        size_t want_len;
        float *want = (float *)slurp(path, &want_len);
        if (!want || want_len != (size_t)n * V * sizeof(float)) {
            fprintf(stderr, "FAIL: %s: expected %zu bytes\n", path, (size_t)n * V * sizeof(float));
            return 1;
        }
        double seg_worst = 0, nll = 0;
        for (size_t i = 0; i < (size_t)n * V; i++) {
            double d = fabs((double)got[row * V + i] - (double)want[i]);
            if (!(d <= seg_worst)) seg_worst = isnan(d) ? INFINITY : d; /* NaN must stick */
        }
        for (int i = 0; i < n; i++) nll -= got[(row + (size_t)i) * V + (size_t)cJSON_GetArrayItem(targets, i)->valueint];
        nll_all += nll;
        ref_all += mean->valuedouble * n;
        nll /= n;
        printf("%s segment %d: %d tokens, max |diff| %.3g, mean NLL %.6f (reference %.6f)\n", name, k, n, seg_worst, nll,
               mean->valuedouble);
        if (!dtype && (!(seg_worst <= TOLERANCE) || fabs(nll - mean->valuedouble) > 1e-3)) failed = 1;
        if (!(seg_worst <= worst)) worst = seg_worst;
        row += (size_t)n;
        k++;
        free(want);
    }
    remove(out);
    remove(model);
    cJSON_Delete(root);
    free(json), free(tokens), free(lens), free(got);
    if (dtype) {
        double rel = fabs(nll_all - ref_all) / ref_all;
        double bound = !strcmp(dtype, "f16") ? F16_TOLERANCE : !strcmp(dtype, "q8_0") ? Q8_0_NLL_REL : Q4_0_NLL_REL;
        int ok = !strcmp(dtype, "f16") ? worst <= bound : rel <= bound;
        printf("accuracy %s %s: max |diff| %.4g, mean NLL %.6f vs f32 %.6f (diff %+.6f, %.3f%%)\n", name, dtype,
               worst, nll_all / (double)n_tokens, ref_all / (double)n_tokens, (nll_all - ref_all) / (double)n_tokens,
               100 * rel);
        if (!ok) {
            fprintf(stderr, "FAIL: %s %s: outside its bound %g (%s)\n", name, dtype, bound,
                    !strcmp(dtype, "f16") ? "max |diff|" : "relative mean NLL");
            return 1;
        }
        return 0;
    }
    if (failed) {
        fprintf(stderr, "FAIL: %s: max |diff| %.3g exceeds %.1g (or a mean NLL differs)\n", name, worst, TOLERANCE);
        return 1;
    }
    printf("%s: all %d segments within %.1g (max %.3g)\n", name, k, TOLERANCE, worst);
    return 0;
}
