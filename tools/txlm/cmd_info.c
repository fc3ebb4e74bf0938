/* txlm info: a model file's hyper-parameters, vocabulary and tensors. */
#include <string.h>

#include "cli.h"
#include "cli_files.h"

static void print_hparams(const txlm_model_file_info *h)
{
    printf("hyper-parameters:\n");
    printf("  n_token %u  d_model %u  d_embed %u  n_head %u  d_head %u  d_inner %u  n_layer %u\n", h->n_token,
           h->d_model, h->d_embed, h->n_head, h->d_head, h->d_inner, h->n_layer);
    printf("  div_val %u  cutoffs [", h->div_val);
    for (uint32_t i = 0; i < h->n_cutoffs; i++) printf("%s%u", i ? ", " : "", h->cutoffs[i]);
    printf("]  tie_weight %u  tie_projs [", h->tie_weight);
    for (uint32_t i = 0; i <= h->n_cutoffs; i++) printf("%s%u", i ? ", " : "", h->tie_projs[i]);
    printf("]\n  pre_lnorm %u  untie_r %u  same_length %u  clamp_len %d  mem_len %u  tgt_len %u  eps %g\n",
           h->pre_lnorm, h->untie_r, h->same_length, h->clamp_len, h->mem_len, h->tgt_len, (double)h->layer_norm_epsilon);
    printf("  same_length_rule %u (%s)  zero_memory %d (%s)\n", h->same_length_rule,
           h->same_length_rule ? "NVIDIA's: one key more" : "the authors' and HF's", h->zero_memory,
           h->zero_memory ? "a session starts from mem_len rows of zeros" : "a session starts from an empty memory");
}

/* --check: every tensor's values; 1 when any is NaN or infinite. */
static int check_values(const txlm_model_file *f, uint32_t n)
{
    uint32_t bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        txlm_model_file_tensor t;
        txlm_model_file_nonfinite nf;
        if (txlm_model_file_get_tensor(f, i, &t) || txlm_model_file_scan_tensor(f, i, &nf) || !nf.count) continue;
        printf("  non-finite: %s: %llu of %llu values, the first at element %llu (%s)\n", t.name,
               (unsigned long long)nf.count, (unsigned long long)t.n_elems, (unsigned long long)nf.first, nf.value);
        bad++;
    }
    if (!bad) {
        printf("check: no NaN or infinite values in %u tensors\n", n);
        return 0;
    }
    printf("check: %u of %u tensors hold NaN or infinite values\n", bad, n);
    return cli_error("%s: %u tensors hold NaN or infinite values", "check", bad);
}

/* Every tensor, then how much of the file each stored type takes (what --dtype changed). */
static void print_tensors(const txlm_model_file *f, uint32_t n)
{
    enum { N_DTYPES = 8 };
    uint64_t total = 0, by_dtype[N_DTYPES] = {0};
    uint32_t count[N_DTYPES] = {0};
    const char *names[N_DTYPES] = {0};
    printf("tensors (%u):\n", n);
    for (uint32_t i = 0; i < n; i++) {
        txlm_model_file_tensor t;
        if (txlm_model_file_get_tensor(f, i, &t)) continue;
        char shape[128] = "";
        for (uint32_t r = 0; r < t.rank; r++)
            snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%llu", r ? ", " : "", (unsigned long long)t.dims[r]);
        printf("  %-48s %-5s [%s]  %llu bytes\n", t.name, t.dtype, shape, (unsigned long long)t.nbytes);
        total += t.nbytes;
        if (t.dtype_id < N_DTYPES) by_dtype[t.dtype_id] += t.nbytes, count[t.dtype_id]++, names[t.dtype_id] = t.dtype;
    }
    printf("total tensor bytes: %llu (%.2f MiB)\n", (unsigned long long)total, (double)total / (1 << 20));
    for (uint32_t d = 0; d < N_DTYPES; d++)
        if (count[d])
            printf("  %-5s %u tensors, %llu bytes (%.2f MiB)\n", names[d], count[d], (unsigned long long)by_dtype[d],
                   (double)by_dtype[d] / (1 << 20));
}

int cmd_info(int argc, char **argv)
{
    const char *path = NULL;
    int no_verify = 0, check = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: txlm info -m MODEL.txlm [--no-verify] [--check]\n\nPrints the hyper-parameters, the vocabulary summary "
                   "and every tensor (name, dtype, shape, bytes).\n--no-verify skips the per-tensor checksums.\n"
                   "--check also reads every value and reports the tensors holding NaN or infinity (count, first\n"
                   "element; for q8_0 and q4_0 the elements of blocks whose scale is not finite); exit 1 if any.\n");
            return 0;
        } else if (!strcmp(argv[i], "--no-verify")) {
            no_verify = 1;
        } else if (!strcmp(argv[i], "--check")) {
            check = 1;
        } else {
            static const char *const flags[] = {"-m", "--model", NULL};
            const char *f = argv[i], *v = cli_option_value(argc, argv, &i, "info", flags);
            if (!v || (strcmp(f, "-m") && strcmp(f, "--model") ? cli_error("info: unknown option \"%s\" (see txlm info --help)", f)
                                                                : cli_set_once(&path, v, f)))
                return 1;
        }
    }
    if (!path) return cli_error("info: -m MODEL is required");
    if (cli_stdout_not_input("the model", path, NULL)) return 1;
    txlm_model_file *f;
    if (txlm_model_file_open(path, no_verify, &f)) return cli_error("%s", txlm_last_error());
    txlm_model_file_info info;
    txlm_model_file_get_info(f, &info);
    printf("%s: txlm format 1.%u, %llu bytes\n", path, info.version_minor, (unsigned long long)info.size);
    print_hparams(&info);
    printf("vocabulary: %u symbols, tokenizer %s%s%s%s, eos %d, unk %d\n", info.vocab_size, info.tokenizer,
           info.lower_case ? ", lower-case" : "", info.wt103 ? ", wt103" : "",
           info.line_start_eos ? ", eos also opens every line" : "", info.eos_id, info.unk_id);
    print_tensors(f, info.n_tensors);
    int rc = check ? check_values(f, info.n_tensors) : 0;
    txlm_model_file_close(f);
    return rc;
}
