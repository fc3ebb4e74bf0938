/* txlm-pack's sources (format/import/source.h) through the executable:
 * diagnostics on stderr and nothing on stdout, a message naming what an
 * unrecognised input looks like, a .txlm packed again into another type
 * (byte for byte what packing the original checkpoint in that type
 * gives), quantised weights refused, no output that is an input under
 * another name, and --list through every source. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "txlm_file.h"
#include "util.h"

static const char *exe, *golden, *training;

static int pack(const char *const *args, char **out, char **err) { return run_exe(exe, args, out, err); }

static char *keep(const char *s) { return strdup(s); }

/* Packs (exit 0, stdout empty, every stderr line a txlm-pack notice); returns stderr. */
static char *pack_ok(const char *what, const char *const *args)
{
    char *o, *e;
    int st = pack(args, &o, &e);
    int lines_ok = 1;
    for (const char *p = e; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
        lines_ok &= !strncmp(p, "txlm-pack: ", 11);
    if (st != 0 || o[0] || !lines_ok) fprintf(stderr, "%s: exit %d, stdout \"%s\", stderr \"%s\"\n", what, st, o, e);
    CHECK(st == 0 && o[0] == 0 && lines_ok);
    free(o);
    return e;
}

/* Fails with exit 1, nothing on stdout, one line holding every needle; no output left. */
static void pack_fails(const char *what, const char *const *args, const char *out_path, const char *n1, const char *n2)
{
    char *o, *e;
    int st = pack(args, &o, &e);
    const char *nl = strchr(e, '\n');
    int ok = st == 1 && o[0] == 0 && nl && !nl[1] && !strncmp(e, "txlm-pack: ", 11) && (!n1 || strstr(e, n1)) &&
             (!n2 || strstr(e, n2));
    if (!ok) fprintf(stderr, "%s: exit %d, stdout \"%s\", stderr \"%s\" (wanted \"%s\", \"%s\")\n", what, st, o, e, n1 ? n1 : "",
                     n2 ? n2 : "");
    CHECK(ok);
    if (out_path && file_exists(out_path)) fprintf(stderr, "%s: output left behind\n", what);
    CHECK(!out_path || !file_exists(out_path));
    free(o);
    free(e);
}

/* The file's HPRM zero_memory (-1 when it does not open). */
static int zero_memory_of(const char *path)
{
    txlm_file *f = NULL;
    txlm_err err = {0, ""};
    int z = txlm_file_open(path, 0, &f, &err) ? -1 : (int)txlm_file_hparams(f)->zero_memory;
    txlm_file_close(f);
    return z;
}

/* Notices and warnings go to stderr: a config with a misspelt key and no
 * lengths (HF's defaults taken), and every other source, print nothing on stdout. */
static void test_stderr_only(void)
{
    char dir[1024], f[1100], *out = keep(tmp_path("quiet.txlm"));
    snprintf(dir, sizeof dir, "%s", tmp_path("quiet_ckpt"));
    CHECK(mkdir(dir, 0755) == 0);
    size_t len;
    char *cfg = read_file(dir_path(dir_path(golden, "adaptive_word"), "config.json"), &len);
    CHECK(cfg && strstr(cfg, "\"mem_len\""));
    FILE *fp = fopen(dir_path(dir, "config.json"), "wb");
    /* the lengths dropped, "cutofs" added */
    for (char *line = strtok(cfg, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strstr(line, "\"mem_len\"") && !strstr(line, "\"tgt_len\"")) fprintf(fp, "%s\n", line);
        if (line == cfg) fputs("  \"cutofs\": [3],\n", fp);
    }
    fclose(fp);
    free(cfg);
    static const char *const copied[] = {"model.safetensors", "vocab.txt"};
    for (int i = 0; i < 2; i++) {
        snprintf(f, sizeof f, "%s/adaptive_word/%s", golden, copied[i]);
        char *b = read_file(f, &len);
        write_file(dir_path(dir, copied[i]), b, len);
        free(b);
    }
    char *e = pack_ok("misspelt key", (const char *[]){dir, "-o", out, NULL});
    CHECK(strstr(e, "cutofs") && strstr(e, "mem_len not given: HF's default 1600") && strstr(e, "tail-cluster order"));
    /* HF's names: HF's zero start told, not stored (the file keeps txlm's empty start) */
    CHECK(strstr(e, "HF's code starts a text from mem_len rows of zeros") && strstr(e, "--zero-memory 1") &&
          !strstr(e, "stored in the file"));
    CHECK(zero_memory_of(out) == 0);
    free(e);
    for (int i = 0; i < 2; i++) unlink(dir_path(dir, copied[i]));
    unlink(dir_path(dir, "config.json"));
    rmdir(dir);

    char nv[1100], model[1100], cache[1100], cfgp[1100];
    snprintf(nv, sizeof nv, "%s/nvidia_f16.pt", training);
    snprintf(model, sizeof model, "%s/authors_model.pt", training);
    snprintf(cache, sizeof cache, "%s/cache.pt", training);
    snprintf(cfgp, sizeof cfgp, "%s/authors_config.json", training);
    free(pack_ok("nvidia", (const char *[]){nv, "-o", out, NULL}));
    free(pack_ok("module", (const char *[]){model, "--vocab", cache, "-o", out, NULL}));
    free(pack_ok("synthetic", (const char *[]){"--synthetic", cfgp, "-o", out, NULL}));
    free(pack_ok(".txlm", (const char *[]){out, "--dtype", "f16", "-o", tmp_path("quiet2.txlm"), NULL}));
    free(out);
}

/* Each kind of input no source takes: what it looks like, and what is read. */
static void test_unrecognised(void)
{
    char *out = keep(tmp_path("never.txlm")), *p;
    static const struct {
        const char *name, *bytes;
        size_t len;
        const char *says;
    } files[] = {
        {"empty.bin", "", 0, "is an empty file"},
        {"random.bin", "\x5a\x1a\xbc\x8b\x49\x86\x41\x33\x01\x02", 10, "binary data no source recognises (first bytes 5a 1a bc"},
        {"c.json", "{\n  \"d_model\": 8\n}\n", 19, "is a JSON file (a config.json? give it with --config)"},
        {"v.txt", "<eos>\nthe\n", 10, "is a text file starting \"<eos>\" (a vocab.txt? give it with --vocab)"},
        {"v.pkl", "\x80\x02}q\x00.", 6, "is a pickle but not a torch.save checkpoint"},
        {"w.gz", "\x1f\x8b\x08\x00\x00\x00", 6, "gzip-compressed"},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        p = keep(tmp_path(files[i].name));
        write_file(p, files[i].bytes, files[i].len);
        pack_fails(files[i].name, (const char *[]){p, "-o", out, NULL}, out, files[i].says, "txlm-pack reads a .txlm model");
        unlink(p);
        free(p);
    }
    p = keep(tmp_path("fifo"));
    CHECK(mkfifo(p, 0600) == 0);
    pack_fails("fifo", (const char *[]){p, "-o", out, NULL}, out, "is a FIFO", "a folder holding config.json");
    unlink(p);
    free(p);
    pack_fails("missing", (const char *[]){"/nonexistent-input", "-o", out, NULL}, out, "/nonexistent-input does not exist",
               "NVIDIA's training checkpoint");
    p = keep(tmp_path("folder"));
    CHECK(mkdir(p, 0755) == 0);
    pack_fails("empty folder", (const char *[]){p, "-o", out, NULL}, out, "a folder without config.json; without model",
               "vocab.txt, vocab.pkl or vocab.bin");
    write_file(dir_path(p, "config.json"), "{}", 2);
    write_file(dir_path(p, "model.safetensors"), "", 0);
    pack_fails("folder without a vocabulary", (const char *[]){p, "-o", out, NULL}, out,
               "a folder without vocab.txt, vocab.pkl or vocab.bin (", NULL);
    unlink(dir_path(p, "config.json"));
    unlink(dir_path(p, "model.safetensors"));
    rmdir(p);
    free(p);
    free(out);
}

/* f32 (and an f16 checkpoint's f16) .txlm packed into each type: the same
 * file, byte for byte, as packing the original checkpoint in that type;
 * packed with no --dtype, the same file as the source (each tensor keeps
 * its type); the type chosen always on stderr. */
static void test_repack(void)
{
    static const char *const types[] = {"f32", "f16", "q8_0", "q4_0"};
    static const char *const cases[] = {"adaptive_word", "char_preln", "proj_clusters", "decode_steps"};
    char *src = keep(tmp_path("src.txlm")), *direct = keep(tmp_path("direct.txlm")), *again = keep(tmp_path("again.txlm"));
    for (int c = 0; c < 5; c++) {
        char in[1100];
        /* the last: NVIDIA's float16 checkpoint (shared r biases, 16-bit frequencies kept) packed as f16 */
        if (c < 4) snprintf(in, sizeof in, "%s/%s", golden, cases[c]);
        else snprintf(in, sizeof in, "%s/nvidia_f16.pt", training);
        free(pack_ok(in, (const char *[]){in, "--dtype", c < 4 ? "f32" : "f16", "-o", src, NULL}));
        for (int t = 0; c < 4 && t < 2; t++) { /* f32 and f16 files packed with no --dtype: each tensor kept */
            char *e = pack_ok("txlm", (const char *[]){src, "--dtype", types[t], "-o", direct, NULL});
            free(e);
            e = pack_ok("keep", (const char *[]){direct, "-o", again, NULL});
            CHECK(strstr(e, "txlm-pack: dtype: each tensor in the type the source stores it (no --dtype") != NULL);
            if (!same_bytes(direct, again)) fprintf(stderr, "%s: %s .txlm packed again with no --dtype changed\n", in, types[t]);
            CHECK(same_bytes(direct, again));
            free(e);
        }
        for (int t = 0; t < 4; t++) {
            free(pack_ok(in, (const char *[]){in, "--dtype", types[t], "-o", direct, NULL}));
            char *e = pack_ok("repack", (const char *[]){src, "--dtype", types[t], "-o", again, NULL});
            CHECK(strstr(e, "a .txlm model (") != NULL && strstr(e, "txlm-pack: dtype: ") != NULL &&
                  strstr(e, types[t]) != NULL);
            free(e);
            if (!same_bytes(direct, again)) fprintf(stderr, "%s: %s from .txlm differs from direct packing\n", in, types[t]);
            CHECK(same_bytes(direct, again));
        }
    }
    char *e = pack_ok("no --dtype", (const char *[]){dir_path(golden, "adaptive_word"), "-o", again, NULL});
    CHECK(strstr(e, "txlm-pack: dtype: f32 (the default") != NULL); /* a checkpoint's default, told */
    free(e);
    free(pack_ok("q8_0", (const char *[]){dir_path(golden, "adaptive_word"), "--dtype", "q8_0", "-o", src, NULL}));
    unlink(again);
    /* quantised weights are not packed again, each refusal giving the reason for the type asked for */
    pack_fails("from q8_0 to q4_0", (const char *[]){src, "--dtype", "q4_0", "-o", again, NULL}, again, "holds q8_0 weights",
               "quantising them again would add a second rounding error");
    pack_fails("from q8_0 to f16", (const char *[]){src, "--dtype", "f16", "-o", again, NULL}, again, "holds q8_0 weights",
               "f16 would round them a second time");
    pack_fails("from q8_0 to f32", (const char *[]){src, "--dtype", "f32", "-o", again, NULL}, again, "holds q8_0 weights",
               "f32 would hold the same rounded values");
    pack_fails("from q8_0 to q8_0", (const char *[]){src, "--dtype", "q8_0", "-o", again, NULL}, again, "holds q8_0 weights",
               "the file it already is");
    pack_fails("from q8_0, no --dtype", (const char *[]){src, "-o", again, NULL}, again, "holds q8_0 weights", "the file it already is");
    pack_fails(".txlm with --config", (const char *[]){src, "--config", dir_path(dir_path(golden, "adaptive_word"), "config.json"),
               "-o", again, NULL}, again, "holds its own hyper-parameters", "--config");
    free(src);
    free(direct);
    free(again);
}

/* The output may not be an input under another name: a symbolic or a
 * hard link to it, or the input given through a link. The input stays whole. */
static void test_output_is_input(void)
{
    char *m = keep(tmp_path("m.txlm")), *sym = keep(tmp_path("sym.txlm")), *hard = keep(tmp_path("hard.txlm"));
    free(pack_ok("model", (const char *[]){dir_path(golden, "char_preln"), "-o", m, NULL}));
    size_t len;
    char *before = read_file(m, &len);
    CHECK(symlink(m, sym) == 0 && link(m, hard) == 0);
    pack_fails("-o the input", (const char *[]){m, "--dtype", "q8_0", "-o", m, NULL}, NULL, "overwrite the input", NULL);
    pack_fails("-o a symlink to the input", (const char *[]){m, "--dtype", "q8_0", "-o", sym, NULL}, NULL, "overwrite", NULL);
    pack_fails("-o a hard link to the input", (const char *[]){m, "--dtype", "q8_0", "-o", hard, NULL}, NULL, "overwrite", NULL);
    pack_fails("the input through a symlink", (const char *[]){sym, "--dtype", "q8_0", "-o", m, NULL}, NULL, "overwrite", NULL);
    size_t after_len;
    char *after = read_file(m, &after_len);
    CHECK(before && after && len == after_len && !memcmp(before, after, len));
    free(before);
    free(after);
    /* a file a folder source picks, reached through a link */
    char *voc = keep(tmp_path("vocab_link.txt")), *target = realpath(dir_path(dir_path(golden, "char_preln"), "vocab.txt"), NULL);
    CHECK(target && symlink(target, voc) == 0);
    free(target);
    pack_fails("-o the folder's vocabulary", (const char *[]){dir_path(golden, "char_preln"), "-o", voc, NULL}, NULL,
               "overwrite the input", "vocab.txt");
    unlink(voc);
    unlink(sym);
    unlink(hard);
    free(voc);
    free(m);
    free(sym);
    free(hard);
}

/* --list through the source table: each source's tensors on stdout, one
 * line each, none of the options a pack needs, nothing on stderr; an
 * input no source takes is refused as a pack refuses it. */
static void test_list(void)
{
    char *m = keep(tmp_path("listed.txlm")), *folder = keep(dir_path(golden, "char_preln"));
    free(pack_ok("model", (const char *[]){folder, "-o", m, NULL}));
    static const struct {
        const char *dir, *file, *line;
    } src[] = {
        {"golden", "char_preln", "transformer.word_emb.emb_layers.0.weight\tf32\t["},
        {"golden", "char_preln/model.safetensors", "transformer.word_emb.emb_layers.0.weight\tf32\t["},
        {"training", "authors_state.pt", "layers.0.dec_attn.qkv_net.weight\tf32\t["},
        {"training", "authors_model.pt", "crit.cluster_weight\tf32\t["},
        {"training", "nvidia_f32.pt", "\tf32\t["},
        {NULL, NULL, "word_emb.emb_layers.0.weight\tf32\t["},
    };
    char *lines[2] = {NULL, NULL};
    for (size_t i = 0; i < sizeof src / sizeof *src; i++) {
        char path[1100], *o, *e;
        snprintf(path, sizeof path, "%s/%s", src[i].dir && !strcmp(src[i].dir, "golden") ? golden : training,
                 src[i].file ? src[i].file : "");
        const char *p = src[i].dir ? path : m;
        int st = pack((const char *[]){"--list", p, NULL}, &o, &e);
        size_t n = 0;
        for (const char *q = o; *q; q++) n += *q == '\n';
        int ok = st == 0 && !e[0] && strstr(o, src[i].line) && n >= 8;
        if (!ok) fprintf(stderr, "--list %s: exit %d, stdout \"%.300s\", stderr \"%s\"\n", p, st, o, e);
        CHECK(ok);
        if (i < 2) lines[i] = o;
        else free(o);
        free(e);
    }
    /* the folder lists its weights file, line for line */
    CHECK(lines[0] && lines[1] && !strcmp(lines[0], lines[1]));
    free(lines[0]);
    free(lines[1]);
    char *v = keep(tmp_path("v.txt"));
    write_file(v, "<eos>\nthe\n", 10);
    pack_fails("--list of a vocabulary", (const char *[]){"--list", v, NULL}, NULL, "is a text file starting", "txlm-pack reads");
    pack_fails("--list with -o", (const char *[]){"--list", folder, "-o", m, NULL}, NULL, "--list takes one PATH", NULL);
    unlink(v);
    free(v);
    free(folder);
    free(m);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s TXLM_PACK GOLDEN_DIR TRAINING_CKPTS_DIR\n", argv[0]);
        return 2;
    }
    exe = argv[1];
    golden = argv[2];
    training = argv[3];
    test_stderr_only();
    test_unrecognised();
    test_repack();
    test_output_is_input();
    test_list();
    tmp_cleanup();
    if (test_failures) fprintf(stderr, "%d check(s) failed\n", test_failures);
    return test_failures ? 1 : 0;
}
