/* The txlm-pack executable: exit status, one-line error on stderr, and no
 * output file after any failure. Inputs are the char_preln golden case
 * with one file replaced by a broken one. */
#include <fcntl.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

static const char *exe, *golden_case, *torch_case;

static int run(const char *const *args, char **out, char **errtext) { return run_exe(exe, args, out, errtext); }

/* Every line of s starts with "txlm-pack: " and ends with a line feed;
 * *last receives the last one. */
static int tool_lines(const char *s, const char **last)
{
    *last = s;
    for (const char *p = s; *p;) {
        const char *nl = strchr(p, '\n');
        if (!nl || strncmp(p, "txlm-pack: ", 11)) return 0;
        *last = p;
        p = nl + 1;
    }
    return s[0] != 0;
}

/* Expects failure (exit 1, nothing on stdout, one line on stderr: the
 * error naming `m1` and `m2`, no description of the source before it; no
 * output file). */
static void expect_fail(const char *what, const char *const *args, const char *out_path, const char *m1, const char *m2)
{
    char *o, *e;
    const char *last;
    int st = run(args, &o, &e);
    int ok = st == 1 && !o[0] && tool_lines(e, &last) && last == e && (!m1 || strstr(last, m1)) && (!m2 || strstr(last, m2));
    if (!ok) fprintf(stderr, "%s: exit %d, stderr \"%s\" (wanted \"%s\", \"%s\")\n", what, st, e, m1 ? m1 : "", m2 ? m2 : "");
    CHECK(ok);
    if (out_path) {
        char tmp[1100];
        snprintf(tmp, sizeof tmp, "%s.tmp", out_path);
        if (file_exists(out_path) || file_exists(tmp)) fprintf(stderr, "%s: output left behind\n", what);
        CHECK(!file_exists(out_path) && !file_exists(tmp));
    }
    free(o);
    free(e);
}

/* A safetensors file whose length field claims strlen(header) + extra. */
static void write_raw(const char *path, const char *header, uint64_t extra, uint64_t data_len)
{
    size_t hl = strlen(header);
    uint64_t claimed = hl + extra;
    uint8_t *b = calloc(1, 8 + hl + data_len);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(claimed >> (8 * i));
    memcpy(b + 8, header, hl);
    write_file(path, b, 8 + hl + data_len);
    free(b);
}

static const char *golden_file(const char *name) { return dir_path(golden_case, name); }

/* The golden model.safetensors with `entry` inserted first in its header. */
static void splice_golden(const char *path, const char *entry)
{
    size_t len;
    uint8_t *g = (uint8_t *)read_file(golden_file("model.safetensors"), &len);
    CHECK(g != NULL && len > 9 && g[8] == '{');
    if (!g) return;
    uint64_t hl = 0, el = strlen(entry);
    for (int i = 7; i >= 0; i--) hl = hl << 8 | g[i];
    uint8_t *b = malloc(len + el);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((hl + el) >> (8 * i));
    b[8] = '{';
    memcpy(b + 9, entry, el);
    memcpy(b + 9 + el, g + 9, len - 9);
    write_file(path, b, len + el);
    free(b);
    free(g);
}

/* The golden config.json with `key`'s value replaced by `value`. */
static void write_config_with(const char *path, const char *key, const char *value)
{
    size_t len;
    char *text = read_file(golden_file("config.json"), &len);
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    char *at = text ? strstr(text, pat) : NULL;
    CHECK(at != NULL);
    if (!at) {
        free(text);
        return;
    }
    char *val = at + strlen(pat), *end = val;
    while (*end && *end != ',' && *end != '\n' && *end != '}') end++;
    FILE *f = fopen(path, "wb");
    fprintf(f, "%.*s %s%s", (int)(val - text), text, value, end);
    fclose(f);
    free(text);
}

static void test_success(void)
{
    char out[1024], out2[1024];
    snprintf(out, sizeof out, "%s", tmp_path("ok.txlm"));
    snprintf(out2, sizeof out2, "%s", tmp_path("ok2.txlm"));
    char *o, *e;
    const char *args[] = {golden_case, "-o", out, NULL};
    int st = run(args, &o, &e);
    CHECK(st == 0 && o[0] == 0 && strstr(e, "tail-cluster order") && file_exists(out));
    free(o);
    free(e);

    /* Every input named explicitly, no folder. */
    char cfg[1024], w[1024], v[1024];
    snprintf(cfg, sizeof cfg, "%s", golden_file("config.json"));
    snprintf(w, sizeof w, "%s", golden_file("model.safetensors"));
    snprintf(v, sizeof v, "%s", golden_file("vocab.txt"));
    const char *args2[] = {"--config", cfg, "--weights", w, "--vocab", v, "--tokenizer", "word", "--dtype", "f32", "-o", out2, NULL};
    st = run(args2, &o, &e);
    CHECK(st == 0 && o[0] == 0 && file_exists(out2));
    free(o);
    free(e);
    /* Deterministic: the same inputs give the same bytes. */
    size_t la = 0, lb = 0;
    char *a = read_file(out, &la), *b = read_file(out2, &lb);
    CHECK(a && b && la == lb && memcmp(a, b, la) == 0);
    free(a);
    free(b);

    char out3[1024];
    snprintf(out3, sizeof out3, "%s", tmp_path("ok3.txlm"));
    const char *args3[] = {golden_case, "--dtype", "f16", "-o", out3, NULL};
    st = run(args3, &o, &e);
    CHECK(st == 0 && o[0] == 0 && file_exists(out3));
    free(o);
    free(e);
    size_t l3 = 0;
    char *c3 = read_file(out3, &l3);
    CHECK(c3 && l3 < la); /* the matrices took half the space */
    free(c3);

    const char *help[] = {"--help", NULL};
    st = run(help, &o, &e);
    CHECK(st == 0 && strstr(o, "usage: txlm-pack") && e[0] == 0);
    free(o);
    free(e);
}

static void test_usage_errors(void)
{
    char out[1024];
    snprintf(out, sizeof out, "%s", tmp_path("u.txlm"));
    expect_fail("no -o", (const char *[]){golden_case, NULL}, NULL, "-o", NULL);
    expect_fail("no folder", (const char *[]){"-o", out, NULL}, out, "input folder", NULL);
    expect_fail("bad option", (const char *[]){golden_case, "-o", out, "--frobnicate", NULL}, out, "--frobnicate", NULL);
    expect_fail("missing value", (const char *[]){golden_case, "-o", out, "--weights", NULL}, out, "--weights", NULL);
    expect_fail("bad tokenizer", (const char *[]){golden_case, "-o", out, "--tokenizer", "bpe", NULL}, out, "bpe", "wt103");
    expect_fail("bad cluster order", (const char *[]){golden_case, "-o", out, "--cluster-order", "backward", NULL}, out,
                "--cluster-order 'backward'", "forward or reverse");
    /* a state dict file alone: its config and vocabulary are elsewhere */
    char weights[1100];
    snprintf(weights, sizeof weights, "%s/pytorch_model.bin", golden_case);
    expect_fail("state dict without config", (const char *[]){weights, "-o", out, NULL}, out, "needs --config", NULL);
    expect_fail("bad dtype", (const char *[]){golden_case, "-o", out, "--dtype", "f64", NULL}, out, "f64", NULL);
    expect_fail("bf16 output", (const char *[]){golden_case, "-o", out, "--dtype", "bf16", NULL}, out, "bf16", NULL);
    expect_fail("no such folder", (const char *[]){"/nonexistent-folder", "-o", out, NULL}, out, "/nonexistent-folder", NULL);
    /* Writing onto an input would destroy it. */
    char cfg_copy[1024];
    snprintf(cfg_copy, sizeof cfg_copy, "%s", tmp_path("cfg_copy.json"));
    size_t len;
    char *cfg = read_file(golden_file("config.json"), &len);
    write_file(cfg_copy, cfg, len);
    expect_fail("output is input", (const char *[]){golden_case, "--config", cfg_copy, "-o", cfg_copy, NULL}, NULL,
                "overwrite", NULL);
    size_t len2;
    char *after = read_file(cfg_copy, &len2);
    CHECK(after && len2 == len && !memcmp(after, cfg, len));
    free(after);
    free(cfg);
}

/* An output that cannot be created is refused before the source is read:
 * with a source that is itself broken, the output's error is the one
 * line. The description of a pack comes after its success, or with
 * --verbose before the work (and so before a failure's error). */
static void test_outputs_first(void)
{
    char out[1024], dir_out[1024], bad_vocab[1024];
    snprintf(out, sizeof out, "%s", tmp_path("no-such-folder/x.txlm"));
    snprintf(dir_out, sizeof dir_out, "%s", tmp_path("a-folder"));
    snprintf(bad_vocab, sizeof bad_vocab, "%s", tmp_path("dup_vocab.txt"));
    write_file(bad_vocab, "a\nb\na\n", 6);
    expect_fail("output in a folder that does not exist", (const char *[]){golden_case, "-o", out, NULL}, out,
                "no-such-folder/x.txlm: cannot create a file in", "No such file or directory");
    expect_fail("output in a folder that does not exist, broken source",
                (const char *[]){golden_case, "--vocab", bad_vocab, "-o", out, NULL}, out, "no-such-folder", NULL);
    /* the export makes one missing level of folder, not two */
    char deep[1024];
    snprintf(deep, sizeof deep, "%s", tmp_path("no-such-folder/deeper/model.safetensors"));
    expect_fail("--export-safetensors two folders deep that do not exist",
                (const char *[]){"--synthetic", golden_file("config.json"), "--export-safetensors", deep, "-o",
                                 tmp_path("exp.txlm"), NULL},
                NULL, "no-such-folder/deeper: cannot create a file in", NULL);
    CHECK(!file_exists(tmp_path("exp.txlm")));
    CHECK(mkdir(dir_out, 0755) == 0);
    expect_fail("output is a folder", (const char *[]){golden_case, "-o", dir_out, NULL}, NULL, "is a directory", NULL);

    /* the description after a success; a write that fails (TXLM_FAULT_OUTPUT)
     * prints its error alone, and with --verbose after the description */
    char ok_out[1024];
    snprintf(ok_out, sizeof ok_out, "%s", tmp_path("described.txlm"));
    char *o, *e;
    const char *last;
    int st = run((const char *[]){golden_case, "-o", ok_out, NULL}, &o, &e);
    int ok = st == 0 && !o[0] && tool_lines(e, &last) && strstr(e, "tail-cluster order") && strstr(last, "dtype: f32");
    if (!ok) fprintf(stderr, "a pack's description: exit %d, \"%s\"\n", st, e);
    CHECK(ok);
    free(o), free(e);
    setenv("TXLM_FAULT_OUTPUT", "fail", 1);
    expect_fail("a failed write", (const char *[]){golden_case, "-o", ok_out, NULL}, NULL, ok_out, NULL);
    st = run((const char *[]){golden_case, "--verbose", "-o", ok_out, NULL}, &o, &e);
    ok = st == 1 && tool_lines(e, &last) && strstr(e, "tail-cluster order") && strstr(e, "dtype: f32") && last != e &&
         strstr(last, ok_out);
    if (!ok) fprintf(stderr, "--verbose, a failed write: exit %d, \"%s\"\n", st, e);
    CHECK(ok);
    free(o), free(e);
    unsetenv("TXLM_FAULT_OUTPUT");
}

static void test_bad_weights(void)
{
    char w[1024], o[1024];
    snprintf(w, sizeof w, "%s", tmp_path("bad.safetensors"));
    snprintf(o, sizeof o, "%s", tmp_path("bad.txlm"));
    const char *args[] = {golden_case, "--weights", w, "-o", o, NULL};
    const char *ok = "{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";

    write_raw(w, ok, 100, 8);
    expect_fail("header length beyond the file", args, o, w, "header length");
    write_raw(w, "{\"t\":{\"dtype\":\"F32\" \"shape\":[2]}}", 0, 8);
    expect_fail("header not JSON", args, o, w, "not valid JSON");
    write_raw(w, "{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 0, 4);
    expect_fail("data_offsets beyond the file", args, o, "'t'", "beyond");
    write_raw(w, "{\"t\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 0, 8);
    expect_fail("offsets inconsistent with shape", args, o, "'t'", "need 12");
    write_raw(w, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                 "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 0, 12);
    expect_fail("overlapping tensors", args, o, "'b'", "overlap");
    write_raw(w, "{\"t\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]}}", 0, 8);
    expect_fail("unknown dtype", args, o, "'t'", "'U8'");
    write_raw(w, "{\"t\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,2],\"data_offsets\":[0,8]}}", 0, 8);
    expect_fail("rank 9", args, o, "'t'", "rank 9");
    write_file(w, "PK", 2);
    expect_fail("neither format", args, o, w, NULL);
    /* Well-formed files with the wrong tensors for this config. */
    splice_golden(w, "\"transformer.extra\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},");
    expect_fail("unknown tensor", args, o, "'transformer.extra'", "not part of");
    write_raw(w, "{}", 0, 0);
    expect_fail("missing tensor", args, o, "lacks tensor", NULL);
}

static void test_bad_config(void)
{
    char c[1024], o[1024];
    snprintf(c, sizeof c, "%s", tmp_path("config.json"));
    snprintf(o, sizeof o, "%s", tmp_path("cfg.txlm"));
    const char *args[] = {golden_case, "--config", c, "-o", o, NULL};
    write_config_with(c, "n_head", "\"3\"");
    expect_fail("string n_head", args, o, "'n_head'", "expected an integer, got a string");
    write_config_with(c, "d_model", "-48");
    expect_fail("negative d_model", args, o, "'d_model'", "-48");
    write_config_with(c, "n_layer", "2.5");
    expect_fail("fractional n_layer", args, o, "'n_layer'", "2.5");
    write_config_with(c, "attn_type", "1");
    expect_fail("attn_type 1", args, o, "attn_type 1", "not supported");
    write_config_with(c, "ext_len", "4");
    expect_fail("ext_len 4", args, o, "ext_len 4", "not supported");
    write_config_with(c, "n_layer", "3");
    expect_fail("missing layer", args, o, "lacks tensor 'transformer.layers.2.", NULL);
    write_config_with(c, "d_inner", "64");
    expect_fail("wrong shape", args, o, "CoreNet.0.weight", "expected [64, 48]");
    write_config_with(c, "untie_r", "true");
    expect_fail("shared r bias with untie_r", args, o, "lacks tensor 'transformer.layers.0.dec_attn.r_w_bias'", NULL);
}

static void test_bad_vocab(void)
{
    char v[1024], o[1024];
    snprintf(v, sizeof v, "%s", tmp_path("vocab.txt"));
    snprintf(o, sizeof o, "%s", tmp_path("voc.txlm"));
    const char *args[] = {golden_case, "--vocab", v, "-o", o, NULL};
    size_t len;
    char *text = read_file(golden_file("vocab.txt"), &len);
    /* Drop the last line: one symbol short. */
    size_t cut = len - 1;
    while (cut > 0 && text[cut - 1] != '\n') cut--;
    write_file(v, text, cut);
    expect_fail("vocab size mismatch", args, o, "203 symbols", "n_token = 204");
    write_file(v, "a\nb\na\n", 6);
    expect_fail("duplicate symbol", args, o, "'a'", "lines 1 and 3");
    free(text);
}

/* ---- torch.save and pickled vocabularies (the adaptive_word case) ---- */

static const char *torch_file(const char *name) { return dir_path(torch_case, name); }

static void copy_to(const char *from, const char *to)
{
    size_t len;
    char *b = read_file(from, &len);
    CHECK(b != NULL);
    if (b) write_file(to, b, len);
    free(b);
}

static void expect_ok(const char *what, const char *const *args, const char *out, const char *ref)
{
    char *o, *e;
    int st = run(args, &o, &e);
    const char *last;
    if (st != 0) fprintf(stderr, "%s: exit %d, stderr \"%s\"\n", what, st, e);
    CHECK(st == 0 && o[0] == 0 && tool_lines(e, &last));
    if (ref && !same_bytes(out, ref)) fprintf(stderr, "%s: packs differently\n", what);
    CHECK(!ref || same_bytes(out, ref));
    free(o);
    free(e);
}

/* vocab.txt with CRLF line ends and a byte-order mark packs into the same
 * model as the plain file, and txlm-pack says what it removed. */
static void test_vocab_line_ends(void)
{
    char v[1024], o[1024], ref[1024];
    snprintf(v, sizeof v, "%s", tmp_path("crlf_vocab.txt"));
    snprintf(o, sizeof o, "%s", tmp_path("crlf.txlm"));
    snprintf(ref, sizeof ref, "%s", tmp_path("plain.txlm"));
    const char *plain[] = {golden_case, "-o", ref, NULL};
    expect_ok("plain vocab.txt", plain, ref, NULL);
    size_t len, w = 3;
    char *text = read_file(golden_file("vocab.txt"), &len), *crlf = malloc(2 * len + 3);
    memcpy(crlf, "\xef\xbb\xbf", 3);
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n') crlf[w++] = '\r';
        crlf[w++] = text[i];
    }
    write_file(v, crlf, w);
    const char *args[] = {golden_case, "--vocab", v, "-o", o, NULL};
    char *out, *err;
    int st = run(args, &out, &err);
    const char *last;
    int ok = st == 0 && !out[0] && tool_lines(err, &last) && strstr(err, "crlf_vocab.txt: removed") && strstr(err, "byte-order mark") &&
             strstr(err, "carriage return ending 204 lines") && same_bytes(o, ref);
    if (!ok) fprintf(stderr, "CRLF vocab.txt: exit %d, stderr \"%s\"\n", st, err);
    CHECK(ok);
    free(out);
    free(err);
    free(text);
    free(crlf);
}

static void test_torch_forms(void)
{
    char ref[1024], out[1024], v[1024], dir[1024];
    snprintf(ref, sizeof ref, "%s", tmp_path("torch_ref.txlm"));
    snprintf(out, sizeof out, "%s", tmp_path("torch_out.txlm"));
    expect_ok("safetensors + vocab.txt", (const char *[]){torch_case, "-o", ref, NULL}, ref, NULL);
    static const char *const w[] = {"pytorch_model.bin", "pytorch_model_legacy.bin"};
    static const char *const voc[] = {"vocab.pkl", "vocab.bin"};
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++) {
            char wp[1024], vp[1024];
            snprintf(wp, sizeof wp, "%s", torch_file(w[i]));
            snprintf(vp, sizeof vp, "%s", torch_file(voc[k]));
            expect_ok(w[i], (const char *[]){torch_case, "--weights", wp, "--vocab", vp, "-o", out, NULL}, out, ref);
        }
    /* Forms are told by content: a pickle named vocab.txt, a text file named vocab.pkl. */
    snprintf(v, sizeof v, "%s", tmp_path("vocab.txt"));
    copy_to(torch_file("vocab.bin"), v);
    expect_ok("pickle named .txt", (const char *[]){torch_case, "--vocab", v, "-o", out, NULL}, out, ref);
    snprintf(v, sizeof v, "%s", tmp_path("vocab.pkl"));
    copy_to(torch_file("vocab.txt"), v);
    expect_ok("text named .pkl", (const char *[]){torch_case, "--vocab", v, "-o", out, NULL}, out, ref);
    /* A folder with only the torch.save files. */
    snprintf(dir, sizeof dir, "%s", tmp_path("ckpt"));
    CHECK(mkdir(dir, 0755) == 0);
    char f[1100];
    snprintf(f, sizeof f, "%s/config.json", dir);
    copy_to(torch_file("config.json"), f);
    snprintf(f, sizeof f, "%s/pytorch_model.bin", dir);
    copy_to(torch_file("pytorch_model_legacy.bin"), f);
    snprintf(f, sizeof f, "%s/vocab.bin", dir);
    copy_to(torch_file("vocab.bin"), f);
    expect_ok("torch-only folder", (const char *[]){dir, "-o", out, NULL}, out, ref);
    static const char *const names[] = {"config.json", "pytorch_model.bin", "vocab.bin"};
    for (int i = 0; i < 3; i++) {
        snprintf(f, sizeof f, "%s/%s", dir, names[i]);
        unlink(f);
    }
    rmdir(dir);
    unlink(v);
    unlink(out);
    unlink(ref);
}

/* `name` from the torch case with bytes [at, at + n) replaced by `with`
 * (m bytes), or cut to `cut` bytes when cut > 0. */
static void write_mutated(const char *path, const char *name, size_t at, size_t n, const char *with, size_t m, size_t cut)
{
    size_t len;
    uint8_t *g = (uint8_t *)read_file(torch_file(name), &len);
    CHECK(g != NULL && at + n <= len);
    if (!g) return;
    uint8_t *b = malloc(len + m);
    memcpy(b, g, at);
    memcpy(b + at, with, m);
    memcpy(b + at + m, g + at + n, len - at - n);
    write_file(path, b, cut ? cut : len - n + m);
    free(b);
    free(g);
}

static size_t find_in(const char *name, const char *needle)
{
    size_t len;
    char *g = read_file(torch_file(name), &len);
    size_t at = 0, nl = strlen(needle);
    while (g && at + nl <= len && memcmp(g + at, needle, nl)) at++;
    CHECK(g && at + nl <= len);
    free(g);
    return at;
}

static void test_torch_errors(void)
{
    char w[1024], v[1024], c[1024], o[1024];
    snprintf(w, sizeof w, "%s", tmp_path("bad_weights.bin"));
    snprintf(v, sizeof v, "%s", tmp_path("bad_vocab.pkl"));
    snprintf(c, sizeof c, "%s", tmp_path("bad_config.json"));
    snprintf(o, sizeof o, "%s", tmp_path("torch_bad.txlm"));
    const char *wargs[] = {torch_case, "--weights", w, "-o", o, NULL};
    const char *vargs[] = {torch_case, "--vocab", v, "-o", o, NULL};
    const char *cargs[] = {torch_case, "--config", c, "-o", o, NULL};
    size_t len;
    char *zip = read_file(torch_file("pytorch_model.bin"), &len);
    if (!zip) return;

    write_mutated(w, "pytorch_model.bin", 0, 0, "", 0, len / 2);
    expect_fail("truncated zip", wargs, o, "end-of-central-directory", "truncated");
    size_t cd = find_in("pytorch_model.bin", "PK\x01\x02");
    write_mutated(w, "pytorch_model.bin", cd, 4, "PK\x01\x09", 4, 0);
    expect_fail("bad central directory", wargs, o, "bad zip central directory entry", NULL);
    write_mutated(w, "pytorch_model.bin", cd + 42, 4, "\xff\xff\xff\x7f", 4, 0);
    expect_fail("local header beyond the file", wargs, o, "no local header at byte 2147483647", NULL);
    /* The legacy file's state dict built by os.system instead of OrderedDict. */
    size_t od = find_in("pytorch_model_legacy.bin", "ccollections\nOrderedDict\n");
    write_mutated(w, "pytorch_model_legacy.bin", od, 25, "cposix\nsystem\n", 14, 0);
    expect_fail("forbidden GLOBAL in weights", wargs, o, "'posix.system' at byte 139", "not allowed");
    size_t legacy_len;
    free(read_file(torch_file("pytorch_model_legacy.bin"), &legacy_len));
    write_mutated(w, "pytorch_model_legacy.bin", 0, 0, "", 0, legacy_len - 1000);
    expect_fail("storage beyond the file", wargs, o, "runs past the end of the file", "truncated");
    /* safetensors header lying: a shape larger than its data range. */
    size_t sh = find_in("model.safetensors", "\"shape\":[200,64]");
    write_mutated(w, "model.safetensors", sh, 16, "\"shape\":[201,64]", 16, 0);
    expect_fail("safetensors shape vs offsets", wargs, o, "hold 51200 bytes", "need 51456");

    static const char forbidden[] = "\x80\x02" "cos\nsystem\n" "X\x02\x00\x00\x00" "id" "\x85R.";
    write_file(v, forbidden, sizeof forbidden - 1);
    expect_fail("forbidden GLOBAL in vocab", vargs, o, "'os.system' at byte 2", "not allowed");
    static const char inst[] = "\x80\x02}(X\x01\x00\x00\x00" "a" "ios\nsystem\n" "u.";
    write_file(v, inst, sizeof inst - 1);
    expect_fail("opcode outside the subset", vargs, o, "INST ('i', 0x69)", "at byte 10");
    free(zip);

    size_t cl;
    char *cfg = read_file(torch_file("config.json"), &cl);
    char *at = cfg ? strstr(cfg, "\"div_val\": 2") : NULL;
    CHECK(at != NULL);
    if (at) {
        FILE *f = fopen(c, "wb");
        fprintf(f, "%.*s\"div_val\": [2]%s", (int)(at - cfg), cfg, at + strlen("\"div_val\": 2"));
        fclose(f);
        expect_fail("config wrong type", cargs, o, "'div_val'", NULL);
    }
    free(cfg);
}

/* Progress goes to stderr only when it is a terminal: run under a
 * pseudo-terminal, the bytes written / total appear and end the line. */
static void test_progress_tty(void)
{
    char out[1024];
    snprintf(out, sizeof out, "%s", tmp_path("tty.txlm"));
    int master = -1;
    fflush(NULL);
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    if (pid == 0) {
        const char *argv[] = {exe, torch_case, "--weights", torch_file("pytorch_model.bin"), "-o", out, NULL};
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    CHECK(pid > 0);
    if (pid <= 0) return;
    char text[4096];
    size_t n = 0;
    for (ssize_t got; n + 1 < sizeof text && (got = read(master, text + n, sizeof text - 1 - n)) > 0;) n += (size_t)got;
    text[n] = 0;
    int status = 0;
    waitpid(pid, &status, 0);
    close(master);
    if (!strstr(text, "txlm-pack: writing ")) fprintf(stderr, "no progress on a terminal: \"%s\"\n", text);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(strstr(text, "txlm-pack: writing ") && strstr(text, " MiB") && text[0] && strchr(text, '\n'));
    unlink(out);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s TXLM_PACK GOLDEN_CASE_DIR TORCH_CASE_DIR\n", argv[0]);
        return 2;
    }
    exe = argv[1];
    golden_case = argv[2];
    torch_case = argv[3];
    test_success();
    test_usage_errors();
    test_outputs_first();
    test_bad_weights();
    test_bad_config();
    test_bad_vocab();
    test_vocab_line_ends();
    test_torch_forms();
    test_torch_errors();
    test_progress_tty();
    tmp_cleanup();
    if (test_failures) fprintf(stderr, "%d check(s) failed\n", test_failures);
    return test_failures ? 1 : 0;
}
