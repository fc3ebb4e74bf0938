#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "text_util.h"
#include "../common/slurp.h"
#include "../common/tmpdir.h"

int text_failures;

int pack_case(const char *pack_exe, const char *golden_dir, const char *name, const char *out, const char *extra)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", golden_dir, name);
    const char *argv[8] = {pack_exe, dir, "-o", out, NULL, NULL, NULL, NULL};
    if (extra) argv[4] = "--tokenizer", argv[5] = extra;
    char *err = NULL;
    int st = run_tool(argv, NULL, &err);
    if (st) fprintf(stderr, "txlm-pack %s: exit %d: %s", name, st, err ? err : "");
    free(err);
    return st;
}

size_t golden_stream(const char *golden_dir, const char *name, int32_t **tokens, uint32_t *seg_len, double *mean_nll)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/segments.json", golden_dir, name);
    char *text = slurp(path, NULL);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    free(text);
    cJSON *segs = cJSON_GetObjectItem(root, "segments");
    size_t n = 0, cap = 0;
    int32_t *t = NULL;
    double nll = 0;
    cJSON *seg, *last = NULL;
    *seg_len = 0;
    cJSON_ArrayForEach(seg, segs)
    {
        cJSON *toks = cJSON_GetObjectItem(seg, "tokens"), *x;
        int len = cJSON_GetArraySize(toks);
        if (!*seg_len) *seg_len = (uint32_t)len;
        nll += cJSON_GetObjectItem(seg, "mean_nll")->valuedouble * len;
        cJSON_ArrayForEach(x, toks)
        {
            if (n == cap && !(t = realloc(t, (cap = cap ? cap * 2 : 64) * sizeof *t))) return 0;
            t[n++] = x->valueint;
        }
        last = seg;
    }
    if (last) {
        cJSON *tg = cJSON_GetObjectItem(last, "targets");
        if (n == cap && !(t = realloc(t, (cap + 1) * sizeof *t))) return 0;
        t[n++] = cJSON_GetArrayItem(tg, cJSON_GetArraySize(tg) - 1)->valueint;
    }
    cJSON_Delete(root);
    *tokens = t;
    *mean_nll = n > 1 ? nll / (double)(n - 1) : 0;
    return n;
}

char *make_tmp_dir(void) { return test_mkdtemp("txlm_text"); }

void rm_tree(const char *dir)
{
    if (!dir) return;
    const char *argv[] = {"/bin/rm", "-rf", dir, NULL};
    run_tool(argv, NULL, NULL);
}

char *path_under(const char *dir, const char *name)
{
    static char buf[4][1100];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}
