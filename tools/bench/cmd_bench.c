/* txlm bench: how fast a model runs on this device, in the units users
 * care about: evaluation tokens/s (segments with memory, the paper's
 * protocol), generation tokens/s (one token per step, sampling included),
 * the time from the model file to the first token, and Transformer-XL
 * evaluation against "vanilla" evaluation (a window recomputed for every
 * predicted token) by attention length. Medians over repetitions; bench/
 * runs the same workloads in PyTorch for comparison (docs/performance.md). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "bench_batch.h"
#include "cli_batch.h"
#include "cli.h"
#include "cli_files.h"

static void usage(void)
{
    printf("usage: txlm bench -m MODEL [--mem-len M] [--tgt-len L] [--tokens N] [--gen-tokens G] [-r R]\n"
           "                  [-o text|md|csv|json] [--workloads load,eval,gen,vanilla] [--attn-lens 128,320,640,1600]\n"
           "                  [--vanilla-tokens V] [--ids FILE] [--seed S] [--no-verify] [--batch 1,2,4,... [--memory-budget MIB]]\n"
           "                  [--submit-dispatches N]\n\n"
           "Times, on the device txlm uses (-r R repetitions, also --reps R, default 3: the median and the mean\n"
           "+/- standard deviation of each, the mean alone for -r 1; -o picks a table (text, default), a Markdown\n"
           "table (md), CSV rows naming the model and the device (csv) or JSON (json, also --json); -m once: a\n"
           "run times one model):\n"
           "  load     model file to the first sampled token (after the device is opened; the opening is\n"
           "           reported on its own)\n"
           "  eval     scoring N tokens (default 512) in segments of L (default: the model's tgt_len), after\n"
           "           the memory of M rows (default: the model's mem_len) has filled up\n"
           "  gen      G tokens (default N) generated one at a time (hierarchical sampling at temperature 1, then the\n"
           "           token fed back) after a prompt that fills the memory and one untimed token\n"
           "  vanilla  per attention length A: Transformer-XL evaluation (memory A, segments of L) against\n"
           "           vanilla evaluation (for each of V predicted tokens, default 2, a fresh window of A\n"
           "           tokens through an empty session, chunks of <= 512); prints the speedup\n"
           "Tokens come from --ids (little-endian int32; \"-\": standard input) or, by default, a seeded log-uniform draw\n"
           "(frequent ids small, as in a frequency-sorted vocabulary). Default workloads: load,eval,gen.\n\n"
           "--batch 1,2,4,8,16,32: instead, per batch size B, B streams (each its own session and memory)\n"
           "fed together: eval and gen tokens/s of all streams, the ratio to batch 1, the time of one step\n"
           "(a segment, or a token, of every stream: mean, p50, p90) and the device memory of the batch's plan\n"
           "(per stream: memory ring and scratch; shared by the batch). A size whose plan does not fit what\n"
           "the device has free is reported as not fitting, and nothing of it is allocated.\n"
           "--workloads eval or gen picks one. --memory-budget MIB caps the device memory txlm may use.\n"
           "--submit-dispatches N: instead, eval and gen on a context that submits a segment whole and on one that\n"
           "submits at most N dispatches at a time (txlm_context_options.max_submit_dispatches), repetitions\n"
           "alternating, and the bounded one's rates over the whole one's.\n");
}

static int parse_workloads(const char *v, unsigned *out)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"load", W_LOAD}, {"eval", W_EVAL}, {"gen", W_GEN}, {"vanilla", W_VANILLA}};
    *out = 0;
    for (const char *p = v; *p;) {
        size_t len = strcspn(p, ",");
        unsigned bit = 0;
        for (size_t i = 0; i < sizeof names / sizeof *names; i++)
            if (strlen(names[i].name) == len && !strncmp(p, names[i].name, len)) bit = names[i].bit;
        if (!bit) return cli_error("--workloads: unknown workload \"%.*s\" (load, eval, gen, vanilla)", (int)len, p);
        *out |= bit;
        p += len + (p[len] == ',');
    }
    return *out ? 0 : cli_error("--workloads: empty list");
}

static int read_ids(const char *path, bench_opts *o)
{
    size_t size = 0;
    char *d = cli_read_file(path, &size); /* "-": standard input, read to its end */
    if (!d) return 1;
    if (size == 0 || size % 4 || size / 4 > UINT32_MAX) {
        free(d);
        return cli_error("%s: %zu bytes, expected a non-empty list of int32", path, size);
    }
    o->n_ids = (uint32_t)(size / 4);
    o->ids = malloc(size);
    if (o->ids) memcpy(o->ids, d, size);
    free(d);
    return o->ids ? 0 : cli_error("%s: out of memory", path);
}

/* A log-uniform draw over [0, n): id = floor(n^u) - 1, so small ids are
 * frequent, like word frequencies in a sorted vocabulary. */
static int make_ids(bench_opts *o, uint32_t n_token)
{
    o->n_ids = 1u << 16;
    if (!(o->ids = malloc(o->n_ids * sizeof *o->ids))) return cli_error("out of memory");
    uint64_t x = o->seed;
    for (uint32_t i = 0; i < o->n_ids; i++) {
        uint64_t z = (x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        double u = (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
        uint32_t id = (uint32_t)floor(pow((double)n_token, u)) - 1;
        o->ids[i] = (int32_t)(id < n_token ? id : n_token - 1);
    }
    return 0;
}

/* The token stream from position at: copies n ids (wrapping around). */
static const int32_t *ids_at(const bench_opts *o, uint64_t at, uint32_t n, int32_t *buf)
{
    for (uint32_t i = 0; i < n; i++) buf[i] = o->ids[(at + i) % o->n_ids];
    return buf;
}

static txlm_status open_session(txlm_model *m, uint32_t mem_len, uint32_t max_seg, int same_length, txlm_session **s)
{
    txlm_session_options so = {.mem_len = mem_len, .same_length = same_length, .max_segment = max_seg};
    return txlm_session_create(m, &so, s);
}

/* Scores segments of len tokens from the stream until n tokens are done. */
static txlm_status score_tokens(txlm_session *s, const bench_opts *o, uint64_t *at, uint32_t n, uint32_t len, int32_t *buf,
                                float *lp)
{
    for (uint32_t done = 0; done < n;) {
        uint32_t k = n - done < len ? n - done : len;
        ids_at(o, *at, k + 1, buf);
        txlm_status st = txlm_session_score(s, buf, buf + 1, k, lp);
        if (st) return st;
        done += k, *at += k;
    }
    return TXLM_OK;
}

static int run_load(txlm_context *ctx, const bench_opts *o, bench_result *r)
{
    for (uint32_t rep = 0; rep < o->reps; rep++) {
        txlm_model *m = NULL;
        txlm_session *s = NULL;
        int32_t tok = 0;
        double t0 = cli_now();
        txlm_status st = txlm_model_load(ctx, o->model, &o->mo, &m);
        if (!st) st = open_session(m, o->mem_len, o->tgt_len, -1, &s);
        if (!st) st = txlm_session_feed_rows(s, &tok, 1, 1, NULL);
        if (!st) st = txlm_session_sample(s, NULL, &tok);
        double t1 = cli_now();
        txlm_session_free(s);
        txlm_model_free(m);
        if (st) return cli_lib_error(st, "load to first token");
        r->load_s.v[r->load_s.n++] = t1 - t0;
    }
    return 0;
}

int bench_run_eval(txlm_model *m, const bench_opts *o, bench_result *r, int32_t *buf, float *lp)
{
    txlm_session *s = NULL;
    txlm_status st = open_session(m, o->mem_len, o->tgt_len, -1, &s);
    uint64_t at = 0;
    /* fill the memory first: the steady state is what a long text sees */
    if (!st) st = score_tokens(s, o, &at, o->mem_len ? o->mem_len : o->tgt_len, o->tgt_len, buf, lp);
    for (uint32_t rep = 0; !st && rep < o->reps; rep++) {
        double t0 = cli_now();
        st = score_tokens(s, o, &at, o->tokens, o->tgt_len, buf, lp);
        r->eval_tps.v[r->eval_tps.n++] = o->tokens / (cli_now() - t0);
    }
    txlm_session_free(s);
    r->eval_tokens = o->tokens;
    return st ? cli_lib_error(st, "evaluation") : 0;
}

int bench_run_gen(txlm_model *m, const bench_opts *o, bench_result *r, int32_t *buf)
{
    txlm_session *s = NULL;
    txlm_status st = open_session(m, o->mem_len, o->tgt_len, -1, &s);
    uint32_t prompt = o->mem_len ? o->mem_len : 1;
    for (uint32_t done = 0; !st && done < prompt;) {
        uint32_t k = prompt - done < o->tgt_len ? prompt - done : o->tgt_len;
        st = txlm_session_feed_rows(s, ids_at(o, done, k, buf), k, k, NULL);
        done += k;
    }
    if (s) txlm_session_set_seed(s, o->seed);
    int32_t tok = 0;
    /* one untimed token: the device compiles the one-row kernels at their
     * first use (the load workload counts that); the rate is the steady one */
    if (!st) st = txlm_session_sample(s, NULL, &tok);
    if (!st) st = txlm_session_feed_rows(s, &tok, 1, 1, NULL);
    for (uint32_t rep = 0; !st && rep < o->reps; rep++) {
        double t0 = cli_now();
        for (uint32_t i = 0; !st && i < o->gen_tokens; i++) {
            st = txlm_session_sample(s, NULL, &tok);
            if (!st) st = txlm_session_feed_rows(s, &tok, 1, 1, NULL);
        }
        r->gen_tps.v[r->gen_tps.n++] = o->gen_tokens / (cli_now() - t0);
    }
    txlm_session_free(s);
    r->gen_tokens = o->gen_tokens;
    return st ? cli_lib_error(st, "generation") : 0;
}

/* One attention length A: Transformer-XL (memory A) against vanilla (a
 * fresh window of A tokens per predicted token), milliseconds per token.
 * The vanilla window goes through an empty session in chunks whose rows
 * all stay in memory: the same arithmetic as one pass over the window. */
static int run_vanilla_len(txlm_model *m, const bench_opts *o, uint32_t A, double *xl_ms, double *van_ms, int32_t *buf,
                           float *lp)
{
    txlm_session *s = NULL;
    uint64_t at = 0;
    txlm_status st = open_session(m, A, o->tgt_len, -1, &s);
    if (!st) st = score_tokens(s, o, &at, A, o->tgt_len, buf, lp);
    uint32_t xl_tokens = o->tgt_len * 2;
    double t0 = cli_now();
    if (!st) st = score_tokens(s, o, &at, xl_tokens, o->tgt_len, buf, lp);
    *xl_ms = (cli_now() - t0) * 1e3 / xl_tokens;
    txlm_session_free(s);
    s = NULL;

    uint32_t chunk = A < 512 ? A : 512;
    if (!st) st = open_session(m, A, chunk, 0, &s);
    t0 = cli_now();
    for (uint32_t t = 0; !st && t < o->vanilla_tokens; t++) {
        txlm_session_reset(s);
        for (uint32_t done = 0; !st && done < A;) {
            uint32_t k = A - done < chunk ? A - done : chunk;
            int last = done + k == A;
            st = txlm_session_feed_rows(s, ids_at(o, at + t + done, k, buf), k, last ? k - 1 : k, last ? lp : NULL);
            done += k;
        }
    }
    *van_ms = (cli_now() - t0) * 1e3 / o->vanilla_tokens;
    txlm_session_free(s);
    return st ? cli_lib_error(st, "vanilla comparison") : 0;
}

static const char *const bench_flags[] = {"-m", "--model", "--tgt-len", "--tokens", "--gen-tokens", "--reps", "-r", "-o", "--output",
                                          "--vanilla-tokens", "--workloads", "--attn-lens", "--ids", "--seed", "--batch",
                                          "--memory-budget", "--submit-dispatches", NULL};

static int parse_format(const char *v, int *out)
{
    static const char *const names[] = {"text", "md", "csv", "json"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(v, names[i])) return *out = i, 0;
    return cli_error("-o %s: give text, md, csv or json", v);
}

/* --batch's sizes: 1..CLI_MAX_STREAMS each, at most MAX_BATCHES of them;
 * with it the workloads are eval and gen (the default) or one of them. */
static int parse_batches(const char *v, bench_opts *o, int workloads_given)
{
    if (cli_parse_list(v, &o->batches, &o->n_batches, "--batch")) return 1;
    if (o->n_batches > MAX_BATCHES) return cli_error("--batch: at most %d batch sizes", MAX_BATCHES);
    for (uint32_t i = 0; i < o->n_batches; i++)
        if (o->batches[i] == 0 || (uint32_t)o->batches[i] > CLI_MAX_STREAMS)
            return cli_error("--batch: %d streams, give 1..%u", o->batches[i], CLI_MAX_STREAMS);
    for (uint32_t i = 0; i < o->n_batches; i++) /* a second row of one size would be timed against itself */
        for (uint32_t j = 0; j < i; j++)
            if (o->batches[i] == o->batches[j]) return cli_error("--batch: %d given twice", o->batches[i]);
    if (!workloads_given) o->workloads = W_EVAL | W_GEN;
    if (o->workloads & (W_LOAD | W_VANILLA)) return cli_error("--batch times eval and gen: leave load and vanilla out of --workloads");
    return 0;
}

static int parse_budget(const char *v, const char *a, bench_opts *o)
{
    uint32_t mib;
    if (cli_parse_u32(v, a, &mib)) return 1;
    if (!mib) return cli_error("%s: give a positive number of MiB", a);
    o->memory_budget = (uint64_t)mib << 20;
    return 0;
}

static int parse_args(int argc, char **argv, bench_opts *o, const char **ids_path, int *help)
{
    const char *lens = "128,320,640,1600", *batches = NULL;
    int workloads_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return *help = 1, 0;
        if (!strcmp(a, "--json")) { o->format = BENCH_JSON; continue; }
        if (!strcmp(a, "--no-verify")) { o->mo.no_verify = 1; continue; }
        if (!(v = cli_option_value(argc, argv, &i, "bench", bench_flags))) return 1;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
            if (o->model)
                return cli_error("bench: -m given twice (%s and %s): a run times one model; run bench once per model",
                                 o->model, v);
            o->model = v;
        } else if (!strcmp(a, "--mem-len")) { if (cli_parse_u32(v, a, &o->mem_len)) return 1; }
        else if (!strcmp(a, "--tgt-len")) { if (cli_parse_u32(v, a, &o->tgt_len)) return 1; }
        else if (!strcmp(a, "--tokens")) { if (cli_parse_u32(v, a, &o->tokens)) return 1; }
        else if (!strcmp(a, "--gen-tokens")) { if (cli_parse_u32(v, a, &o->gen_tokens)) return 1; }
        else if (!strcmp(a, "--reps") || !strcmp(a, "-r")) { if (cli_parse_u32(v, a, &o->reps)) return 1; }
        else if (!strcmp(a, "-o") || !strcmp(a, "--output")) { if (parse_format(v, &o->format)) return 1; }
        else if (!strcmp(a, "--vanilla-tokens")) { if (cli_parse_u32(v, a, &o->vanilla_tokens)) return 1; }
        else if (!strcmp(a, "--workloads")) { if (parse_workloads(v, &o->workloads)) return 1; workloads_given = 1; }
        else if (!strcmp(a, "--batch")) batches = v;
        else if (!strcmp(a, "--memory-budget")) { if (parse_budget(v, a, o)) return 1; }
        else if (!strcmp(a, "--submit-dispatches")) { if (cli_parse_u32(v, a, &o->submit_dispatches)) return 1; }
        else if (!strcmp(a, "--attn-lens")) lens = v;
        else if (!strcmp(a, "--ids")) *ids_path = v;
        else if (!strcmp(a, "--seed")) {
            char *end;
            errno = 0;
            o->seed = strtoull(v, &end, 10);
            if (!*v || *end || errno) return cli_error("--seed: \"%s\" is not a number", v);
        } else return cli_error("bench: unknown option \"%s\" (see txlm bench --help)", a);
    }
    if (!o->model) return cli_error("bench: -m MODEL is required");
    if (batches && parse_batches(batches, o, workloads_given)) return 1;
    if (o->submit_dispatches && !workloads_given) o->workloads = W_EVAL | W_GEN;
    if (o->submit_dispatches && (batches || (o->workloads & (W_LOAD | W_VANILLA))))
        return cli_error("--submit-dispatches times eval and gen: leave --batch, load and vanilla out");
    if (o->reps == 0 || o->reps > MAX_REPS) return cli_error("--reps must be 1..%d", MAX_REPS);
    if (!o->gen_tokens) o->gen_tokens = o->tokens;
    if (o->tokens == 0 || o->vanilla_tokens == 0) return cli_error("--tokens and --vanilla-tokens must be positive");
    if ((o->workloads & W_VANILLA) && cli_parse_list(lens, &o->lens, &o->n_lens, "--attn-lens")) return 1;
    if (o->n_lens > MAX_LENS) return cli_error("--attn-lens: at most %d lengths", MAX_LENS);
    for (uint32_t i = 0; i < o->n_lens; i++)
        if (o->lens[i] == 0) return cli_error("--attn-lens: lengths must be positive");
    return 0;
}

/* --batch: the table of batch sizes instead of the workloads (bench_batch.c). */
static int run_batches(txlm_model *m, const bench_opts *o, const txlm_device_info *dev)
{
    batch_result *br = calloc(1, sizeof *br);
    int rc = br ? bench_batch_run(m, o, br) : cli_error("out of memory");
    if (!rc) bench_batch_report(o, dev, br);
    free(br);
    return rc;
}

/* The model's own segment and memory lengths where none were given, and
 * the token ids (made, or read with --ids) checked against its vocabulary. */
static int fit_to_model(bench_opts *o, const txlm_model_params *p)
{
    if (!o->tgt_len) o->tgt_len = p->tgt_len ? p->tgt_len : 128;
    if (!o->mem_len) o->mem_len = p->mem_len;
    if (!o->ids && make_ids(o, p->n_token)) return 1;
    for (uint32_t i = 0; i < o->n_ids; i++)
        if (o->ids[i] < 0 || (uint32_t)o->ids[i] >= p->n_token)
            return cli_error("--ids: id %d at %u is outside the vocabulary [0, %u)", o->ids[i], i, p->n_token);
    return 0;
}

/* The workloads asked for, each one's figures into r. */
static int run_workloads(txlm_context *ctx, txlm_model *m, const bench_opts *o, bench_result *r, int32_t *buf, float *lp)
{
    if ((o->workloads & W_EVAL) && bench_run_eval(m, o, r, buf, lp)) return 1;
    if ((o->workloads & W_GEN) && bench_run_gen(m, o, r, buf)) return 1;
    r->step_bytes = txlm_model_step_bytes(m);
    txlm_status st;
    if ((o->workloads & W_GEN) && (st = txlm_context_copy_rate(ctx, &r->copy_rate)))
        return cli_lib_error(st, "measuring the device's copy rate");
    for (uint32_t i = 0; (o->workloads & W_VANILLA) && i < o->n_lens; i++)
        if (run_vanilla_len(m, o, (uint32_t)o->lens[i], &r->xl_ms[i], &r->vanilla_ms[i], buf, lp)) return 1;
    return 0;
}

int cmd_bench(int argc, char **argv)
{
    bench_opts o = {.reps = 3, .tokens = 512, .vanilla_tokens = 2, .workloads = W_LOAD | W_EVAL | W_GEN, .seed = 1};
    const char *ids_path = NULL;
    int help = 0;
    if (parse_args(argc, argv, &o, &ids_path, &help)) return free(o.lens), free(o.batches), 1;
    if (help) return usage(), 0;

    int rc = 1;
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    int32_t *buf = NULL;
    float *lp = NULL;
    bench_result r = {0};
    txlm_device_info dev;
    /* the files first: a bad one fails before the device starts */
    if (cli_check_input(o.model, "loading the model") ||
        cli_stdout_not_input("the model", o.model, "--ids", ids_path, NULL) || (ids_path && read_ids(ids_path, &o)))
        goto done;
    double t0 = cli_now();
    txlm_context_options co = {.memory_budget = o.memory_budget};
    txlm_status st = txlm_context_create(&co, &ctx);
    if (st) { rc = cli_lib_error(st, "opening the device"); goto done; }
    r.context_s = cli_now() - t0;
    if ((st = txlm_context_device(ctx, &dev))) { rc = cli_lib_error(st, "querying the device"); goto done; }
    if ((o.workloads & W_LOAD) && run_load(ctx, &o, &r)) goto done;
    if ((st = txlm_model_load(ctx, o.model, &o.mo, &m))) { rc = cli_lib_error(st, "loading the model"); goto done; }
    txlm_model_params p;
    txlm_model_get_params(m, &p);
    if (fit_to_model(&o, &p)) goto done;
    uint32_t longest = o.tgt_len > 512 ? o.tgt_len : 512;
    buf = malloc(((size_t)longest + 1) * sizeof *buf);
    lp = malloc((size_t)(p.n_token > longest ? p.n_token : longest) * sizeof *lp);
    if (!buf || !lp) { rc = cli_error("out of memory"); goto done; }
    if (o.n_batches) {
        if (run_batches(m, &o, &dev)) goto done;
    } else if (o.submit_dispatches) {
        if (bench_split(&o, &dev, m, buf, lp)) goto done;
    } else {
        if (run_workloads(ctx, m, &o, &r, buf, lp)) goto done;
        bench_report(&o, &dev, &r);
    }
    rc = 0;
    if (txlm_context_validation_messages(ctx))
        rc = cli_error("%llu Vulkan validation messages", (unsigned long long)txlm_context_validation_messages(ctx));
done:
    free(buf);
    free(lp);
    free(o.ids);
    free(o.lens);
    free(o.batches);
    txlm_model_free(m);
    txlm_context_destroy(ctx);
    return rc;
}
