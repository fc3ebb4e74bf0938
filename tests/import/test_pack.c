/* The packer on the golden cases and on checkpoints that do not match their
 * config. A packed file is read back with the .txlm reader and compared,
 * tensor by tensor, with the source checkpoint. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm.h>

#include "checkpoint.h"
#include "pack.h"
#include "quantize.h"
#include "txlm_file.h"
#include "util.h"
#include "../common/model_diff.h"

static const char *golden;

typedef struct source {
    txlm_hparams h;
    txlm_vocab_buf v;
    txlm_checkpoint *ck;
} source;

static int load_source(const char *name, source *s)
{
    char path[1024];
    txlm_err err = {0};
    memset(s, 0, sizeof *s);
    snprintf(path, sizeof path, "%s/%s/config.json", golden, name);
    int rc = txlm_config_load_json(path, &s->h, &err);
    if (!rc) {
        snprintf(path, sizeof path, "%s/%s/vocab.txt", golden, name);
        rc = txlm_vocab_load_txt(path, &s->v, &err);
    }
    if (!rc) {
        snprintf(path, sizeof path, "%s/%s/model.safetensors", golden, name);
        rc = txlm_checkpoint_open(path, &s->ck, &err);
    }
    EXPECT_OK(rc, &err);
    return rc;
}

static void free_source(source *s)
{
    txlm_checkpoint_free(s->ck);
    txlm_vocab_buf_free(&s->v);
}

static int pack_to(const source *s, const txlm_checkpoint *ck, const txlm_vocab *v, const txlm_hparams *h,
                   const char *out, txlm_err *err)
{
    txlm_pack_options opt = {TXLM_DT_F32, NULL, NULL, TXLM_CLUSTERS_FORWARD, 0};
    memset(err, 0, sizeof *err);
    return txlm_pack_write(h ? h : &s->h, v ? v : &s->v.v, ck ? ck : s->ck, &opt, out, err);
}

static int nothing_written(const char *out)
{
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    return !file_exists(out) && !file_exists(tmp);
}

static const char *key_of(const char *name)
{
    if (!strncmp(name, "transformer.", 12)) return name + 12;
    return name;
}

/* The tensor holds exactly the source's values (as f32). */
static int same_values(const txlm_file *f, const txlm_tensor_info *t, const txlm_src_tensor *s)
{
    if (t->dtype != TXLM_DT_F32 || t->rank != s->rank || t->n_elems != s->n_elems) return 0;
    for (uint32_t i = 0; i < t->rank; i++)
        if (t->dims[i] != s->dims[i]) return 0;
    const uint8_t *d = txlm_file_data(f, t);
    if (s->dtype == TXLM_DT_F32) return memcmp(d, s->data, s->nbytes) == 0;
    for (uint64_t i = 0; i < s->n_elems; i++) {
        float x;
        memcpy(&x, d + 4 * i, 4);
        if (x != txlm_src_get_f32(s, i)) return 0;
    }
    return 1;
}

/* Every source tensor is in the file under its canonical name with the same
 * values (shared r biases once per layer); nothing else is. */
static void check_against_source(const txlm_file *f, const txlm_checkpoint *ck, const txlm_hparams *h)
{
    uint32_t expected = 0;
    for (uint32_t i = 0; i < ck->n_tensors; i++) {
        const txlm_src_tensor *s = &ck->tensors[i];
        const char *key = key_of(s->name);
        if (!strcmp(key, "pos_emb.inv_freq") && s->dtype != TXLM_DT_F32) {
            /* 16-bit frequencies are what such a checkpoint computes with: kept (widened) */
            const txlm_tensor_info *t = txlm_file_find(f, key);
            CHECK(t && same_values(f, t, s));
            expected++;
        } else if (!strcmp(key, "pos_emb.inv_freq")) {
            CHECK(txlm_file_find(f, key) == NULL && txlm_file_find(f, s->name) == NULL);
        } else if (!strcmp(key, "r_w_bias") || !strcmp(key, "r_r_bias")) {
            for (uint32_t n = 0; n < h->n_layer; n++) {
                char name[TXLM_MAX_NAME];
                snprintf(name, sizeof name, "layers.%u.dec_attn.%s", n, key);
                const txlm_tensor_info *t = txlm_file_find(f, name);
                CHECK(t && same_values(f, t, s));
                expected++;
            }
        } else {
            const txlm_tensor_info *t = txlm_file_find(f, key);
            if (!t) fprintf(stderr, "missing in the packed file: %s\n", key);
            CHECK(t && same_values(f, t, s));
            expected++;
        }
    }
    CHECK(txlm_file_tensor_count(f) == expected);
}

/* Packs, reads back, compares everything; returns the open file (or NULL). */
static txlm_file *pack_and_check(const source *s, const txlm_checkpoint *ck, const char *out)
{
    txlm_err err;
    EXPECT_OK(pack_to(s, ck, NULL, NULL, out, &err), &err);
    txlm_file *f = NULL;
    EXPECT_OK(txlm_file_open(out, 0, &f, &err), &err);
    if (!f) return NULL;
    uint32_t sym = 0;
    CHECK(!hparams_diff(txlm_file_hparams(f), &s->h));
    CHECK(!vocab_diff(txlm_file_vocab(f), &s->v.v, &sym));
    check_against_source(f, ck ? ck : s->ck, &s->h);
    return f;
}

static void test_golden_case(const char *name, uint32_t n_tensors, const char *const *absent, const char *const *present)
{
    source s;
    if (load_source(name, &s)) return;
    char out[64];
    snprintf(out, sizeof out, "%s.txlm", name);
    txlm_file *f = pack_and_check(&s, NULL, tmp_path(out));
    if (f) {
        CHECK(txlm_file_tensor_count(f) == n_tensors);
        for (int i = 0; absent[i]; i++) {
            if (txlm_file_find(f, absent[i])) fprintf(stderr, "%s: unexpected %s\n", name, absent[i]);
            CHECK(txlm_file_find(f, absent[i]) == NULL);
        }
        for (int i = 0; present[i]; i++) {
            if (!txlm_file_find(f, present[i])) fprintf(stderr, "%s: lacks %s\n", name, present[i]);
            CHECK(txlm_file_find(f, present[i]) != NULL);
        }
        /* File order: embedding first, then layers, then the output layer. */
        CHECK(!strncmp(txlm_file_tensor(f, 0)->name, "word_emb.", 9));
        CHECK(!strncmp(txlm_file_tensor(f, n_tensors - 1)->name, "crit.", 5));
        txlm_file_close(f);
    }
    free_source(&s);
}

static void test_golden(void)
{
    static const char *const aw_absent[] = {"crit.out_layers.0.weight", "crit.out_layers.1.weight",
                                            "crit.out_layers.2.weight", "crit.out_projs.1", "crit.out_projs.2",
                                            "pos_emb.inv_freq", NULL};
    static const char *const aw_present[] = {"word_emb.emb_projs.0", "word_emb.emb_projs.2", "crit.out_projs.0",
                                             "crit.cluster_weight", "layers.2.dec_attn.r_r_bias", NULL};
    test_golden_case("adaptive_word", 51, aw_absent, aw_present);
    test_golden_case("decode_steps", 51, aw_absent, aw_present);

    static const char *const cp_absent[] = {"crit.out_layers.0.weight", "word_emb.emb_projs.0", "crit.out_projs.0",
                                            "r_w_bias", "crit.cluster_weight", NULL};
    static const char *const cp_present[] = {"layers.0.dec_attn.r_w_bias", "layers.1.dec_attn.r_r_bias",
                                             "crit.out_layers.0.bias", NULL};
    test_golden_case("char_preln", 28, cp_absent, cp_present);

    static const char *const pc_absent[] = {"crit.out_layers.0.weight", "crit.out_projs.1", "crit.out_projs.2",
                                            "word_emb.emb_projs.1", "crit.out_layers.1.bias", NULL};
    static const char *const pc_present[] = {"word_emb.emb_projs.0", "crit.out_projs.0", "crit.cluster_bias", NULL};
    test_golden_case("proj_clusters", 45, pc_absent, pc_present);
}

/* ---- variants of a golden checkpoint ---------------------------------- */

static void image_of(const txlm_checkpoint *ck, st_image *im)
{
    static const char *const dt[] = {"F32", "F16", "BF16"};
    memset(im, 0, sizeof *im);
    for (uint32_t i = 0; i < ck->n_tensors; i++) {
        const txlm_src_tensor *t = &ck->tensors[i];
        st_add(im, t->name, dt[t->dtype], (int)t->rank, t->dims, t->data, t->nbytes);
    }
}

/* Serialises im to a file and opens it as a checkpoint. */
static txlm_checkpoint *open_image(const st_image *im, const char *file)
{
    uint64_t size;
    uint8_t *bytes = st_serialize(im, &size);
    const char *path = tmp_path(file);
    write_file(path, bytes, size);
    free(bytes);
    txlm_checkpoint *ck = NULL;
    txlm_err err = {0};
    EXPECT_OK(txlm_checkpoint_open(path, &ck, &err), &err);
    return ck;
}

static void test_authors_naming(void)
{
    source s;
    if (load_source("char_preln", &s)) return;
    st_image im;
    image_of(s.ck, &im);
    for (int i = 0; i < im.n; i++)
        if (!strncmp(im.e[i].name, "transformer.", 12)) memmove(im.e[i].name, im.e[i].name + 12, strlen(im.e[i].name) - 11);
    CHECK(st_find(&im, "r_w_bias") && st_find(&im, "layers.0.dec_attn.qkv_net.weight"));
    txlm_checkpoint *ck = open_image(&im, "authors.safetensors");
    if (ck) {
        txlm_file *f = pack_and_check(&s, ck, tmp_path("authors.txlm"));
        if (f) txlm_file_close(f);
        /* Same weights, other naming: the same file, byte for byte. */
        txlm_err err;
        EXPECT_OK(pack_to(&s, NULL, NULL, NULL, tmp_path("hf.txlm"), &err), &err);
        size_t la = 0, lb = 0;
        char *a = read_file(tmp_path("authors.txlm"), &la), *b = read_file(tmp_path("hf.txlm"), &lb);
        CHECK(a && b && la == lb && memcmp(a, b, la) == 0);
        free(a);
        free(b);
        txlm_checkpoint_free(ck);
    }

    /* The shared biases also listed under every layer (as torch.save
     * writes a module attribute shared by several modules): the same file
     * when the copies are equal, refused when one differs. */
    const st_entry w = *st_find(&im, "r_w_bias"), r = *st_find(&im, "r_r_bias");
    for (uint32_t n = 0; n < s.h.n_layer; n++) {
        char name[96];
        snprintf(name, sizeof name, "layers.%u.dec_attn.r_w_bias", n);
        st_add(&im, name, w.dtype, w.rank, w.dims, w.data, w.len);
        snprintf(name, sizeof name, "layers.%u.dec_attn.r_r_bias", n);
        st_add(&im, name, r.dtype, r.rank, r.dims, r.data, r.len);
    }
    ck = open_image(&im, "authors_dup.safetensors");
    if (ck) {
        txlm_err err;
        EXPECT_OK(pack_to(&s, ck, NULL, NULL, tmp_path("authors_dup.txlm"), &err), &err);
        size_t la = 0, lb = 0;
        char *a = read_file(tmp_path("authors_dup.txlm"), &la), *b = read_file(tmp_path("hf.txlm"), &lb);
        CHECK(a && b && la == lb && memcmp(a, b, la) == 0);
        free(a);
        free(b);
        txlm_checkpoint_free(ck);
    }
    st_entry *d = st_find(&im, "layers.1.dec_attn.r_r_bias");
    float *changed = malloc(d->len);
    memcpy(changed, d->data, d->len);
    changed[3] += 0.5f;
    d->data = changed;
    ck = open_image(&im, "authors_dup_bad.safetensors");
    if (ck) {
        txlm_err err;
        const char *out = tmp_path("authors_dup_bad.txlm");
        EXPECT_ERR(pack_to(&s, ck, NULL, NULL, out, &err), &err, TXLM_ERR_FORMAT, "'layers.1.dec_attn.r_r_bias'",
                   "'r_r_bias'", "element 3");
        CHECK(nothing_written(out));
        txlm_checkpoint_free(ck);
    }
    free(changed);
    st_free(&im);
    free_source(&s);
}

/* The authors' naming with per-layer biases (untie_r): no prefix at all. */
static void test_authors_untied(void)
{
    source s;
    if (load_source("adaptive_word", &s)) return;
    CHECK(s.h.untie_r);
    st_image im;
    image_of(s.ck, &im);
    for (int i = 0; i < im.n; i++)
        if (!strncmp(im.e[i].name, "transformer.", 12)) memmove(im.e[i].name, im.e[i].name + 12, strlen(im.e[i].name) - 11);
    CHECK(st_find(&im, "layers.2.dec_attn.r_w_bias") && !st_find(&im, "r_w_bias"));
    txlm_checkpoint *ck = open_image(&im, "authors_untied.safetensors");
    if (ck) {
        txlm_err err;
        EXPECT_OK(pack_to(&s, ck, NULL, NULL, tmp_path("authors_untied.txlm"), &err), &err);
        EXPECT_OK(pack_to(&s, NULL, NULL, NULL, tmp_path("hf_untied.txlm"), &err), &err);
        size_t la = 0, lb = 0;
        char *a = read_file(tmp_path("authors_untied.txlm"), &la), *b = read_file(tmp_path("hf_untied.txlm"), &lb);
        CHECK(a && b && la == lb && memcmp(a, b, la) == 0);
        free(a);
        free(b);
        txlm_checkpoint_free(ck);
    }
    st_free(&im);
    free_source(&s);
}

/* Half-precision sources are widened to f32, shared r biases included. */
static void test_half_sources(void)
{
    source s;
    if (load_source("char_preln", &s)) return;
    st_image im;
    image_of(s.ck, &im);
    uint8_t *half = malloc(1 << 20), *p = half;
    for (int i = 0; i < im.n; i++) {
        st_entry *e = &im.e[i];
        uint64_t n = e->len / 4;
        if (!strcmp(e->name, "transformer.layers.0.dec_attn.layer_norm.weight")) {
            /* 1 + k/64: exact in f16. */
            for (uint64_t k = 0; k < n; k++) {
                uint16_t b = (uint16_t)(0x3c00 + 16 * k);
                p[2 * k] = (uint8_t)b, p[2 * k + 1] = (uint8_t)(b >> 8);
            }
            strcpy(e->dtype, "F16");
        } else {
            for (uint64_t k = 0; k < n; k++) memcpy(p + 2 * k, (const uint8_t *)e->data + 4 * k + 2, 2);
            strcpy(e->dtype, "BF16");
        }
        e->data = p;
        e->len = 2 * n;
        p += 2 * n;
    }
    txlm_checkpoint *ck = open_image(&im, "half.safetensors");
    if (ck) {
        txlm_file *f = pack_and_check(&s, ck, tmp_path("half.txlm"));
        if (f) {
            const txlm_tensor_info *t = txlm_file_find(f, "layers.0.dec_attn.layer_norm.weight");
            CHECK(t && t->dtype == TXLM_DT_F32 && t->n_elems == 48);
            if (t) {
                float v[48];
                memcpy(v, txlm_file_data(f, t), sizeof v);
                for (int k = 0; k < 48; k++) CHECK(v[k] == 1.0f + (float)k / 64.0f);
            }
            const txlm_tensor_info *r0 = txlm_file_find(f, "layers.0.dec_attn.r_w_bias");
            const txlm_tensor_info *r1 = txlm_file_find(f, "layers.1.dec_attn.r_w_bias");
            CHECK(r0 && r1 && r0->nbytes == 3 * 16 * 4 && r1->nbytes == r0->nbytes);
            if (r0 && r1) CHECK(!memcmp(txlm_file_data(f, r0), txlm_file_data(f, r1), r0->nbytes));
            txlm_file_close(f);
        }
        txlm_checkpoint_free(ck);
    }
    free(half);
    st_free(&im);
    free_source(&s);
}

/* torch.save files carry tied tensors under both names: dropped when equal,
 * refused when they differ. */
static void test_tied_copies(void)
{
    source s;
    if (load_source("adaptive_word", &s)) return;
    st_image im;
    image_of(s.ck, &im);
    for (int c = 0; c < 3; c++) {
        char from[96], to[96];
        snprintf(from, sizeof from, "transformer.word_emb.emb_layers.%d.weight", c);
        snprintf(to, sizeof to, "crit.out_layers.%d.weight", c);
        st_entry e = *st_find(&im, from);
        st_add(&im, to, e.dtype, e.rank, e.dims, e.data, e.len);
        if (c == 0) continue;
        snprintf(from, sizeof from, "transformer.word_emb.emb_projs.%d", c);
        snprintf(to, sizeof to, "crit.out_projs.%d", c);
        e = *st_find(&im, from);
        st_add(&im, to, e.dtype, e.rank, e.dims, e.data, e.len);
    }
    txlm_checkpoint *ck = open_image(&im, "tied.safetensors");
    txlm_err err;
    if (ck) {
        const char *out = tmp_path("tied.txlm");
        EXPECT_OK(pack_to(&s, ck, NULL, NULL, out, &err), &err);
        txlm_file *f = NULL;
        EXPECT_OK(txlm_file_open(out, 0, &f, &err), &err);
        if (f) {
            CHECK(txlm_file_tensor_count(f) == 51);
            CHECK(!txlm_file_find(f, "crit.out_layers.1.weight") && !txlm_file_find(f, "crit.out_projs.2"));
            txlm_file_close(f);
        }
        txlm_checkpoint_free(ck);
    }

    st_entry *e = st_find(&im, "crit.out_layers.1.weight");
    float *copy = malloc(e->len);
    memcpy(copy, e->data, e->len);
    copy[77] += 1.0f;
    e->data = copy;
    ck = open_image(&im, "tied_bad.safetensors");
    if (ck) {
        const char *out = tmp_path("tied_bad.txlm");
        EXPECT_ERR(pack_to(&s, ck, NULL, NULL, out, &err), &err, TXLM_ERR_FORMAT, "'crit.out_layers.1.weight'",
                   "'transformer.word_emb.emb_layers.1.weight'", "element 77");
        CHECK(nothing_written(out));
        txlm_checkpoint_free(ck);
    }
    free(copy);
    st_free(&im);
    free_source(&s);
}

/* One modification of the adaptive_word checkpoint that packing must refuse. */
static void expect_refused(const source *s, st_image *im, const char *what, int code, const char *m1, const char *m2)
{
    char file[64];
    snprintf(file, sizeof file, "%s.safetensors", what);
    txlm_checkpoint *ck = open_image(im, file);
    if (!ck) return;
    snprintf(file, sizeof file, "%s.txlm", what);
    const char *out = tmp_path(file);
    txlm_err err;
    EXPECT_ERR(pack_to(s, ck, NULL, NULL, out, &err), &err, code, m1, m2);
    if (!nothing_written(out)) fprintf(stderr, "%s: output left behind\n", what);
    CHECK(nothing_written(out));
    txlm_checkpoint_free(ck);
}

static void test_mismatches(void)
{
    source s;
    if (load_source("adaptive_word", &s)) return;
    st_image im;

    image_of(s.ck, &im);
    st_remove(&im, "transformer.layers.1.pos_ff.CoreNet.3.bias");
    expect_refused(&s, &im, "missing", TXLM_ERR_FORMAT, "lacks tensor 'transformer.layers.1.pos_ff.CoreNet.3.bias'",
                   "[64]");
    st_free(&im);

    image_of(s.ck, &im);
    st_remove(&im, "crit.cluster_bias");
    expect_refused(&s, &im, "missing_crit", TXLM_ERR_FORMAT, "lacks tensor 'crit.cluster_bias'", "[2]");
    st_free(&im);

    image_of(s.ck, &im);
    st_entry *e = st_find(&im, "transformer.layers.2.dec_attn.qkv_net.weight");
    e->dims[0] = 64, e->dims[1] = 192;
    expect_refused(&s, &im, "shape", TXLM_ERR_FORMAT, "'transformer.layers.2.dec_attn.qkv_net.weight'",
                   "shape [64, 192], expected [192, 64]");
    st_free(&im);

    image_of(s.ck, &im);
    e = st_find(&im, "transformer.word_emb.emb_layers.1.weight");
    e->rank = 1, e->dims[0] = 300 * 32;
    expect_refused(&s, &im, "rank", TXLM_ERR_FORMAT, "'transformer.word_emb.emb_layers.1.weight'",
                   "shape [9600], expected [300, 32]");
    st_free(&im);

    float extra[4] = {0};
    image_of(s.ck, &im);
    st_add(&im, "transformer.extra.weight", "F32", 1, (uint64_t[]){4}, extra, sizeof extra);
    expect_refused(&s, &im, "unknown", TXLM_ERR_FORMAT, "'transformer.extra.weight'", "not part of");
    st_free(&im);

    /* Shared biases in a model configured with per-layer ones. */
    image_of(s.ck, &im);
    const void *bias = st_find(&im, "transformer.layers.0.dec_attn.r_w_bias")->data;
    st_add(&im, "transformer.r_w_bias", "F32", 2, (uint64_t[]){4, 16}, bias, 256);
    expect_refused(&s, &im, "shared_r", TXLM_ERR_FORMAT, "'transformer.r_w_bias'", "not part of");
    st_free(&im);

    /* A tensor under both naming conventions. */
    image_of(s.ck, &im);
    st_entry o_net = *st_find(&im, "transformer.layers.0.dec_attn.o_net.weight"); /* st_add may move entries */
    st_add(&im, "layers.0.dec_attn.o_net.weight", "F32", 2, o_net.dims, o_net.data, o_net.len);
    expect_refused(&s, &im, "both", TXLM_ERR_FORMAT, "'transformer.layers.0.dec_attn.o_net.weight'",
                   "'layers.0.dec_attn.o_net.weight'");
    st_free(&im);

    /* Non-standard sinusoid frequencies would silently change the model. */
    image_of(s.ck, &im);
    e = st_find(&im, "transformer.pos_emb.inv_freq");
    float freq[32];
    memcpy(freq, e->data, sizeof freq);
    freq[5] *= 1.001f;
    e->data = freq;
    expect_refused(&s, &im, "inv_freq", TXLM_ERR_UNSUPPORTED, "'transformer.pos_emb.inv_freq'", "[5]");
    st_free(&im);

    /* untie_r false expects shared biases. */
    {
        txlm_hparams h = s.h;
        h.untie_r = 0;
        txlm_err err;
        const char *out = tmp_path("untie.txlm");
        EXPECT_ERR(pack_to(&s, NULL, NULL, &h, out, &err), &err, TXLM_ERR_FORMAT, "lacks tensor 'transformer.r_w_bias'",
                   "[4, 16]");
        CHECK(nothing_written(out));
        /* tie_weight false needs the output tables. */
        h = s.h;
        h.tie_weight = 0;
        EXPECT_ERR(pack_to(&s, NULL, NULL, &h, out, &err), &err, TXLM_ERR_FORMAT, "lacks tensor 'crit.out_layers.0.weight'",
                   "[200, 64]");
        CHECK(nothing_written(out));
        /* A vocabulary one symbol short. */
        txlm_vocab v = s.v.v;
        v.n--;
        v.blob_size = v.offsets[v.n];
        EXPECT_ERR(pack_to(&s, NULL, &v, NULL, out, &err), &err, TXLM_ERR_FORMAT, "999 symbols", "n_token = 1000");
        CHECK(nothing_written(out));
        /* An output type the kernels do not read, and hyper-parameters that do not validate. */
        txlm_pack_options opt = {TXLM_DT_BF16, NULL, NULL, TXLM_CLUSTERS_FORWARD, 0};
        EXPECT_ERR(txlm_pack_write(&s.h, &s.v.v, s.ck, &opt, out, &err), &err, TXLM_ERR_UNSUPPORTED, "bf16");
        CHECK(nothing_written(out));
        h = s.h;
        h.n_layer = 0;
        EXPECT_ERR(pack_to(&s, NULL, NULL, &h, out, &err), &err, TXLM_ERR_INVALID_ARGUMENT, "n_layer");
        CHECK(nothing_written(out));
        /* A folder that does not exist. */
        EXPECT_ERR(pack_to(&s, NULL, NULL, NULL, "/nonexistent-dir/x.txlm", &err), &err, TXLM_ERR_IO, "nonexistent-dir");
        CHECK(nothing_written("/nonexistent-dir/x.txlm"));
    }
    free_source(&s);
}

/* Smaller stored types: weight matrices converted (when their rows hold whole
 * blocks), everything else f32, values within the type's rounding. */
static void check_stored_dtype(const char *case_name, uint32_t dtype, double tol)
{
    source s;
    if (load_source(case_name, &s)) return;
    char file[64];
    snprintf(file, sizeof file, "%s_%s.txlm", case_name, txlm_dtype_get(dtype)->name);
    const char *out = tmp_path(file);
    txlm_pack_options opt = {dtype, NULL, NULL, TXLM_CLUSTERS_FORWARD, 0};
    txlm_err err = {0};
    EXPECT_OK(txlm_pack_write(&s.h, &s.v.v, s.ck, &opt, out, &err), &err);
    txlm_file *f = NULL;
    EXPECT_OK(txlm_file_open(out, 0, &f, &err), &err);
    uint32_t converted = 0;
    for (uint32_t i = 0; f && i < txlm_file_tensor_count(f); i++) {
        const txlm_tensor_info *t = txlm_file_tensor(f, i);
        int matrix = t->rank == 2 && !strstr(t->name, "_bias") && strcmp(t->name, "crit.cluster_weight") != 0;
        int whole = t->rank == 2 && t->dims[1] % txlm_dtype_get(dtype)->block_elems == 0;
        uint32_t want = matrix && whole ? dtype : TXLM_DT_F32;
        if (t->dtype != want) fprintf(stderr, "%s: %s stored as %u, expected %u\n", file, t->name, t->dtype, want);
        CHECK(t->dtype == want);
        if (t->dtype != want || want == TXLM_DT_F32) continue;
        converted++;
        const txlm_src_tensor *src = txlm_checkpoint_find(s.ck, t->name);
        if (!src) {
            char hf[TXLM_MAX_NAME + 16];
            snprintf(hf, sizeof hf, "transformer.%s", t->name);
            src = txlm_checkpoint_find(s.ck, hf);
        }
        CHECK(src && src->n_elems == t->n_elems);
        if (!src || src->n_elems != t->n_elems) continue;
        float *back = malloc(t->n_elems * sizeof *back);
        txlm_dequantize(t->dtype, txlm_file_data(f, t), t->n_elems, back);
        /* Error relative to the largest magnitude of each 32-element block. */
        int bad = 0;
        for (uint64_t b = 0; b < t->n_elems; b += 32) {
            float big = 0;
            for (uint64_t k = b; k < b + 32 && k < t->n_elems; k++) big = fmaxf(big, fabsf(txlm_src_get_f32(src, k)));
            for (uint64_t k = b; k < b + 32 && k < t->n_elems; k++)
                if (fabs((double)back[k] - txlm_src_get_f32(src, k)) > tol * big + 1e-12) bad++;
        }
        if (bad) fprintf(stderr, "%s: %s: %d values off\n", file, t->name, bad);
        CHECK(bad == 0);
        free(back);
    }
    CHECK(converted > 0);
    if (f) txlm_file_close(f);
    free_source(&s);
}

static void test_stored_dtypes(void)
{
    check_stored_dtype("adaptive_word", TXLM_DT_F16, 1e-3);
    check_stored_dtype("adaptive_word", TXLM_DT_Q8_0, 0.5 / 127 + 1e-3);
    /* q4_0 maps the largest magnitude to -8, so +max clamps to 7: one step (1/8). */
    check_stored_dtype("adaptive_word", TXLM_DT_Q4_0, 1.0 / 8 + 1e-3);
    check_stored_dtype("char_preln", TXLM_DT_Q8_0, 0.5 / 127 + 1e-3);
}

/* torch.save files hold the same weights, tied copies included: packing
 * them gives the same file as the safetensors. */
static void test_torch_sources(void)
{
    static const char *const files[][2] = {
        {"adaptive_word", "pytorch_model.bin"},
        {"adaptive_word", "pytorch_model_legacy.bin"},
        {"char_preln", "pytorch_model.bin"},
        {"proj_clusters", "pytorch_model.bin"},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        source s;
        if (load_source(files[i][0], &s)) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s/%s", golden, files[i][0], files[i][1]);
        txlm_checkpoint *ck = NULL;
        txlm_err err = {0};
        EXPECT_OK(txlm_checkpoint_open(path, &ck, &err), &err);
        if (ck) {
            char a[1024], b[1024];
            snprintf(a, sizeof a, "%s", tmp_path("torch.txlm"));
            snprintf(b, sizeof b, "%s", tmp_path("st.txlm"));
            EXPECT_OK(pack_to(&s, ck, NULL, NULL, a, &err), &err);
            EXPECT_OK(pack_to(&s, NULL, NULL, NULL, b, &err), &err);
            size_t la = 0, lb = 0;
            char *x = read_file(a, &la), *y = read_file(b, &lb);
            if (!(x && y && la == lb && !memcmp(x, y, la))) fprintf(stderr, "%s: packs differently\n", path);
            CHECK(x && y && la == lb && memcmp(x, y, la) == 0);
            free(x);
            free(y);
            txlm_checkpoint_free(ck);
        }
        free_source(&s);
    }
}

static uint64_t progress_done, progress_total;
static int progress_calls;

/* The tail-cluster rows stored forward whatever the source's order, and
 * the order told from a state dict's names. */
static void test_cluster_order(void)
{
    source s;
    if (load_source("adaptive_word", &s)) return;
    CHECK(s.h.n_cutoffs == 2);
    txlm_err err = {0};
    txlm_pack_options opt = {TXLM_DT_F32, NULL, NULL, TXLM_CLUSTERS_REVERSE, 0};
    EXPECT_OK(pack_to(&s, NULL, NULL, NULL, tmp_path("fwd.txlm"), &err), &err);
    EXPECT_OK(txlm_pack_write(&s.h, &s.v.v, s.ck, &opt, tmp_path("rev.txlm"), &err), &err);
    txlm_file *f = NULL, *r = NULL;
    EXPECT_OK(txlm_file_open(tmp_path("fwd.txlm"), 0, &f, &err), &err);
    EXPECT_OK(txlm_file_open(tmp_path("rev.txlm"), 0, &r, &err), &err);
    for (uint32_t i = 0; f && r && i < txlm_file_tensor_count(f); i++) {
        const txlm_tensor_info *a = txlm_file_tensor(f, i), *b = txlm_file_find(r, a->name);
        CHECK(b && a->nbytes == b->nbytes);
        if (!b || a->nbytes != b->nbytes) continue;
        const uint8_t *x = txlm_file_data(f, a), *y = txlm_file_data(r, b);
        if (strncmp(a->name, "crit.cluster_", 13)) {
            CHECK(!memcmp(x, y, a->nbytes));
            continue;
        }
        uint64_t rows = a->dims[0], row = a->nbytes / rows;
        for (uint64_t k = 0; k < rows; k++) CHECK(!memcmp(x + k * row, y + (rows - 1 - k) * row, row));
        CHECK(memcmp(x, y, row) != 0); /* the two rows differ, so reversing shows */
    }
    txlm_file_close(f);
    txlm_file_close(r);

    char why[320];
    CHECK(txlm_cluster_order_of_names(s.ck, why, sizeof why) == TXLM_CLUSTERS_FORWARD && strstr(why, "transformer."));
    st_image im;
    image_of(s.ck, &im);
    for (int i = 0; i < im.n; i++)
        if (!strncmp(im.e[i].name, "transformer.", 12)) memmove(im.e[i].name, im.e[i].name + 12, strlen(im.e[i].name) - 11);
    txlm_checkpoint *ck = open_image(&im, "order1.safetensors");
    /* no prefix, per-layer biases: an HF model without its prefix */
    CHECK(ck && txlm_cluster_order_of_names(ck, why, sizeof why) == TXLM_CLUSTERS_FORWARD && strstr(why, "per-layer"));
    txlm_checkpoint_free(ck);
    const st_entry *b0 = st_find(&im, "layers.0.dec_attn.r_w_bias");
    st_add(&im, "r_w_bias", b0->dtype, b0->rank, b0->dims, b0->data, b0->len);
    ck = open_image(&im, "order2.safetensors");
    CHECK(ck && txlm_cluster_order_of_names(ck, why, sizeof why) == TXLM_CLUSTERS_REVERSE && strstr(why, "authors'"));
    txlm_checkpoint_free(ck);
    st_entry *bias = st_find(&im, "crit.out_layers.0.bias");
    snprintf(bias->name, sizeof bias->name, "crit.out_layers_biases.0");
    st_remove(&im, "r_w_bias");
    ck = open_image(&im, "order3.safetensors");
    CHECK(ck && txlm_cluster_order_of_names(ck, why, sizeof why) == TXLM_CLUSTERS_REVERSE && strstr(why, "NVIDIA"));
    txlm_checkpoint_free(ck);
    st_free(&im);
    free_source(&s);
}

/* NVIDIA's same_length rule: HPRM 1.1 only when set, so other files stay 1.0 byte for byte. */
static void test_same_length_rule(void)
{
    source s;
    if (load_source("char_preln", &s)) return;
    txlm_err err = {0};
    txlm_hparams h = s.h;
    h.same_length_rule = TXLM_SAME_LENGTH_NVIDIA;
    EXPECT_OK(pack_to(&s, NULL, NULL, &h, tmp_path("nv.txlm"), &err), &err);
    EXPECT_OK(pack_to(&s, NULL, NULL, NULL, tmp_path("plain.txlm"), &err), &err);
    txlm_file *f = NULL;
    EXPECT_OK(txlm_file_open(tmp_path("nv.txlm"), 0, &f, &err), &err);
    CHECK(f && txlm_file_hparams(f)->same_length_rule == TXLM_SAME_LENGTH_NVIDIA);
    txlm_file_close(f);
    EXPECT_OK(txlm_file_open(tmp_path("plain.txlm"), 0, &f, &err), &err);
    CHECK(f && txlm_file_hparams(f)->same_length_rule == TXLM_SAME_LENGTH_AUTHORS);
    txlm_file_close(f);
    size_t la = 0, lb = 0;
    uint8_t *a = (uint8_t *)read_file(tmp_path("nv.txlm"), &la), *b = (uint8_t *)read_file(tmp_path("plain.txlm"), &lb);
    CHECK(a && b && a[10] == 1 && b[10] == 0); /* minor version */
    free(a), free(b);
    h.same_length_rule = 2;
    EXPECT_ERR(pack_to(&s, NULL, NULL, &h, tmp_path("bad.txlm"), &err), &err, TXLM_ERR_INVALID_ARGUMENT, "same_length_rule 2");
    free_source(&s);
}

/* zero_memory (the authors' TensorFlow models): HPRM 1.2 only when set, the rule kept beside it. */
static void test_zero_memory(void)
{
    source s;
    if (load_source("char_preln", &s)) return;
    txlm_err err = {0};
    txlm_hparams h = s.h;
    h.zero_memory = 1;
    EXPECT_OK(pack_to(&s, NULL, NULL, &h, tmp_path("zero.txlm"), &err), &err);
    h.same_length_rule = TXLM_SAME_LENGTH_NVIDIA;
    EXPECT_OK(pack_to(&s, NULL, NULL, &h, tmp_path("zero_nv.txlm"), &err), &err);
    txlm_file *f = NULL;
    EXPECT_OK(txlm_file_open(tmp_path("zero.txlm"), 0, &f, &err), &err);
    CHECK(f && txlm_file_hparams(f)->zero_memory == 1 && txlm_file_hparams(f)->same_length_rule == 0);
    CHECK(f && txlm_file_version_minor(f) == 2);
    txlm_file_close(f);
    EXPECT_OK(txlm_file_open(tmp_path("zero_nv.txlm"), 0, &f, &err), &err);
    CHECK(f && txlm_file_hparams(f)->zero_memory == 1 && txlm_file_hparams(f)->same_length_rule == TXLM_SAME_LENGTH_NVIDIA);
    txlm_file_close(f);
    h.zero_memory = 2;
    EXPECT_ERR(pack_to(&s, NULL, NULL, &h, tmp_path("bad.txlm"), &err), &err, TXLM_ERR_INVALID_ARGUMENT, "zero_memory 2");
    free_source(&s);
}

static void on_progress(void *user, uint64_t done, uint64_t total)
{
    (void)user;
    CHECK(done >= progress_done && done <= total);
    progress_done = done, progress_total = total, progress_calls++;
}

static void test_progress(void)
{
    source s;
    if (load_source("char_preln", &s)) return;
    txlm_pack_options opt = {TXLM_DT_F32, on_progress, NULL, TXLM_CLUSTERS_FORWARD, 0};
    txlm_err err = {0};
    EXPECT_OK(txlm_pack_write(&s.h, &s.v.v, s.ck, &opt, tmp_path("progress.txlm"), &err), &err);
    CHECK(progress_calls > 0 && progress_done == progress_total && progress_total > 0);
    free_source(&s);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
        return 2;
    }
    golden = argv[1];
    test_golden();
    test_authors_naming();
    test_authors_untied();
    test_half_sources();
    test_tied_copies();
    test_mismatches();
    test_stored_dtypes();
    test_torch_sources();
    test_progress();
    test_cluster_order();
    test_same_length_rule();
    test_zero_memory();
    tmp_cleanup();
    if (test_failures) fprintf(stderr, "%d check(s) failed\n", test_failures);
    return test_failures ? 1 : 0;
}
