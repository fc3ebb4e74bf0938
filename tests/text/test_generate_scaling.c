/* txlm generate on a long single-line prompt: doubling the prompt at most
 * doubles the time. The prompt's last line goes through the streaming
 * detokenizer once; it used to be detokenized whole once per token, which
 * made a one-line prompt quadratic (here 16,000 tokens took 20.6 s of CPU
 * against 8.5 s for 8,000; now 7.0 s against 6.7 s). The model is synthetic, with 1024-token segments, so
 * that feeding the prompt costs little beside the fixed cost of starting.
 * Time is the child's CPU time (user + system), steadier than wall time on
 * a loaded machine; a pair of runs that looks worse than linear is run
 * again (the better time of each size counts), so a busy moment does not
 * fail the test.
 * usage: test_generate_scaling TXLM TXLM_PACK */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "text_util.h"

static const char *txlm, *pack;
static char *dir;

static double children_cpu(void)
{
    struct rusage r;
    getrusage(RUSAGE_CHILDREN, &r);
    return (double)r.ru_utime.tv_sec + r.ru_utime.tv_usec * 1e-6 + (double)r.ru_stime.tv_sec + r.ru_stime.tv_usec * 1e-6;
}

/* A prompt of `reps` times "w2 w3 " (no line break) -> file; returns its path. */
static const char *write_prompt(int reps)
{
    static char path[1100];
    snprintf(path, sizeof path, "%s/prompt_%d.txt", dir, reps);
    FILE *f = fopen(path, "wb");
    for (int i = 0; f && i < reps; i++) fputs("w2 w3 ", f);
    if (f) fclose(f);
    return path;
}

/* CPU seconds of a run of generate on the prompt. */
static double generate_time(const char *model, int reps)
{
    const char *prompt = write_prompt(reps);
    const char *argv[] = {txlm, "generate", "-m", model, "-f", prompt, "-n", "5", "--temperature", "0", NULL};
    char *out = NULL, *err = NULL;
    double t0 = children_cpu();
    int st = run_tool(argv, &out, &err);
    double dt = children_cpu() - t0;
    /* the prompt as typed, then 5 tokens (a word or a line break each) and a line break */
    TCHECK(st == 0 && out && strlen(out) >= 6 * (size_t)reps + 6 && !strncmp(out + 6 * (size_t)(reps - 1), "w2 w3 ", 6));
    if (st) fprintf(stderr, "generate: exit %d: %s", st, err ? err : "");
    free(out);
    free(err);
    return dt;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s TXLM TXLM_PACK\n", argv[0]);
        return 2;
    }
    txlm = argv[1], pack = argv[2];
    dir = make_tmp_dir();
    if (!dir) return 1;
    char config[1100], model[1100];
    snprintf(config, sizeof config, "%s/config.json", dir);
    snprintf(model, sizeof model, "%s/long.txlm", dir);
    FILE *f = fopen(config, "wb");
    if (f) {
        fputs("{\"n_token\": 1000, \"d_model\": 16, \"d_embed\": 16, \"n_head\": 2, \"d_head\": 8, \"d_inner\": 32,"
              " \"n_layer\": 1, \"tgt_len\": 1024, \"mem_len\": 16, \"clamp_len\": 64, \"same_length\": false,"
              " \"cutoffs\": [], \"div_val\": 1, \"tie_weight\": true, \"untie_r\": true, \"pre_lnorm\": false}\n", f);
        fclose(f);
    }
    const char *pk[] = {pack, "--synthetic", config, "--tokenizer", "wt103", "-o", model, NULL};
    if (run_tool(pk, NULL, NULL) != 0) {
        fprintf(stderr, "txlm-pack --synthetic failed\n");
        rm_tree(dir);
        return 1;
    }
    double t1 = 1e9, t2 = 1e9;
    for (int round = 0; round < 3; round++) {
        double a = generate_time(model, 4000), b = generate_time(model, 8000);
        t1 = a < t1 ? a : t1, t2 = b < t2 ? b : t2;
        printf("generate: 8,000-token prompt %.2f s CPU, 16,000-token prompt %.2f s CPU (ratio %.2f)\n", a, b, b / a);
        if (t2 <= 2 * t1) break;
    }
    TCHECK(t2 <= 2 * t1);
    rm_tree(dir);
    free(dir);
    printf("%d failures\n", text_failures);
    return text_failures != 0;
}
