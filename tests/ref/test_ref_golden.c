/* The CPU reference against the golden cases of the public reference
 * implementation: pack the case's checkpoint, run every segment through
 * one reference session, compare every log-probability. This is what
 * makes the reference trustworthy as the yardstick of the kernel tests.
 *
 * usage: test_ref_golden GOLDEN_DIR WORK_DIR CASE... */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../import/util.h"
#include "ref_pack.h"
#include "ref_model.h"

#define TOLERANCE 1e-4

static int int_array(const cJSON *arr, int32_t **out)
{
    int n = cJSON_GetArraySize(arr), i = 0;
    *out = malloc((size_t)(n ? n : 1) * sizeof **out);
    const cJSON *it;
    cJSON_ArrayForEach(it, arr) (*out)[i++] = (int32_t)it->valueint;
    return n;
}

static int run_case(const char *golden, const char *work, const char *name)
{
    char dir[1024], path[1200], model[1200];
    txlm_err err = {0, ""};
    snprintf(dir, sizeof dir, "%s/%s", golden, name);
    snprintf(model, sizeof model, "%s/ref-%s.txlm", work, name);
    if (ref_pack_dir(dir, model, &err)) {
        fprintf(stderr, "FAIL %s: packing: %s\n", name, err.msg);
        return 1;
    }
    ref_model *m = NULL;
    ref_session *s = NULL;
    int rc = ref_model_open(model, &m, &err);
    if (!rc) rc = ref_session_new(m, NULL, &s, &err);
    unlink(model);
    if (rc) {
        fprintf(stderr, "FAIL %s: %s\n", name, err.msg);
        ref_model_free(m);
        return 1;
    }
    uint32_t V = ref_model_hparams(m)->n_token;
    snprintf(path, sizeof path, "%s/segments.json", dir);
    size_t json_len = 0;
    char *json = read_file(path, &json_len);
    cJSON *root = json ? cJSON_Parse(json) : NULL;
    const cJSON *segs = cJSON_GetObjectItemCaseSensitive(root, "segments"), *seg;
    int failed = !cJSON_IsArray(segs), k = 0;
    double worst = 0;
    if (failed) fprintf(stderr, "FAIL %s: cannot read %s\n", name, path);
    cJSON_ArrayForEach(seg, segs)
    {
        int32_t *tokens, *targets;
        int n = int_array(cJSON_GetObjectItemCaseSensitive(seg, "tokens"), &tokens);
        int nt = int_array(cJSON_GetObjectItemCaseSensitive(seg, "targets"), &targets);
        const cJSON *file = cJSON_GetObjectItemCaseSensitive(seg, "logprobs_file");
        double want_nll = cJSON_GetObjectItemCaseSensitive(seg, "mean_nll")->valuedouble;
        int want_mem = cJSON_GetObjectItemCaseSensitive(seg, "mem_len_after")->valueint;
        snprintf(path, sizeof path, "%s/%s", dir, file->valuestring);
        size_t want_len = 0;
        float *want = (float *)read_file(path, &want_len), *got = malloc((size_t)n * V * sizeof *got);
        if (!want || want_len != (size_t)n * V * sizeof *want || nt != n) {
            fprintf(stderr, "FAIL %s segment %d: %s has %zu bytes, expected %d x %u floats\n", name, k, path, want_len, n, V);
            failed = 1;
        } else if (ref_forward(s, tokens, (uint32_t)n, got, &err)) {
            fprintf(stderr, "FAIL %s segment %d: %s\n", name, k, err.msg);
            failed = 1;
        } else {
            double nll = 0;
            for (size_t i = 0; i < (size_t)n * V; i++) {
                double d = fabs((double)got[i] - want[i]);
                if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
            }
            for (int i = 0; i < n; i++) nll -= got[(size_t)i * V + (uint32_t)targets[i]];
            nll /= n;
            if (!(worst <= TOLERANCE) || fabs(nll - want_nll) > TOLERANCE ||
                ref_session_memory_len(s) != (uint32_t)want_mem) {
                fprintf(stderr, "FAIL %s segment %d: max |diff| %g, mean nll %.6f (want %.6f), memory %u (want %d)\n", name,
                        k, worst, nll, want_nll, ref_session_memory_len(s), want_mem);
                failed = 1;
            }
        }
        free(tokens), free(targets), free(want), free(got);
        k++;
    }
    printf("%s: %d segments, max |log-prob diff| %.3g\n", name, k, worst);
    cJSON_Delete(root);
    free(json);
    ref_session_free(s);
    ref_model_free(m);
    return failed;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s GOLDEN_DIR WORK_DIR CASE...\n", argv[0]);
        return 2;
    }
    mkdir(argv[2], 0755);
    int failed = 0;
    for (int i = 3; i < argc; i++) failed |= run_case(argv[1], argv[2], argv[i]);
    return failed;
}
