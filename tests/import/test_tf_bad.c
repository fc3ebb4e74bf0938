/* What txlm-pack refuses in a TensorFlow checkpoint, each with one line
 * naming the file, the entry and the offset, and nothing written: the
 * hostile and inconsistent bundles of tf_ckpts/bad (gen.py), and damage
 * done here to a copy of the wt103 fixture (truncation, magic, block and
 * tensor CRCs, a shard cut short or missing, corpus-info.json that
 * disagrees), outputs that are inputs. Also: optimizer slots are never
 * read, --list on every source, and the lm1b and enwik8 vocabularies from
 * cache.pkl tokenizing text as the authors' preparation does.
 *
 * usage: test_import_tf_bad TXLM_PACK FIXTURE_DIR TRAINING_CKPTS_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tf_bundle.h"
#include "tokenizer.h"
#include "txlm_file.h"
#include "util.h"
#include "../common/run_tool.h"

static const char *pack_exe, *dir, *torch_dir;

/* txlm-pack ARGS... must fail with exactly one line holding every `want`, and write nothing. */
static void refuses(const char *what, const char *const *args, const char *const *want)
{
    const char *argv[16];
    int n = 0;
    argv[n++] = pack_exe;
    for (; *args && n < 12; args++) argv[n++] = *args;
    const char *out = tmp_path("refused.txlm");
    argv[n++] = "-o", argv[n++] = out, argv[n] = NULL;
    char *so = NULL, *se = NULL;
    int st = run_tool(argv, &so, &se);
    int lines = 0, ok = st == 1 && se && !file_exists(out);
    for (const char *p = se ? se : ""; *p; p++) lines += *p == '\n';
    for (; ok && *want; want++) ok = strstr(se, *want) != NULL;
    if (!ok || lines != 1) fprintf(stderr, "%s: exit %d, stderr \"%s\"\n", what, st, se ? se : "");
    CHECK(ok && lines == 1);
    free(so), free(se);
}

static void copy_file(const char *from, const char *to)
{
    size_t len = 0;
    char *d = read_file(from, &len);
    CHECK(d != NULL);
    if (d) write_file(to, d, len);
    free(d);
}

static char work[512];

/* A fresh copy of the wt103 fixture under the temporary folder. */
static void fresh_copy(void)
{
    static const char *const files[] = {"model/checkpoint", "model/model.ckpt-0.index",
                                        "model/model.ckpt-0.data-00000-of-00003", "model/model.ckpt-0.data-00001-of-00003",
                                        "model/model.ckpt-0.data-00002-of-00003", "data/cache.pkl", "data/corpus-info.json"};
    char from[1024], to[1024];
    snprintf(work, sizeof work, "%s/wt103", tmp_dir());
    mkdir(work, 0755);
    snprintf(to, sizeof to, "%s/model", work), mkdir(to, 0755);
    snprintf(to, sizeof to, "%s/data", work), mkdir(to, 0755);
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(from, sizeof from, "%s/wt103/%s", dir, files[i]);
        snprintf(to, sizeof to, "%s/%s", work, files[i]);
        copy_file(from, to);
    }
}

static const char *in_work(const char *name)
{
    static char p[1024];
    snprintf(p, sizeof p, "%s/%s", work, name);
    return p;
}

static void flip(const char *path, long at)
{
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    if (!f) return;
    if (at < 0) fseek(f, at, SEEK_END);
    else fseek(f, at, SEEK_SET);
    int c = fgetc(f);
    fseek(f, -1, SEEK_CUR);
    fputc(c ^ 0x5a, f);
    fclose(f);
}

/* Where a tensor lies: its shard's path and offset (from the undamaged bundle). */
static const txlm_tf_tensor *locate(txlm_tf_bundle **b, const char *name, char *shard, size_t cap)
{
    txlm_err err = {0, ""};
    EXPECT_OK(txlm_tf_bundle_open(in_work("model/model.ckpt-0"), b, &err), &err);
    const txlm_tf_tensor *t = *b ? txlm_tf_bundle_find(*b, name) : NULL;
    CHECK(t != NULL);
    if (t) snprintf(shard, cap, "%s/model/model.ckpt-0.data-%05u-of-00003", work, t->shard);
    return t;
}

static void damaged_copies(void)
{
    const char *top[] = {NULL, NULL};
    char index[1024], shard[1024];
    fresh_copy();
    snprintf(index, sizeof index, "%s", in_work("model/model.ckpt-0.index"));
    top[0] = work;
    write_file(index, "short", 5);
    refuses("truncated index", top, (const char *const[]){index, "5 bytes, shorter than a table's 48-byte footer", NULL});
    fresh_copy();
    flip(index, -3);
    refuses("wrong magic", top, (const char *const[]){index, "no table magic at byte", NULL});
    fresh_copy();
    flip(index, 7);
    refuses("block CRC", top, (const char *const[]){index, "the block at byte 0 fails its CRC-32C", NULL});

    fresh_copy();
    txlm_tf_bundle *b = NULL;
    const txlm_tf_tensor *t = locate(&b, "transformer/layer_1/ff/layer_1/kernel", shard, sizeof shard);
    if (t) {
        flip(shard, (long)(t->offset + t->size / 2));
        refuses("tensor CRC", top, (const char *const[]){shard, "tensor 'transformer/layer_1/ff/layer_1/kernel' at byte",
                                                          "fails its CRC-32C", NULL});
        fresh_copy();
        if (truncate(shard, (off_t)(t->offset + t->size - 1))) CHECK(0);
        refuses("shard cut short", top, (const char *const[]){shard, "tensor 'transformer/", "entry at byte",
                                                              "past the shard's end", NULL});
    }
    txlm_tf_bundle_free(b);
    fresh_copy();
    unlink(in_work("model/model.ckpt-0.data-00002-of-00003"));
    refuses("missing shard", top, (const char *const[]){index, "names 3 data shards", "model.ckpt-0.data-00002-of-00003", NULL});

    /* an optimizer slot is not read: damage there packs, and --list (which reads everything) refuses */
    fresh_copy();
    b = NULL;
    t = locate(&b, "transformer/r_w_bias/Adam", shard, sizeof shard);
    if (t) flip(shard, (long)t->offset);
    txlm_tf_bundle_free(b);
    const char *out = tmp_path("adam.txlm");
    const char *ok_argv[] = {pack_exe, work, "-o", out, NULL}, *list_argv[] = {pack_exe, "--list", work, NULL};
    char *so = NULL, *se = NULL;
    CHECK(run_tool(ok_argv, &so, &se) == 0 && file_exists(out));
    free(so), free(se), so = se = NULL;
    CHECK(run_tool(list_argv, &so, &se) == 1 && se && strstr(se, "'transformer/r_w_bias/Adam'") && strstr(se, "CRC-32C"));
    free(so), free(se);

    fresh_copy();
    const char *info = in_work("data/corpus-info.json");
    write_file(info, "{\"vocab_size\": 161, \"cutoffs\": [0, 20, 40, 100, 161], \"dataset\": \"wt103\"}", 73);
    refuses("corpus-info", top, (const char *const[]){info, "vocab_size 161", "160 tokens", NULL});
    fresh_copy();
    write_file(info, "{\"vocab_size\": 160, \"cutoffs\": [0, 20, 41, 100, 160], \"dataset\": \"wt103\"}", 73);
    refuses("corpus-info cutoffs", top, (const char *const[]){info, "cutoffs disagree", NULL});
    fresh_copy(); /* a character corpus's [] says no clusters, where the weights have four */
    write_file(info, "{\"vocab_size\": 160, \"cutoffs\": [], \"dataset\": \"wt103\"}", 54);
    refuses("corpus-info cutoffs []", top, (const char *const[]){info, "cutoffs disagree", NULL});
    fresh_copy();
    write_file(in_work("model/checkpoint"), "model_checkpoint_path: \"model.ckpt-9\"\n", 38);
    refuses("checkpoint naming nothing", top, (const char *const[]){"model.ckpt-9.index", NULL});
}

/* No output may be a file the source reads (the checkpoint file, the
 * index, a shard, corpus-info.json, cache.pkl): refused, the file whole;
 * --config and --weights are refused too (the files hold their own). */
static void outputs_are_inputs(void)
{
    static const char *const files[] = {"model/checkpoint", "model/model.ckpt-0.index",
                                        "model/model.ckpt-0.data-00002-of-00003", "data/corpus-info.json", "data/cache.pkl"};
    fresh_copy();
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char target[1024];
        snprintf(target, sizeof target, "%s", in_work(files[i]));
        size_t before_len = 0, after_len = 0;
        char *before = read_file(target, &before_len), *so = NULL, *se = NULL;
        const char *argv[] = {pack_exe, work, "-o", target, NULL};
        int st = run_tool(argv, &so, &se);
        char *after = read_file(target, &after_len);
        int ok = st == 1 && se && strstr(se, "the output would overwrite the input") && strchr(se, '\n') &&
                 !strchr(se, '\n')[1] && before && after && before_len == after_len && !memcmp(before, after, before_len);
        if (!ok) fprintf(stderr, "-o %s: exit %d, stderr \"%s\"\n", files[i], st, se ? se : "");
        CHECK(ok);
        free(before), free(after), free(so), free(se);
    }
    const char *cfg[] = {work, "--config", in_work("data/corpus-info.json"), NULL};
    refuses("--config", cfg, (const char *const[]){work, "holds its own hyper-parameters: no --config", NULL});
}

static void bad_bundles(void)
{
    static const struct { const char *name, *want[3]; } bad[] = {
        {"shape", {"entry 'transformer/layer_1/ff/LayerNorm/beta' (byte", "shape [9]", "needs [8]"}},
        {"missing", {"no entry 'transformer/layer_1/ff/LayerNorm/beta' (shape [8])", NULL, NULL}},
        {"unknown", {"entry 'transformer/layer_0/ff/extra' (byte", "no part of tf/model.py", NULL}},
        {"sliced", {"'transformer/layer_1/ff/LayerNorm/beta' (byte", "partitioned", NULL}},
        {"slice_key", {"entry '\\x00transformer/layer_1/ff/LayerNorm/beta\\x00\\x01\\x01\\x01\\x80\\x88' (byte",
                       "a slice of the partitioned variable 'transformer/layer_1/ff/LayerNorm/beta'", NULL}},
        {"varint", {"'transformer/layer_1/ff/LayerNorm/beta' (byte", "of its value", "overlong varint"}},
        {"shard", {"'transformer/layer_1/ff/LayerNorm/beta' (byte", "shard id outside", NULL}},
        {"dtype", {"'transformer/layer_1/ff/LayerNorm/beta' (byte", "dtype int32", NULL}},
        {"restarts", {"restart points, impossible in", "the block at byte", NULL}},
        {"unsorted", {".index: entry '", "is not after the entry before it ('", NULL}},
    };
    char prefix[1024], vocab[1024];
    snprintf(vocab, sizeof vocab, "%s/text8/data/cache.pkl", dir);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(prefix, sizeof prefix, "%s/bad/%s/model.ckpt-0", dir, bad[i].name);
        const char *args[] = {prefix, "--vocab", vocab, NULL};
        const char *want[5] = {prefix, bad[i].want[0], bad[i].want[1], bad[i].want[2], NULL};
        for (int k = 1; k < 4; k++)
            if (!want[k]) want[k] = want[0];
        refuses(bad[i].name, args, want);
    }
}

/* --list prints a line per tensor for every source: a bundle, a state
 * dict, a whole model, NVIDIA's checkpoint, an HF folder. */
static void lists(void)
{
    static const struct { const char *path, *line; } src[] = {
        {"TF:wt103", "transformer/layer_1/rel_attn/qkv/kernel\tfloat\t[64, 96]\t"},
        {"TF:enwik8/model", "global_step\tint64\t[]\t(not read)"},
        {"authors_state.pt", "layers.0.dec_attn.qkv_net.weight\tf32\t["},
        {"authors_model_legacy.pt", "crit.cluster_weight\tf32\t["},
        {"nvidia_f16.pt", "\tf16\t["},
        {"hf_tied", "transformer.word_emb.emb_layers.0.weight\tf32\t["},
    };
    for (size_t i = 0; i < sizeof src / sizeof *src; i++) {
        char path[1024];
        int tf = !strncmp(src[i].path, "TF:", 3);
        snprintf(path, sizeof path, "%s/%s", tf ? dir : torch_dir, src[i].path + (tf ? 3 : 0));
        const char *argv[] = {pack_exe, "--list", path, NULL};
        char *so = NULL, *se = NULL;
        int st = run_tool(argv, &so, &se);
        int ok = st == 0 && so && strstr(so, src[i].line);
        if (!ok) fprintf(stderr, "--list %s: exit %d, stdout \"%.300s\", stderr \"%s\"\n", path, st, so ? so : "", se ? se : "");
        CHECK(ok);
        free(so), free(se);
    }
}

static char *tokens_of(const txlm_file *f, const char *text)
{
    txlm_tokenizer *t = NULL;
    txlm_err err = {0, ""};
    int32_t *ids = NULL;
    size_t n = 0;
    static char out[1024];
    out[0] = 0;
    EXPECT_OK(txlm_tok_create(txlm_file_vocab(f), &t, &err), &err);
    if (t) EXPECT_OK(txlm_tok_encode(t, text, strlen(text), &ids, &n, &err), &err);
    for (size_t i = 0; i < n; i++) {
        uint32_t len;
        const char *s = txlm_vocab_sym(txlm_file_vocab(f), (uint32_t)ids[i], &len);
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%.*s", i ? " " : "", (int)len, s);
    }
    char *back = NULL;
    if (t && ids) EXPECT_OK(txlm_tok_decode(t, ids, n, &back, &err), &err);
    snprintf(out + strlen(out), sizeof out - strlen(out), " | %s", back ? back : "");
    free(back);
    free(ids);
    txlm_tok_free(t);
    return out;
}

/* cache.pkl's vocabularies with each corpus's tokenizer: lm1b's lines are
 * <S> words <S> with <UNK>; enwik8's symbols are decimal byte values. */
static void vocabularies(void)
{
    static const struct { const char *name, *text, *want; } v[] = {
        {"lm1b", "the w3 zzz\n\nof\n", "<S> the w3 <UNK> <S> <S> <S> <S> of <S> | the w3 <UNK>\n\nof\n"},
        {"lm1b", "a b", "<S> a <UNK> | a <UNK>"},
        {"enwik8", "te a\n", "116 101 32 97 10 | te a\n"},
        {"text8", "tea is", "t e a _ i s | tea is"},
        {"wt103", "the of\nx\n", "the of <eos> <unk> <eos> | the of\n<unk>\n"},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, v[i].name);
        const char *out = tmp_path("tok.txlm");
        const char *argv[] = {pack_exe, path, "-o", out, NULL};
        char *so = NULL, *se = NULL;
        CHECK(run_tool(argv, &so, &se) == 0);
        free(so), free(se);
        txlm_file *f = NULL;
        txlm_err err = {0, ""};
        EXPECT_OK(txlm_file_open(out, 0, &f, &err), &err);
        const char *got = f ? tokens_of(f, v[i].text) : "";
        if (strcmp(got, v[i].want)) fprintf(stderr, "%s: \"%s\" gave \"%s\", wanted \"%s\"\n", v[i].name, v[i].text, got, v[i].want);
        CHECK(!strcmp(got, v[i].want));
        txlm_file_close(f);
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s TXLM_PACK FIXTURE_DIR TRAINING_CKPTS_DIR\n", argv[0]);
        return 2;
    }
    pack_exe = argv[1], dir = argv[2], torch_dir = argv[3];
    bad_bundles();
    damaged_copies();
    outputs_are_inputs();
    lists();
    vocabularies();
    tmp_cleanup();
    if (test_failures) fprintf(stderr, "%d check(s) failed\n", test_failures);
    return test_failures ? 1 : 0;
}
