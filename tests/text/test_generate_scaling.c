/* txlm generate on a long single-line prompt: doubling the prompt doubles
 * the text work. The prompt's last line goes through the streaming
 * detokenizer once; it used to be detokenized whole once per token, which
 * made a one-line prompt quadratic (16,000 tokens took 20.6 s of CPU
 * against 8.5 s for 8,000). The work is counted, not timed, so a loaded
 * machine cannot fail the test: count_text_calls.so, preloaded into txlm,
 * counts the bytes tokenized, the token ids detokenized and the bytes given
 * back across the public API, and each count of the longer prompt must be
 * at most twice the shorter's plus what the generated tokens add. The
 * library's own detokenizer is held linear by text_detok_stream.
 * usage: test_generate_scaling TXLM TXLM_PACK COUNT_TEXT_CALLS_SO */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text_util.h"

static const char *txlm, *pack, *shim;
static char *dir;

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

/* The text work of a run of generate on the prompt: bytes tokenized, ids
 * detokenized, bytes given back. */
static void generate_work(const char *model, int reps, unsigned long long work[3])
{
    const char *prompt = write_prompt(reps);
    const char *argv[] = {txlm, "generate", "-m", model, "-f", prompt, "-n", "5", "--temperature", "0", NULL};
    char counts[1100], *out = NULL, *err = NULL;
    snprintf(counts, sizeof counts, "%s/counts.txt", dir);
    remove(counts);
    setenv("TXLM_TEST_COUNTS", counts, 1);
    setenv("LD_PRELOAD", shim, 1);
    int st = run_tool(argv, &out, &err);
    unsetenv("LD_PRELOAD");
    /* the prompt as typed, then 5 tokens (a word or a line break each) and a line break */
    TCHECK(st == 0 && out && strlen(out) >= 6 * (size_t)reps + 6 && !strncmp(out + 6 * (size_t)(reps - 1), "w2 w3 ", 6));
    if (st) fprintf(stderr, "generate: exit %d: %s", st, err ? err : "");
    FILE *f = fopen(counts, "r");
    TCHECK(f && fscanf(f, "%llu %llu %llu", &work[0], &work[1], &work[2]) == 3);
    if (f) fclose(f);
    free(out);
    free(err);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s TXLM TXLM_PACK COUNT_TEXT_CALLS_SO\n", argv[0]);
        return 2;
    }
    txlm = argv[1], pack = argv[2], shim = argv[3];
    /* an ASan build's txlm has its runtime loaded after the preloaded counter */
    const char *asan = getenv("ASAN_OPTIONS");
    char asan_opts[4096];
    snprintf(asan_opts, sizeof asan_opts, "%s%sverify_asan_link_order=0", asan ? asan : "", asan && *asan ? ":" : "");
    setenv("ASAN_OPTIONS", asan_opts, 1);
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
    static const char *what[3] = {"bytes tokenized", "ids detokenized", "bytes given back"};
    unsigned long long w1[3] = {0}, w2[3] = {0};
    generate_work(model, 4000, w1);
    generate_work(model, 8000, w2);
    for (int k = 0; k < 3; k++) {
        printf("generate: %s: %llu for an 8,000-token prompt, %llu for 16,000\n", what[k], w1[k], w2[k]);
        /* the 5 generated tokens and the final line break add a little to each */
        TCHECK(w1[k] >= 8000 && w2[k] <= 2 * w1[k] + 64);
    }
    rm_tree(dir);
    free(dir);
    printf("%d failures\n", text_failures);
    return text_failures != 0;
}
