/* NaN and infinity in weights. txlm-pack reports them per tensor and
 * refuses them unless --allow-nonfinite; `txlm info --check` reports them;
 * at run time a non-finite log-probability or sampling distribution is an
 * error (TXLM_ERR_NONFINITE) naming the segment and position, never output.
 * Models are crafted from the golden adaptive_word case through the .txlm
 * writer, so every checksum is valid.
 * usage: test_faults_nonfinite TXLM TXLM_PACK */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/run_tool.h"
#include "checkpoint.h"
#include "faults_common.h"
#include "nonfinite.h"

static const char *txlm_exe, *pack_exe, *dir;
static const char *emb0 = "word_emb.emb_layers.0.weight"; /* [200, 64]: the shortlist's embeddings */

static char *path_in(const char *name)
{
    static char buf[8][4096];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, 4096, "%s/%s", dir, name);
    return p;
}

/* Rewrites `in` as `out` with n bytes at byte `at` of tensor `name` replaced. */
static int craft(const char *in, const char *out, const char *name, uint64_t at, const void *bytes, size_t n)
{
    txlm_file *f = NULL;
    txlm_writer *w = NULL;
    txlm_err err = {0, ""};
    uint8_t *copy = NULL;
    int rc = txlm_file_open(in, 0, &f, &err);
    if (!rc) rc = txlm_writer_open(out, &w, &err);
    if (!rc) rc = txlm_writer_set_hparams(w, txlm_file_hparams(f), &err);
    if (!rc) rc = txlm_writer_set_vocab(w, txlm_file_vocab(f), &err);
    for (uint32_t i = 0; !rc && i < txlm_file_tensor_count(f); i++) {
        const txlm_tensor_info *t = txlm_file_tensor(f, i);
        const void *data = txlm_file_data(f, t);
        if (!strcmp(t->name, name)) {
            copy = malloc(t->nbytes);
            memcpy(copy, data, t->nbytes);
            memcpy(copy + at, bytes, n);
        }
        rc = txlm_writer_add_tensor(w, t->name, t->dtype, t->rank, t->dims, strcmp(t->name, name) ? data : copy, t->nbytes, &err);
    }
    if (!rc) rc = txlm_writer_finish(w, &err);
    else txlm_writer_abort(w);
    if (rc) fprintf(stderr, "crafting %s: %s\n", out, err.msg);
    txlm_file_close(f);
    free(copy);
    return rc;
}

/* Runs a tool; *out and *err are freed by the caller. */
static int run(const char *const *argv, char **out, char **err)
{
    int st = run_tool(argv, out, err);
    if (st < 0 || !*out || !*err) fprintf(stderr, "could not run %s\n", argv[0]);
    return st;
}

static void scans(void)
{
    float f[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    f[6] = INFINITY;
    f[8] = NAN;
    txlm_nonfinite nf;
    CHECK(txlm_first_nonfinite(f, 9) == 6 && txlm_first_nonfinite(f, 6) == 6, "first non-finite f32");
    CHECK(txlm_nonfinite_scan(TXLM_DT_F32, (const uint8_t *)f + 0, 9, &nf) == 0 && nf.count == 2 && nf.first == 6 &&
              isinf(nf.value), "f32 scan: %llu at %llu", (unsigned long long)nf.count, (unsigned long long)nf.first);
    /* f16: 0x7c00 inf, 0xfe00 NaN, 0x7bff the largest finite; bf16: 0xff80 -inf, 0x7f7f finite */
    uint16_t h[5] = {0x3c00, 0x7bff, 0xfe00, 0x0001, 0x7c00}, b[3] = {0x7f7f, 0xff80, 0x3f80};
    CHECK(txlm_nonfinite_scan(TXLM_DT_F16, h, 5, &nf) == 0 && nf.count == 2 && nf.first == 2 && isnan(nf.value), "f16 scan");
    CHECK(txlm_nonfinite_scan(TXLM_DT_BF16, b, 3, &nf) == 0 && nf.count == 1 && nf.first == 1 && nf.value < 0, "bf16 scan");
    /* q8_0: 64 values, then two f16 scales; the second block's is infinite */
    uint8_t q[64 + 4] = {0};
    q[66] = 0x00, q[67] = 0x7c;
    CHECK(txlm_nonfinite_scan(TXLM_DT_Q8_0, q, 64, &nf) == 0 && nf.count == 32 && nf.first == 32, "q8_0 scan");
    CHECK(txlm_nonfinite_scan(99, q, 64, &nf) == TXLM_ERR_UNSUPPORTED, "unknown dtype");
}

/* A checkpoint folder whose safetensors hold NaN (in emb0, element 451)
 * and -inf (crit.out_layers.1.bias, element 0); with big, finite values
 * instead that f16 cannot hold: 1e7 at element 100 of layer 0's
 * CoreNet.0 (its q8_0 block scale, 1e7 / 127, is past f16's 65504 too). */
static int bad_folder(const char *golden, const char *folder, int big)
{
    char src[4096], dst[4096];
    static const char *const copied[] = {"config.json", "vocab.txt"};
    for (int i = 0; i < 2; i++) {
        snprintf(src, sizeof src, "%s/adaptive_word/%s", golden, copied[i]);
        snprintf(dst, sizeof dst, "%s/%s", folder, copied[i]);
        size_t len;
        uint8_t *b = fmt_read_all(src, &len);
        if (!b || fmt_write_all(dst, b, len)) return 1;
        free(b);
    }
    snprintf(src, sizeof src, "%s/adaptive_word/model.safetensors", golden);
    size_t len;
    uint8_t *b = fmt_read_all(src, &len);
    txlm_checkpoint *ck = NULL;
    txlm_err err = {0, ""};
    if (!b || txlm_safetensors_open_memory(b, len, &ck, &err)) return 1;
    const txlm_src_tensor *e = txlm_checkpoint_find(ck, "transformer.word_emb.emb_layers.0.weight");
    const txlm_src_tensor *o = txlm_checkpoint_find(ck, "crit.out_layers.1.bias");
    const txlm_src_tensor *f = txlm_checkpoint_find(ck, "transformer.layers.0.pos_ff.CoreNet.0.weight");
    float nan = NAN, ninf = -INFINITY, huge = 1e7f;
    if (!e || !o || !f) return 1;
    if (big) {
        memcpy(b + ((const uint8_t *)f->data - b) + 4 * 100, &huge, 4);
    } else {
        memcpy(b + ((const uint8_t *)e->data - b) + 4 * 451, &nan, 4);
        memcpy(b + ((const uint8_t *)o->data - b), &ninf, 4);
    }
    txlm_checkpoint_free(ck);
    snprintf(dst, sizeof dst, "%s/model.safetensors", folder);
    int rc = fmt_write_all(dst, b, len);
    free(b);
    return rc;
}

/* Finite weights that the conversion would make infinite: refused for
 * f16 and q8_0, naming the tensor and the first element; f32 keeps them;
 * --allow-nonfinite lets them through. */
static void conversion(const char *golden)
{
    char folder[4200], out[4200], cmd[4300], *o, *e; /* not path_in's ring: the callers after keep theirs */
    snprintf(folder, sizeof folder, "%s/big", dir);
    snprintf(out, sizeof out, "%s/big.txlm", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", folder);
    if (system(cmd) != 0 || bad_folder(golden, folder, 1)) {
        CHECK(0, "could not make the checkpoint folder");
        return;
    }
    static const char *const dtypes[] = {"f16", "q8_0", "q4_0"};
    static const char *const first[] = {"element 100 (magnitude 1e+07", "element 96 (magnitude 1e+07",
                                        "element 96 (magnitude 1e+07"};
    for (int i = 0; i < 3; i++) {
        const char *refuse[] = {pack_exe, folder, "-o", out, "--dtype", dtypes[i], NULL};
        int st = run(refuse, &o, &e);
        CHECK(st == 1 && !fmt_exists(out) && strstr(e, "tensor 'layers.0.pos_ff.CoreNet.0.weight'") &&
                  strstr(e, "become infinite stored as") && strstr(e, first[i]) && strstr(e, "--allow-nonfinite"),
              "pack --dtype %s of a finite 1e7: exit %d: %s", dtypes[i], st, e);
        free(o), free(e);
    }
    const char *f32[] = {pack_exe, folder, "-o", out, NULL};
    int st = run(f32, &o, &e);
    CHECK(st == 0 && fmt_exists(out), "pack f32 of a finite 1e7: exit %d: %s", st, e);
    free(o), free(e);
    unlink(out);
    const char *allow[] = {pack_exe, folder, "-o", out, "--dtype", "q8_0", "--allow-nonfinite", NULL};
    st = run(allow, &o, &e);
    CHECK(st == 0 && fmt_exists(out), "pack q8_0 --allow-nonfinite of a finite 1e7: exit %d: %s", st, e);
    free(o), free(e);
}

static void packing(const char *golden)
{
    char *folder = path_in("ckpt"), *out = path_in("packed.txlm"), *o, *e;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", folder);
    if (system(cmd) != 0 || bad_folder(golden, folder, 0)) {
        CHECK(0, "could not make the checkpoint folder");
        return;
    }
    const char *refuse[] = {pack_exe, folder, "-o", out, NULL};
    int st = run(refuse, &o, &e);
    CHECK(st == 1 && !fmt_exists(out), "pack with NaN: exit %d", st);
    /* one line: how many, the first as its report line says it */
    CHECK(strstr(e, "2 tensors hold NaN or infinite values (the first: tensor 'transformer.word_emb.emb_layers.0.weight': "
                    "1 non-finite value of 12800, the first at element 451 (nan)); --allow-nonfinite") &&
              strchr(e, '\n') && !strchr(e, '\n')[1],
          "pack report: %s", e);
    free(o), free(e);
    /* --verbose: every such tensor, then the error */
    const char *verbose[] = {pack_exe, folder, "-o", out, "--verbose", NULL};
    st = run(verbose, &o, &e);
    CHECK(st == 1 && !fmt_exists(out) &&
              strstr(e, "tensor 'transformer.word_emb.emb_layers.0.weight': 1 non-finite value of 12800, the first at element 451 (nan)") &&
              strstr(e, "tensor 'crit.out_layers.1.bias': 1 non-finite value of 300, the first at element 0 (-inf)") &&
              strstr(e, "2 tensors hold NaN or infinite values"),
          "pack --verbose report: exit %d: %s", st, e);
    free(o), free(e);
    const char *allow[] = {pack_exe, folder, "-o", out, "--allow-nonfinite", NULL};
    st = run(allow, &o, &e);
    CHECK(st == 0 && fmt_exists(out) && strstr(e, "element 451 (nan)") && strstr(e, "element 0 (-inf)"),
          "pack --allow-nonfinite: exit %d: %s", st, e);
    free(o), free(e);

    const char *check[] = {txlm_exe, "info", "-m", out, "--check", NULL};
    st = run(check, &o, &e);
    CHECK(st == 1 && strstr(o, "non-finite: word_emb.emb_layers.0.weight: 1 of 12800 values, the first at element 451 (nan)") &&
              strstr(o, "non-finite: crit.out_layers.1.bias: 1 of 300 values, the first at element 0 (-inf)") &&
              strstr(o, "check: 2 of "),
          "info --check: exit %d: %s", st, o);
    free(o), free(e);
}

/* info --check on a clean model and on a q8_0 model with one infinite block scale. */
static void checking(const char *base)
{
    char *o, *e, *q8 = path_in("q8.txlm"), *q8bad = path_in("q8bad.txlm");
    const char *clean[] = {txlm_exe, "info", "-m", base, "--check", NULL};
    int st = run(clean, &o, &e);
    CHECK(st == 0 && strstr(o, "check: no NaN or infinite values in 51 tensors"), "clean --check: exit %d: %s", st, o);
    free(o), free(e);
    if (flt_pack("adaptive_word", TXLM_DT_Q8_0, q8)) {
        CHECK(0, "q8_0 pack");
        return;
    }
    /* layers.0.dec_attn.qkv_net.weight [192, 64] in q8_0: 12288 values, then the scales; block 5's */
    const uint8_t inf16[2] = {0x00, 0x7c};
    if (craft(q8, q8bad, "layers.0.dec_attn.qkv_net.weight", 12288 + 2 * 5, inf16, 2)) {
        CHECK(0, "q8_0 craft");
        return;
    }
    const char *bad[] = {txlm_exe, "info", "-m", q8bad, "--check", NULL};
    st = run(bad, &o, &e);
    CHECK(st == 1 && strstr(o, "non-finite: layers.0.dec_attn.qkv_net.weight: 32 of 12288 values, the first at element 160 (inf)"),
          "q8_0 --check: exit %d: %s", st, o);
    free(o), free(e);
}

static txlm_status score(txlm_session *s, const int32_t *toks, uint32_t n, float *lp)
{
    return txlm_session_score(s, toks, toks + 1, n, lp);
}

/* The model at path and a session of it; 1 after a failed CHECK. */
static int open_model(txlm_context *ctx, const char *path, txlm_model **m, txlm_session **s)
{
    *m = NULL;
    *s = NULL;
    if (!txlm_model_load(ctx, path, NULL, m) && !txlm_session_create(*m, NULL, s)) return 0;
    CHECK(0, "%s: %s", path, txlm_last_error());
    txlm_model_free(*m);
    return 1;
}

/* NaN in the tied shortlist table: every distribution is NaN from the first position on. */
static void nan_everywhere(txlm_context *ctx, const char *path)
{
    txlm_model *m;
    txlm_session *s;
    if (open_model(ctx, path, &m, &s)) return;
    int32_t toks[9] = {2, 3, 4, 5, 6, 8, 9, 10, 11};
    float lp[8], *rows = malloc(8 * 1000 * sizeof *rows);
    txlm_status st = score(s, toks, 8, lp);
    CHECK_STATUS(st, TXLM_ERR_NONFINITE, "segment 0, position 0: the log-probability of token 3 is nan");
    CHECK(txlm_session_memory_len(s) == 0, "the memory that produced NaN is forgotten");
    st = txlm_session_feed(s, toks, 8, rows);
    CHECK_STATUS(st, TXLM_ERR_NONFINITE, "segment 1, position 0: the log-probability of token 0 is nan");
    txlm_sampling how[] = {{1.0f, 0, 0}, {0.0f, 0, 0}, {0.7f, 0, 0}, {1.0f, 5, 0}, {1.0f, 0, 0.9f}};
    for (size_t i = 0; i < sizeof how / sizeof *how; i++) {
        int32_t tok = -1;
        CHECK(txlm_session_feed(s, toks, 3, NULL) == TXLM_OK, "feed without output: %s", txlm_last_error());
        st = txlm_session_sample(s, &how[i], &tok);
        CHECK_STATUS(st, TXLM_ERR_NONFINITE, ", position 2: the log-probability of token 0 is nan");
        CHECK(tok == -1, "a token was drawn from NaN (temperature %g)", (double)how[i].temperature);
    }
    CHECK(!strcmp(txlm_status_string(TXLM_ERR_NONFINITE), "non-finite value"), "status string");
    free(rows);
    txlm_session_free(s);
    txlm_model_free(m);
}

/* NaN in the last tail cluster's bias (tokens 500..999): scoring computes a
 * tail only for the rows whose targets fall in it, so exactly those rows
 * are non-finite, whatever the kernels: the error names the first. */
static void nan_in_tail(txlm_context *ctx, const char *path)
{
    txlm_model *m;
    txlm_session *s;
    if (open_model(ctx, path, &m, &s)) return;
    int32_t toks[17] = {2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 7, 612, 17, 18};
    float lp[8], *rows = malloc(8 * 1000 * sizeof *rows);
    CHECK(score(s, toks, 8, lp) == TXLM_OK, "segment 0: %s", txlm_last_error());
    int finite = 1;
    for (int i = 0; i < 8; i++) finite &= isfinite(lp[i]) && lp[i] < 0;
    CHECK(finite, "segment 0's log-probabilities");
    txlm_status st = score(s, toks + 8, 8, lp);
    CHECK_STATUS(st, TXLM_ERR_NONFINITE, "segment 1, position 5: the log-probability of token 612 is nan");
    st = txlm_session_feed(s, toks, 8, rows);
    CHECK_STATUS(st, TXLM_ERR_NONFINITE, "segment 2, position 0: the log-probability of token 500 is nan");
    int32_t tok = -1;
    txlm_sampling greedy = {0.0f, 0, 0};
    CHECK(txlm_session_feed(s, toks, 4, NULL) == TXLM_OK, "feed: %s", txlm_last_error());
    st = txlm_session_sample(s, &greedy, &tok);
    CHECK_STATUS(st, TXLM_ERR_NONFINITE, "segment 3, position 3: the log-probability of token 500 is nan");
    free(rows);
    txlm_session_free(s);
    txlm_model_free(m);
}

/* The same model in a batch of three: only stream 1's targets fall in the
 * NaN cluster. The call fails naming stream 1; streams 0 and 2 get their
 * log-probabilities and keep their memory, stream 1's is forgotten. A
 * greedy batch draw needs every row's whole distribution, NaN in that
 * cluster for all: it fails naming the first stream, no token drawn. */
static void nan_in_batch(txlm_context *ctx, const char *path)
{
    txlm_model *m;
    txlm_session *s[3];
    if (open_model(ctx, path, &m, &s[0])) return;
    txlm_batch *b = NULL;
    int ok = !txlm_session_create(m, NULL, &s[1]) && !txlm_session_create(m, NULL, &s[2]) &&
             !txlm_batch_create(m, 3, NULL, &b);
    CHECK(ok, "batch: %s", txlm_last_error());
    if (!ok) return;
    int32_t toks[5] = {2, 3, 4, 5, 6}, bad[4] = {3, 612, 4, 5};
    float lp[3][4] = {{0}};
    txlm_stream_feed f[3];
    for (int i = 0; i < 3; i++)
        f[i] = (txlm_stream_feed){.session = s[i], .tokens = toks, .n = 4, .targets = i == 1 ? bad : toks + 1,
                                  .target_logprobs = lp[i]};
    txlm_status st = txlm_batch_feed(b, f, 3);
    CHECK_STATUS(st, TXLM_ERR_NONFINITE, "stream 1: segment 0, position 1: the log-probability of token 612 is nan");
    CHECK(txlm_batch_failed_stream(b) == 1, "the failed stream reported: %d", txlm_batch_failed_stream(b));
    CHECK(txlm_session_memory_len(s[0]) == 4 && txlm_session_memory_len(s[1]) == 0 && txlm_session_memory_len(s[2]) == 4,
          "memory after the failed batch: %u %u %u", txlm_session_memory_len(s[0]), txlm_session_memory_len(s[1]),
          txlm_session_memory_len(s[2]));
    CHECK(isfinite(lp[2][3]) && lp[2][3] < 0 && isfinite(lp[0][0]), "the other streams' log-probabilities");
    txlm_sampling greedy = {0.0f, 0, 0};
    int32_t t[3] = {-2, -2, -2};
    CHECK(txlm_session_feed(s[1], toks, 4, NULL) == TXLM_OK, "feed: %s", txlm_last_error());
    st = txlm_batch_sample(b, s, 3, &greedy, NULL, t);
    CHECK_STATUS(st, TXLM_ERR_NONFINITE, "stream 0: segment 0, position 3: the log-probability of token 500 is nan");
    CHECK(txlm_batch_failed_stream(b) == 0, "the failed draw's stream reported: %d", txlm_batch_failed_stream(b));
    CHECK(t[0] == -1 && t[1] == -1 && t[2] == -1, "tokens %d %d %d", t[0], t[1], t[2]);
    /* the whole distributions read through the batch: the same NaN, named the same way */
    float *rows = malloc((size_t)3 * txlm_vocab_size(m) * sizeof *rows);
    st = rows ? txlm_batch_next_logprobs(b, s, 3, rows) : TXLM_ERR_OUT_OF_MEMORY;
    CHECK_STATUS(st, TXLM_ERR_NONFINITE, "stream 0: segment 0, position 3: the log-probability of token 500 is nan");
    CHECK(txlm_batch_failed_stream(b) == 0, "the failed row's stream reported: %d", txlm_batch_failed_stream(b));
    free(rows);
    txlm_batch_free(b);
    for (int i = 0; i < 3; i++) txlm_session_free(s[i]);
    txlm_model_free(m);
}

/* Each command costs a device start-up (seconds on lavapipe): one case each;
 * the API cases above cover the sampling settings. */
static void commands(const char *nan_model, const char *tail)
{
    char *text = path_in("text.txt"), *lp = path_in("lp.f32"), *o, *e;
    const char *words = "w2 w3 w4 w5 w6 w8 w9 w10 w11 w12 w13 w14 w15 w612 w16 w17 w18 w19 w20 w21\n";
    fmt_write_all(text, words, strlen(words));
    const char *eval_json[] = {txlm_exe, "eval", "-m", nan_model, text, "--json", NULL};
    const char *eval_tail[] = {txlm_exe, "eval", "-m", tail, text, "--json", NULL};
    const char *gen1[] = {txlm_exe, "generate", "-m", nan_model, "-p", "w2 w3", "-n", "4", NULL};
    const char *logprobs[] = {txlm_exe, "logprobs", "-m", nan_model, "--tokens", "2,3,4", "-o", lp, NULL};
    struct {
        const char *const *argv;
        const char *needle;
    } cases[] = {{eval_json, "segment 0, position 0"},
                 {eval_tail, "segment 1, position 4: the log-probability of token 612 is nan"},
                 {gen1, "position 1"}, {logprobs, "segment 0, position 0"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int st = run(cases[i].argv, &o, &e);
        CHECK(st == 1 && strstr(e, cases[i].needle) && strstr(e, "non-finite value") && !strstr(o, "nan") &&
                  !strstr(o, "perplexity") && !strstr(o, "w2 w3 w"),
              "%s %s: exit %d, stdout '%s', stderr '%s'", cases[i].argv[1], cases[i].argv[3], st, o, e);
        free(o), free(e);
    }
    CHECK(!fmt_exists(lp), "logprobs wrote its output");
}

int main(int argc, char **argv)
{
    const char *golden = getenv("TXLM_GOLDEN");
    if (argc != 3 || !golden) {
        fprintf(stderr, "usage: test_faults_nonfinite TXLM TXLM_PACK (with TXLM_GOLDEN set)\n");
        return 2;
    }
    txlm_exe = argv[1], pack_exe = argv[2];
    char *tmp = fmt_mkdtemp();
    dir = tmp;
    char *base = path_in("base.txlm"), *nan_model = path_in("nan.txlm"), *tail = path_in("tail.txlm");
    scans();
    if (flt_pack("adaptive_word", TXLM_DT_F32, base)) return 1;
    const float nan = NAN;
    if (craft(base, nan_model, emb0, 4 * 451, &nan, 4) || craft(base, tail, "crit.out_layers.2.bias", 0, &nan, 4)) return 1;
    packing(golden);
    conversion(golden);
    checking(base);
    txlm_context_options o = flt_options(0);
    txlm_context *ctx = NULL;
    if (txlm_context_create(&o, &ctx)) {
        fprintf(stderr, "context: %s\n", txlm_last_error());
        return 1;
    }
    nan_everywhere(ctx, nan_model);
    nan_in_tail(ctx, tail);
    nan_in_batch(ctx, tail);
    CHECK(txlm_context_validation_messages(ctx) == 0, "validation messages");
    txlm_context_destroy(ctx);
    commands(nan_model, tail);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/ckpt'", tmp);
    if (system(cmd)) fprintf(stderr, "could not remove %s/ckpt\n", tmp);
    return flt_finish("non-finite values", tmp);
}
