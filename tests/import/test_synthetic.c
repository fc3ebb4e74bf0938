/* txlm-pack --synthetic: the same seed gives the same file, another seed
 * other weights, the weights are scaled as documented, and a model
 * exported with --export-safetensors packs back to identical tensors.
 *
 * usage: test_import_synthetic TXLM_PACK */
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "txlm_file.h"
#include "util.h"

static const char *pack;

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) ? -1 : (long)st.st_size;
}

/* entries of dir whose names start with prefix */
static int count_files(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += !strncmp(e->d_name, prefix, strlen(prefix));
    if (d) closedir(d);
    return n;
}

/* Runs txlm-pack with the given arguments (stderr kept in tmp_dir()/err); returns its exit status. */
static int pack_run(const char *fmt, ...) TXLM_PRINTF(1, 2);
static int pack_run(const char *fmt, ...)
{
    char args[2048], cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "'%s' %s 2>'%s/err'", pack, args, tmp_dir());
    int st = system(cmd);
    return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

static txlm_file *open_model(const char *path)
{
    txlm_file *f = NULL;
    txlm_err err = {0, ""};
    EXPECT_OK(txlm_file_open(path, 0, &f, &err), &err);
    return f;
}

/* How many tensors of a and b (same names, in order) have identical bytes; -1 if the lists differ. */
static int same_tensors(const txlm_file *a, const txlm_file *b)
{
    uint32_t n = txlm_file_tensor_count(a);
    if (n != txlm_file_tensor_count(b)) return -1;
    int same = 0;
    for (uint32_t i = 0; i < n; i++) {
        const txlm_tensor_info *x = txlm_file_tensor(a, i), *y = txlm_file_tensor(b, i);
        if (strcmp(x->name, y->name) || x->dtype != y->dtype || x->nbytes != y->nbytes) return -1;
        same += !memcmp(txlm_file_data(a, x), txlm_file_data(b, y), x->nbytes);
    }
    return same;
}

static int same_vocab(const txlm_file *a, const txlm_file *b)
{
    const txlm_vocab *x = txlm_file_vocab(a), *y = txlm_file_vocab(b);
    return x->n == y->n && x->kind == y->kind && x->flags == y->flags && x->eos_id == y->eos_id &&
           x->unk_id == y->unk_id && x->blob_size == y->blob_size && !memcmp(x->blob, y->blob, x->blob_size) &&
           !memcmp(x->offsets, y->offsets, ((size_t)x->n + 1) * sizeof *x->offsets);
}

/* mean and standard deviation of an f32 tensor */
static void stats(const txlm_file *f, const char *name, double *mean, double *sd)
{
    const txlm_tensor_info *t = txlm_file_find(f, name);
    *mean = *sd = NAN;
    if (!t || t->dtype != TXLM_DT_F32) return;
    const float *v = txlm_file_data(f, t);
    double s = 0, s2 = 0;
    for (uint64_t i = 0; i < t->n_elems; i++) s += v[i], s2 += (double)v[i] * v[i];
    *mean = s / t->n_elems;
    *sd = sqrt(s2 / t->n_elems - *mean * *mean);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s TXLM_PACK\n", argv[0]);
        return 2;
    }
    pack = argv[1];
    const char *dir = tmp_dir();
    /* clusters with div_val 2, shared r biases, pre-LN, an untied projection, d_embed != d_model */
    static const char config[] =
        "{\"n_token\": 333, \"d_model\": 64, \"d_embed\": 96, \"n_head\": 2, \"d_head\": 16, \"d_inner\": 80,"
        " \"n_layer\": 2, \"div_val\": 2, \"cutoffs\": [50, 150], \"tie_projs\": [false, false, true],"
        " \"untie_r\": false, \"pre_lnorm\": true, \"same_length\": true, \"clamp_len\": 12, \"mem_len\": 7,"
        " \"layer_norm_epsilon\": 1e-6}";
    write_file(tmp_path("cfg.json"), config, sizeof config - 1);

    CHECK(pack_run("--synthetic %s/cfg.json -o %s/a.txlm", dir, dir) == 0);
    CHECK(pack_run("--synthetic %s/cfg.json --seed 1 -o %s/b.txlm", dir, dir) == 0); /* 1 is the default */
    CHECK(pack_run("--synthetic %s/cfg.json --seed 2 -o %s/c.txlm", dir, dir) == 0);
    CHECK(pack_run("--synthetic %s/cfg.json --seed 1 --export-safetensors %s/model.safetensors -o %s/d.txlm", dir, dir,
                   dir) == 0);
    CHECK(pack_run("%s -o %s/e.txlm", dir, dir) == 0); /* the exported folder, packed like any checkpoint */
    /* a missing last folder level is created */
    CHECK(pack_run("--synthetic %s/cfg.json --export-safetensors %s/hf/m.safetensors -o %s/g.txlm", dir, dir, dir) == 0);
    CHECK(file_exists(tmp_path("hf/m.safetensors")) && file_exists(tmp_path("hf/config.json")) &&
          file_exists(tmp_path("hf/vocab.txt")));
    unlink(tmp_path("hf/m.safetensors")), unlink(tmp_path("hf/config.json")), unlink(tmp_path("hf/vocab.txt"));
    rmdir(tmp_path("hf")), unlink(tmp_path("g.txlm"));
    /* an export that fails leaves the model already at OUT as it was, and no file behind */
    write_file(tmp_path("old.txlm"), "old", 3);
    CHECK(pack_run("--synthetic %s/cfg.json --export-safetensors %s/no/such/m.safetensors -o %s/old.txlm", dir, dir,
                   dir) != 0);
    CHECK(file_exists(tmp_path("old.txlm")) && file_size(tmp_path("old.txlm")) == 3);
    CHECK(count_files(dir, "old.txlm.pack-") == 0);
    unlink(tmp_path("old.txlm"));
    CHECK(pack_run("--synthetic %s/cfg.json --dtype q8_0 -o %s/q1.txlm", dir, dir) == 0);
    CHECK(pack_run("%s --dtype q8_0 -o %s/q2.txlm", dir, dir) == 0);

    txlm_file *a = open_model(tmp_path("a.txlm")), *b = open_model(tmp_path("b.txlm")), *c = open_model(tmp_path("c.txlm"));
    txlm_file *d = open_model(tmp_path("d.txlm")), *e = open_model(tmp_path("e.txlm"));
    txlm_file *q1 = open_model(tmp_path("q1.txlm")), *q2 = open_model(tmp_path("q2.txlm"));
    if (!a || !b || !c || !d || !e || !q1 || !q2) return 1;
    int n = (int)txlm_file_tensor_count(a);
    CHECK(n == 6 + 2 * 13 + 3 + 2 + 2); /* 3 tables + 3 projections, layers, 3 biases, 2 out_projs, cluster w/b */
    CHECK(same_tensors(a, b) == n);
    CHECK(same_tensors(a, c) == 0); /* every tensor is random, so every one changes with the seed */
    CHECK(same_tensors(a, d) == n);
    CHECK(same_tensors(d, e) == n);
    CHECK(same_tensors(q1, q2) == n);
    CHECK(same_vocab(a, e) && !memcmp(txlm_file_hparams(a), txlm_file_hparams(e), sizeof(txlm_hparams)));
    CHECK(txlm_file_find(a, "crit.out_projs.1") && !txlm_file_find(a, "crit.out_projs.2"));
    CHECK(txlm_file_hparams(a)->layer_norm_epsilon == 1e-6f && txlm_file_hparams(a)->clamp_len == 12);

    const txlm_vocab *v = txlm_file_vocab(a);
    uint32_t len;
    const char *sym = txlm_vocab_sym(v, 332, &len);
    CHECK(v->eos_id == 0 && v->unk_id == 1 && len == 4 && !memcmp(sym, "w332", 4));

    /* 1/sqrt(fan-in) for matrices, gains near 1, biases near 0; shared r biases equal in every layer */
    double mean, sd;
    stats(a, "layers.1.dec_attn.qkv_net.weight", &mean, &sd);
    CHECK(fabs(mean) < 0.01 && fabs(sd - 1 / sqrt(64.0)) < 0.01);
    stats(a, "layers.0.pos_ff.CoreNet.3.weight", &mean, &sd);
    CHECK(fabs(sd - 1 / sqrt(80.0)) < 0.01);
    stats(a, "word_emb.emb_layers.2.weight", &mean, &sd);
    CHECK(fabs(sd - 1 / sqrt(24.0)) < 0.02);
    stats(a, "layers.0.pos_ff.layer_norm.weight", &mean, &sd);
    CHECK(fabs(mean - 1) < 0.02 && sd > 0.02 && sd < 0.08);
    stats(a, "crit.out_layers.0.bias", &mean, &sd);
    CHECK(fabs(mean) < 0.01 && sd > 0.01 && sd < 0.03);
    const txlm_tensor_info *r0 = txlm_file_find(a, "layers.0.dec_attn.r_w_bias"), *r1 = txlm_file_find(a, "layers.1.dec_attn.r_w_bias");
    CHECK(r0 && r1 && !memcmp(txlm_file_data(a, r0), txlm_file_data(a, r1), r0->nbytes));

    /* misuse: one line, exit 1, nothing written */
    CHECK(pack_run("--synthetic %s/cfg.json --seed x -o %s/f.txlm", dir, dir) == 1 && !file_exists(tmp_path("f.txlm")));
    CHECK(pack_run("--synthetic %s/nope.json -o %s/f.txlm", dir, dir) == 1 && !file_exists(tmp_path("f.txlm")));
    CHECK(pack_run("%s --export-safetensors %s/x.safetensors -o %s/f.txlm", dir, dir, dir) == 1);
    CHECK(pack_run("%s --synthetic %s/cfg.json -o %s/f.txlm", dir, dir, dir) == 1 && !file_exists(tmp_path("f.txlm")));
    CHECK(pack_run("--synthetic %s/cfg.json --export-safetensors %s/no/such/dir/m.safetensors -o %s/f.txlm", dir, dir, dir) == 1);
    CHECK(!file_exists(tmp_path("f.txlm")));

    txlm_file_close(a), txlm_file_close(b), txlm_file_close(c), txlm_file_close(d), txlm_file_close(e);
    txlm_file_close(q1), txlm_file_close(q2);
    tmp_cleanup();
    if (test_failures) fprintf(stderr, "%d checks failed\n", test_failures);
    return test_failures != 0;
}
