/* torch.save checkpoints and pickled vocabularies: the golden forms pack to
 * identical files, small checkpoints built here read back exactly (dtypes,
 * strided views, shared storages, zip64), and every malformed variant is
 * refused with a message naming the problem. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm.h>

#include "checkpoint.h"
#include "pack.h"
#include "pickle.h"
#include "quantize.h"
#include "torch.h"
#include "torch_build.h"
#include "txlm_file.h"
#include "util.h"
#include "zip.h"

static const char *golden;

static const char *golden_path(const char *file)
{
    static char p[1024];
    snprintf(p, sizeof p, "%s/adaptive_word/%s", golden, file);
    return p;
}

static txlm_checkpoint *open_ok(const char *path)
{
    txlm_checkpoint *ck = NULL;
    txlm_err err = {0};
    EXPECT_OK(txlm_checkpoint_open(path, &ck, &err), &err);
    return ck;
}

static void expect_open_fails(const char *what, const void *bytes, size_t len, int code, const char *m1, const char *m2)
{
    const char *path = tmp_path("bad.bin");
    write_file(path, bytes, len);
    txlm_checkpoint *ck = NULL;
    txlm_err err = {0};
    int rc = txlm_checkpoint_open(path, &ck, &err);
    if (rc != code || (m1 && !strstr(err.msg, m1)) || (m2 && !strstr(err.msg, m2)))
        fprintf(stderr, "%s: got %d \"%s\"\n", what, rc, err.msg);
    if (m2) EXPECT_ERR(rc, &err, code, m1, m2);
    else EXPECT_ERR(rc, &err, code, m1);
    CHECK(ck == NULL);
    txlm_checkpoint_free(ck);
}

/* ---- every weights form x every vocabulary form ---------------------- */

static int pack_forms(const char *weights, const char *vocab, const char *out)
{
    txlm_hparams h;
    txlm_vocab_buf v;
    txlm_checkpoint *ck = NULL;
    txlm_err err = {0};
    memset(&v, 0, sizeof v);
    int rc = txlm_config_load_json(golden_path("config.json"), &h, &err);
    const char *vp = golden_path(vocab);
    char vpath[1024];
    snprintf(vpath, sizeof vpath, "%s", vp);
    unsigned char head[16] = {0};
    FILE *f = fopen(vpath, "rb");
    size_t n = f ? fread(head, 1, sizeof head, f) : 0;
    if (f) fclose(f);
    if (!rc) rc = txlm_vocab_sniff_pickle(head, n) ? txlm_vocab_load_pickle(vpath, &v, &err) : txlm_vocab_load_txt(vpath, &v, &err);
    if (!rc) rc = txlm_checkpoint_open(golden_path(weights), &ck, &err);
    txlm_pack_options opt = {TXLM_DT_F32, NULL, NULL, TXLM_CLUSTERS_FORWARD, 0};
    if (!rc) rc = txlm_pack_write(&h, &v.v, ck, &opt, out, &err);
    EXPECT_OK(rc, &err);
    txlm_checkpoint_free(ck);
    txlm_vocab_buf_free(&v);
    return rc;
}

/* Tensor payloads and vocabularies equal, byte for byte. */
static void compare_packed(const char *a, const char *b, const char *what)
{
    txlm_file *fa = NULL, *fb = NULL;
    txlm_err err = {0};
    EXPECT_OK(txlm_file_open(a, 0, &fa, &err), &err);
    EXPECT_OK(txlm_file_open(b, 0, &fb, &err), &err);
    if (!fa || !fb) goto out;
    CHECK(txlm_file_tensor_count(fa) == txlm_file_tensor_count(fb));
    for (uint32_t i = 0; i < txlm_file_tensor_count(fa) && i < txlm_file_tensor_count(fb); i++) {
        const txlm_tensor_info *x = txlm_file_tensor(fa, i), *y = txlm_file_tensor(fb, i);
        int same = !strcmp(x->name, y->name) && x->dtype == y->dtype && x->nbytes == y->nbytes &&
                   !memcmp(txlm_file_data(fa, x), txlm_file_data(fb, y), x->nbytes);
        if (!same) fprintf(stderr, "%s: tensor %s differs\n", what, x->name);
        CHECK(same);
    }
    const txlm_vocab *va = txlm_file_vocab(fa), *vb = txlm_file_vocab(fb);
    int same = va->n == vb->n && va->kind == vb->kind && va->flags == vb->flags && va->eos_id == vb->eos_id &&
               va->unk_id == vb->unk_id && va->blob_size == vb->blob_size &&
               !memcmp(va->offsets, vb->offsets, ((size_t)va->n + 1) * 4) && !memcmp(va->blob, vb->blob, va->blob_size);
    if (!same) fprintf(stderr, "%s: vocabulary differs\n", what);
    CHECK(same);
    CHECK(va->eos_id == 0 && va->unk_id == 1 && va->n == 1000);
out:
    txlm_file_close(fa);
    txlm_file_close(fb);
}

static void test_forms(void)
{
    static const char *const weights[] = {"model.safetensors", "pytorch_model.bin", "pytorch_model_legacy.bin"};
    static const char *const vocabs[] = {"vocab.txt", "vocab.pkl", "vocab.bin"};
    char ref[1024];
    snprintf(ref, sizeof ref, "%s", tmp_path("ref.txlm"));
    if (pack_forms(weights[0], vocabs[0], ref)) return;
    for (int w = 0; w < 3; w++)
        for (int v = 0; v < 3; v++) {
            char out[1024], what[128];
            snprintf(out, sizeof out, "%s", tmp_path("form.txlm"));
            snprintf(what, sizeof what, "%s + %s", weights[w], vocabs[v]);
            if (pack_forms(weights[w], vocabs[v], out)) continue;
            compare_packed(ref, out, what);
            size_t la = 0, lb = 0;
            char *x = read_file(ref, &la), *y = read_file(out, &lb);
            CHECK(x && y && la == lb && !memcmp(x, y, la)); /* and the whole file too */
            free(x);
            free(y);
        }
    txlm_checkpoint *ck = open_ok(golden_path("pytorch_model.bin"));
    if (ck) CHECK(!strcmp(ck->format, "torch-zip"));
    txlm_checkpoint_free(ck);
    ck = open_ok(golden_path("pytorch_model_legacy.bin"));
    if (ck) CHECK(!strcmp(ck->format, "torch-legacy"));
    txlm_checkpoint_free(ck);
}

/* ---- small checkpoints built here ------------------------------------- */

static uint16_t f16_of(float x)
{
    uint16_t h;
    txlm_quantize_f16(&x, 1, &h);
    return h;
}

/* A state dict over three storages: "0" f32 [12], "1" f16 [4], "2" bf16 [3].
 *  a: [3, 4] contiguous;  t: a transposed ([4, 3], strides (1, 4));
 *  s: [2, 2] at offset 5, stride (4, 1), rows of a;  h: f16 [4];  b: bf16 [3];
 *  e: empty [0, 5]. */
static float f32_data[12];
static uint16_t f16_data[4], bf16_data[3];

static void small_dict(buf *p, const char *key0)
{
    for (int i = 0; i < 12; i++) f32_data[i] = (float)(i * 1.5 - 7.25);
    for (int i = 0; i < 4; i++) f16_data[i] = f16_of((float)i / 4 - 0.3f);
    for (int i = 0; i < 3; i++) bf16_data[i] = (uint16_t)(0x3f80 + 0x11 * i); /* 1.0, 1.06640625, ... */
    pk_ordered_dict_begin(p);
    pk_str(p, "a");
    pk_tensor(p, "FloatStorage", key0, 12, 0, 2, (uint64_t[]){3, 4}, (uint64_t[]){4, 1});
    pk_str(p, "t");
    pk_tensor(p, "FloatStorage", key0, 12, 0, 2, (uint64_t[]){4, 3}, (uint64_t[]){1, 4});
    pk_str(p, "s");
    pk_tensor(p, "FloatStorage", key0, 12, 5, 2, (uint64_t[]){2, 2}, (uint64_t[]){4, 1});
    pk_str(p, "h");
    pk_tensor(p, "HalfStorage", "1", 4, 0, 1, (uint64_t[]){4}, (uint64_t[]){1});
    pk_str(p, "b");
    pk_tensor(p, "BFloat16Storage", "2", 3, 0, 1, (uint64_t[]){3}, (uint64_t[]){1});
    pk_str(p, "e");
    pk_tensor(p, "FloatStorage", key0, 12, 0, 2, (uint64_t[]){0, 5}, (uint64_t[]){5, 1});
    pk_dict_end(p);
}

static void check_small(const txlm_checkpoint *ck)
{
    CHECK(ck->n_tensors == 6);
    const txlm_src_tensor *a = txlm_checkpoint_find(ck, "a"), *t = txlm_checkpoint_find(ck, "t");
    const txlm_src_tensor *s = txlm_checkpoint_find(ck, "s"), *h = txlm_checkpoint_find(ck, "h");
    const txlm_src_tensor *b = txlm_checkpoint_find(ck, "b"), *e = txlm_checkpoint_find(ck, "e");
    CHECK(a && t && s && h && b && e);
    if (!(a && t && s && h && b && e)) return;
    CHECK(a->dtype == TXLM_DT_F32 && a->rank == 2 && a->dims[0] == 3 && a->dims[1] == 4 && a->n_elems == 12);
    for (int i = 0; i < 12; i++) CHECK(txlm_src_get_f32(a, (uint64_t)i) == f32_data[i]);
    CHECK(t->rank == 2 && t->dims[0] == 4 && t->dims[1] == 3);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 3; c++) CHECK(txlm_src_get_f32(t, (uint64_t)(r * 3 + c)) == f32_data[c * 4 + r]);
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 2; c++) CHECK(txlm_src_get_f32(s, (uint64_t)(r * 2 + c)) == f32_data[5 + r * 4 + c]);
    CHECK(h->dtype == TXLM_DT_F16 && h->nbytes == 8);
    for (int i = 0; i < 4; i++) CHECK(txlm_src_get_f32(h, (uint64_t)i) == txlm_f16_to_f32(f16_data[i]));
    CHECK(b->dtype == TXLM_DT_BF16 && b->nbytes == 6);
    for (int i = 0; i < 3; i++) CHECK(txlm_src_get_f32(b, (uint64_t)i) == txlm_bf16_to_f32(bf16_data[i]));
    CHECK(e->n_elems == 0 && e->nbytes == 0 && e->dims[0] == 0 && e->dims[1] == 5);
}

static uint8_t *small_zip(const buf *pkl, int flags, int method_entry, size_t *len)
{
    zip_in e[] = {{"archive/data.pkl", pkl->p, pkl->n},
                  {"archive/data/0", f32_data, sizeof f32_data},
                  {"archive/data/1", f16_data, sizeof f16_data},
                  {"archive/data/2", bf16_data, sizeof bf16_data},
                  {"archive/version", "3\n", 2}};
    return zip_build(e, 5, flags, method_entry, 8, len);
}

static uint8_t *small_legacy(const buf *pkl, size_t *len)
{
    const char *keys[] = {"0", "1", "2"};
    uint64_t counts[] = {12, 4, 3};
    const void *data[] = {f32_data, f16_data, bf16_data};
    size_t bytes[] = {sizeof f32_data, sizeof f16_data, sizeof bf16_data};
    return legacy_build(pkl, 1, 3, keys, counts, data, bytes, len);
}

static void open_bytes_ok(const char *name, const uint8_t *bytes, size_t len, const char *format)
{
    const char *path = tmp_path(name);
    write_file(path, bytes, len);
    txlm_checkpoint *ck = open_ok(path);
    if (ck) {
        CHECK(!strcmp(ck->format, format));
        check_small(ck);
    }
    txlm_checkpoint_free(ck);
}

static void test_small(void)
{
    buf p = {0};
    small_dict(&p, "0");
    size_t len;
    uint8_t *z = small_zip(&p, ZIP_PLAIN, -1, &len);
    open_bytes_ok("small.zip", z, len, "torch-zip");
    free(z);
    z = small_zip(&p, ZIP_FORCE64, -1, &len);
    open_bytes_ok("small64.zip", z, len, "torch-zip");
    free(z);
    z = small_legacy(&p, &len);
    open_bytes_ok("small.legacy", z, len, "torch-legacy");
    free(z);
    buf_free(&p);

    /* Legacy storage views: elements [2, 8) of storage "0" seen as "v". */
    pk_ordered_dict_begin(&p);
    pk_str(&p, "v");
    pk_tensor_view(&p, "FloatStorage", "0", 12, "v", 2, 6, 1, 2, (uint64_t[]){2, 2}, (uint64_t[]){2, 1});
    pk_dict_end(&p);
    const char *keys[] = {"0"};
    uint64_t counts[] = {12};
    const void *data[] = {f32_data};
    size_t bytes[] = {sizeof f32_data};
    z = legacy_build(&p, 1, 1, keys, counts, data, bytes, &len);
    write_file(tmp_path("view.legacy"), z, len);
    txlm_checkpoint *ck = open_ok(tmp_path("view.legacy"));
    const txlm_src_tensor *v = ck ? txlm_checkpoint_find(ck, "v") : NULL;
    CHECK(v != NULL);
    for (int i = 0; v && i < 4; i++) CHECK(txlm_src_get_f32(v, (uint64_t)i) == f32_data[2 + 1 + i]);
    txlm_checkpoint_free(ck);
    free(z);
    buf_free(&p);

    /* The whole golden checkpoint, re-zipped with zip64 records. */
    size_t glen;
    uint8_t *g = (uint8_t *)read_file(golden_path("pytorch_model.bin"), &glen);
    txlm_zip gz;
    txlm_err err = {0};
    EXPECT_OK(txlm_zip_open("golden", g, glen, &gz, &err), &err);
    zip_in *e = calloc(gz.n ? gz.n : 1, sizeof *e);
    char **names = calloc(gz.n ? gz.n : 1, sizeof *names);
    for (uint32_t i = 0; i < gz.n; i++) {
        names[i] = strndup(gz.entries[i].name, gz.entries[i].name_len);
        e[i] = (zip_in){names[i], g + gz.entries[i].offset, gz.entries[i].size};
    }
    z = zip_build(e, (int)gz.n, ZIP_FORCE64, -1, 0, &len);
    write_file(tmp_path("golden64.bin"), z, len);
    txlm_checkpoint *a = open_ok(golden_path("pytorch_model.bin")), *b = open_ok(tmp_path("golden64.bin"));
    CHECK(a && b && a->n_tensors == b->n_tensors && a->n_tensors == 57);
    for (uint32_t i = 0; a && b && i < a->n_tensors && i < b->n_tensors; i++)
        CHECK(!strcmp(a->tensors[i].name, b->tensors[i].name) && a->tensors[i].nbytes == b->tensors[i].nbytes &&
              !memcmp(a->tensors[i].data, b->tensors[i].data, a->tensors[i].nbytes));
    txlm_checkpoint_free(a);
    txlm_checkpoint_free(b);
    for (uint32_t i = 0; i < gz.n; i++) free(names[i]);
    free(names);
    free(e);
    free(z);
    txlm_zip_free(&gz);
    free(g);
}

/* ---- malformed pickles ------------------------------------------------ */

/* Where small_zip puts data.pkl: after a 30-byte local header and its name. */
#define PKL_AT (30 + 16)

/* A zip checkpoint whose data.pkl is `pkl`; `at` (when >= 0) is the byte
 * of the pickle the message must name, as an offset in the file. */
static void expect_pickle_fails(const char *what, const buf *pkl, int code, const char *m1, int at)
{
    size_t len;
    uint8_t *z = small_zip(pkl, ZIP_PLAIN, -1, &len);
    char where[64];
    snprintf(where, sizeof where, "byte %d", PKL_AT + at);
    expect_open_fails(what, z, len, code, m1, at >= 0 ? where : NULL);
    free(z);
}

static void test_bad_pickles(void)
{
    buf p = {0};
    /* A GLOBAL outside the list, where the state dict's OrderedDict is. */
    pk_begin(&p);
    pk_global(&p, "os", "system");
    pk_str(&p, "echo owned");
    pk_op(&p, 0x85);
    pk_op(&p, 'R');
    pk_op(&p, '.');
    expect_pickle_fails("os.system", &p, TXLM_ERR_UNSUPPORTED, "global 'os.system' at", 2);
    buf_free(&p);

    pk_begin(&p);
    pk_op(&p, 0x8c), pk_op(&p, 8), buf_put(&p, "builtins", 8);
    pk_op(&p, 0x8c), pk_op(&p, 4), buf_put(&p, "eval", 4);
    pk_op(&p, 0x93);
    pk_op(&p, '.');
    expect_pickle_fails("STACK_GLOBAL builtins.eval", &p, TXLM_ERR_UNSUPPORTED, "'builtins.eval'", 18);
    buf_free(&p);

    /* Opcodes outside the subset, each named with its offset. */
    static const struct {
        uint8_t op;
        const char *name;
    } ops[] = {{'i', "INST ('i', 0x69)"}, {0x92, "NEWOBJ_EX (0x92)"}, {'P', "PERSID"}, {0x82, "EXT1"}, {0xff, "unknown (0xff)"},
               {'V', "UNICODE"}, {'F', "FLOAT"}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        pk_ordered_dict_begin(&p);
        pk_op(&p, ops[i].op);
        pk_dict_end(&p);
        expect_pickle_fails(ops[i].name, &p, TXLM_ERR_UNSUPPORTED, ops[i].name, 30);
        buf_free(&p);
    }
    /* NEWOBJ is read (it makes an inert record), but not on an empty stack. */
    pk_ordered_dict_begin(&p);
    pk_op(&p, 0x81);
    pk_dict_end(&p);
    expect_pickle_fails("NEWOBJ on the mark", &p, TXLM_ERR_FORMAT, "NEWOBJ on an empty stack", 30);
    buf_free(&p);

#define PK(s) s, sizeof s - 1
    static const struct {
        const char *bytes;
        size_t len;
        int code;
        const char *m1;
        int at;
    } cases[] = {
        {PK("\x80\x02}q\x00("), TXLM_ERR_FORMAT, "without STOP (truncated)", -1},
        {PK("\x80\x02X\xff\x00\x00\x00" "ab."), TXLM_ERR_FORMAT, "needs 255 bytes, only 3 left (truncated)", 2},
        {PK("\x80\x02h\x05."), TXLM_ERR_FORMAT, "memo entry 5 that was never stored", 2},
        {PK("\x80\x02r\xff\xff\xff\x7f."), TXLM_ERR_FORMAT, "memo index larger", 2},
        {PK("\x80\x02\x8a\x09\x01\x02\x03\x04\x05\x06\x07\x08\x09."), TXLM_ERR_UNSUPPORTED, "wider than 64 bits", 2},
        {PK("\x80\x01}."), TXLM_ERR_UNSUPPORTED, "protocol 1", 0},
        {PK("\x80\x02(K\x01" "d."), TXLM_ERR_FORMAT, "odd number", 5},
        {PK("\x80\x02}K\x01" "a."), TXLM_ERR_FORMAT, "APPEND to something other than a list", 5},
        {PK("\x80\x02]0."), TXLM_ERR_FORMAT, "STOP with other than one value", 4},
        {PK("\x80\x02s."), TXLM_ERR_FORMAT, "SETITEM on an empty stack", 2},
        {PK("\x80\x02]}b."), TXLM_ERR_UNSUPPORTED, "BUILD on a list", 4},
        {PK("\x80\x02" "ctorch\nFloatStorage\n)R."), TXLM_ERR_UNSUPPORTED, "REDUCE of a storage type", 23},
        {PK("\x80\x02K\x01)R."), TXLM_ERR_UNSUPPORTED, "REDUCE of a int", 5},
        {PK("\x80\x02(X\x07\x00\x00\x00storageK\x01tQ."), TXLM_ERR_UNSUPPORTED, "persistent id", 18},
        {PK("\x80\x02]K\x01."), TXLM_ERR_FORMAT, "STOP with other than one value", 5},
        {PK("\x80\x02]\x95\xff\x00\x00\x00\x00\x00\x00\x00."), TXLM_ERR_FORMAT, "FRAME longer", 3},
        {PK("\x80\x02K\x01."), TXLM_ERR_UNSUPPORTED, "a int, not a state dict", -1},
        {PK("\x80\x02}K\x01K\x02s."), TXLM_ERR_FORMAT, "is a int, not a name", 3},
        {PK("\x80\x02}X\x01\x00\x00\x00" "aK\x02s."), TXLM_ERR_UNSUPPORTED, "entry 'a' is a int, not a tensor", -1},
    };
#undef PK
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf q = {0};
        buf_put(&q, cases[i].bytes, cases[i].len);
        expect_pickle_fails(cases[i].m1, &q, cases[i].code, cases[i].m1, cases[i].at);
        buf_free(&q);
    }
}

/* Tensor views and storages that do not fit. */
static void test_bad_views(void)
{
    static const struct {
        uint64_t numel, offset, d0, d1, s0, s1;
        const char *m1, *m2;
    } cases[] = {
        {12, 1, 3, 4, 4, 1, "'x'", "reaches element 12 of a storage of 12"},
        {12, 0, 4, 4, 4, 1, "'x'", "reaches element 15"},
        {12, 0, 3, 4, 1, 4, "'x'", "reaches element 14"},
        {12, 0, 3, 4, UINT64_MAX / 2, 1, "'x'", "overflow"},
        {13, 0, 3, 4, 4, 1, "claims 13 elements", "its zip entry holds 48 bytes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf p = {0};
        pk_ordered_dict_begin(&p);
        pk_str(&p, "x");
        pk_tensor(&p, "FloatStorage", "0", cases[i].numel, cases[i].offset, 2, (uint64_t[]){cases[i].d0, cases[i].d1},
                  (uint64_t[]){cases[i].s0, cases[i].s1});
        pk_dict_end(&p);
        size_t len;
        uint8_t *z = small_zip(&p, ZIP_PLAIN, -1, &len);
        expect_open_fails(cases[i].m2, z, len, TXLM_ERR_FORMAT, cases[i].m1, cases[i].m2);
        free(z);
        buf_free(&p);
    }
    buf p = {0};
    pk_ordered_dict_begin(&p);
    pk_str(&p, "x");
    pk_tensor(&p, "FloatStorage", "7", 2, 0, 1, (uint64_t[]){2}, (uint64_t[]){1});
    pk_dict_end(&p);
    size_t len;
    uint8_t *z = small_zip(&p, ZIP_PLAIN, -1, &len);
    expect_open_fails("missing storage", z, len, TXLM_ERR_FORMAT, "'x'", "no zip entry archive/data/7");
    free(z);
    buf_free(&p);
    pk_ordered_dict_begin(&p);
    pk_str(&p, "x");
    pk_tensor(&p, "LongStorage", "0", 2, 0, 1, (uint64_t[]){2}, (uint64_t[]){1});
    pk_dict_end(&p);
    expect_pickle_fails("LongStorage", &p, TXLM_ERR_UNSUPPORTED, "'torch.LongStorage'", -1);
    buf_free(&p);
}

/* ---- malformed zips --------------------------------------------------- */

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void test_bad_zips(void)
{
    size_t len;
    uint8_t *g = (uint8_t *)read_file(golden_path("pytorch_model.bin"), &len);
    if (!g) return;
    uint8_t *m = malloc(len);
    uint32_t cd = rd32(g + len - 22 + 16);

    expect_open_fails("truncated zip", g, len / 2, TXLM_ERR_FORMAT, "end-of-central-directory", "truncated");
    expect_open_fails("truncated to the signature", g, 4, TXLM_ERR_FORMAT, "too short for a zip", NULL);

    memcpy(m, g, len);
    m[cd] ^= 0xff; /* the first directory entry's signature */
    expect_open_fails("bad central directory", m, len, TXLM_ERR_FORMAT, "bad zip central directory entry", NULL);

    /* The directory offset in the zip64 record (torch.save always writes
     * one) beyond the file. */
    memcpy(m, g, len);
    uint32_t z64 = rd32(m + len - 22 - 20 + 8);
    CHECK(rd32(m + z64) == 0x06064b50u);
    wr32(m + z64 + 48, (uint32_t)len);
    expect_open_fails("directory beyond the file", m, len, TXLM_ERR_FORMAT, "central directory", "runs past");

    memcpy(m, g, len);
    wr32(m + cd + 42, 17); /* first entry's local header offset */
    expect_open_fails("bad local header offset", m, len, TXLM_ERR_FORMAT, "no local header at byte 17", NULL);

    memcpy(m, g, len);
    wr32(m + cd + 24, 0x7fffffff), wr32(m + cd + 20, 0x7fffffff); /* first entry's sizes */
    expect_open_fails("entry beyond the directory", m, len, TXLM_ERR_FORMAT, "run into the central directory", NULL);

    /* Data corrupted in a storage. */
    txlm_zip gz;
    txlm_err err = {0};
    EXPECT_OK(txlm_zip_open("golden", g, len, &gz, &err), &err);
    const txlm_zip_entry *d0 = txlm_zip_find(&gz, "pytorch_model/data/0", 20);
    CHECK(d0 != NULL);
    if (d0) {
        memcpy(m, g, len);
        m[d0->offset + 100] ^= 0x40;
        expect_open_fails("storage CRC", m, len, TXLM_ERR_CHECKSUM, "'pytorch_model/data/0' fails its CRC-32 check", NULL);
    }
    txlm_zip_free(&gz);

    buf p = {0};
    small_dict(&p, "0");
    uint8_t *z = small_zip(&p, ZIP_PLAIN, 2, &len);
    expect_open_fails("compressed entry", z, len, TXLM_ERR_UNSUPPORTED, "'archive/data/1' is compressed (method 8)", NULL);
    free(z);
    zip_in e[] = {{"archive/other.pkl", p.p, p.n}};
    z = zip_build(e, 1, ZIP_PLAIN, -1, 0, &len);
    expect_open_fails("no data.pkl", z, len, TXLM_ERR_FORMAT, "without <archive>/data.pkl", NULL);
    free(z);
    zip_in two[] = {{"archive/data.pkl", p.p, p.n}, {"archive/data.pkl", p.p, p.n}};
    z = zip_build(two, 2, ZIP_PLAIN, -1, 0, &len);
    expect_open_fails("duplicate entry", z, len, TXLM_ERR_FORMAT, "appears twice", NULL);
    free(z);
    zip_in be[] = {{"archive/data.pkl", p.p, p.n}, {"archive/byteorder", "big", 3}};
    z = zip_build(be, 2, ZIP_PLAIN, -1, 0, &len);
    expect_open_fails("big-endian", z, len, TXLM_ERR_UNSUPPORTED, "big-endian", NULL);
    free(z);
    buf_free(&p);
    free(m);
    free(g);
}

/* ---- malformed legacy files ------------------------------------------- */

static void test_bad_legacy(void)
{
    size_t len;
    uint8_t *g = (uint8_t *)read_file(golden_path("pytorch_model_legacy.bin"), &len);
    if (!g) return;
    expect_open_fails("legacy truncated in a storage", g, len - 100, TXLM_ERR_FORMAT, "runs past the end of the file",
                      "truncated");
    expect_open_fails("legacy truncated in the pickle", g, 5000, TXLM_ERR_FORMAT, "truncated", NULL);
    uint8_t *m = malloc(len + 3);
    memcpy(m, g, len);
    memcpy(m + len, "abc", 3);
    expect_open_fails("legacy trailing bytes", m, len + 3, TXLM_ERR_FORMAT, "3 unexpected bytes after the last storage", NULL);
    /* The first storage's element count (right after the key list). */
    buf p = {0};
    small_dict(&p, "0");
    size_t sl;
    uint8_t *s = small_legacy(&p, &sl);
    size_t at = sl - sizeof bf16_data - 8 - sizeof f16_data - 8 - sizeof f32_data - 8;
    CHECK(s[at] == 12);
    s[at] = 11;
    expect_open_fails("legacy count", s, sl, TXLM_ERR_FORMAT, "holds 11 elements, the pickle says 12", NULL);
    free(s);
    /* A tensor on a storage the key list does not name. */
    const char *keys[] = {"0", "1", "2"};
    uint64_t counts[] = {12, 4, 3};
    const void *data[] = {f32_data, f16_data, bf16_data};
    size_t bytes[] = {sizeof f32_data, sizeof f16_data, sizeof bf16_data};
    s = legacy_build(&p, 1, 2, keys, counts, data, bytes, &sl);
    expect_open_fails("legacy unlisted storage", s, sl, TXLM_ERR_FORMAT, "'2'", "not in the storage list");
    free(s);
    s = legacy_build(&p, 0, 3, keys, counts, data, bytes, &sl);
    expect_open_fails("legacy big-endian", s, sl, TXLM_ERR_UNSUPPORTED, "big-endian", NULL);
    free(s);
    /* os.system in place of the state dict's OrderedDict. */
    const char *od = "ccollections\nOrderedDict\n";
    uint8_t *hit = NULL;
    for (size_t i = 0; !hit && i + strlen(od) <= len; i++)
        if (!memcmp(g + i, od, strlen(od))) hit = g + i;
    CHECK(hit != NULL);
    if (hit) {
        size_t pre = (size_t)(hit - g), rest = len - pre - strlen(od);
        uint8_t *x = malloc(len);
        memcpy(x, g, pre);
        memcpy(x + pre, "cposix\nsystem\n", 14);
        memcpy(x + pre + 14, hit + strlen(od), rest);
        expect_open_fails("legacy posix.system", x, pre + 14 + rest, TXLM_ERR_UNSUPPORTED, "'posix.system'", "at byte 139");
        free(x);
    }
    memcpy(m, g, len);
    m[18] = 0xe8; /* protocol version 1001 -> 1000 */
    expect_open_fails("legacy protocol version", m, len, TXLM_ERR_UNSUPPORTED, "protocol version 1000", NULL);
    buf_free(&p);
    free(m);
    free(g);
}

/* ---- vocabularies ----------------------------------------------------- */

static int load_vocab_bytes(const void *bytes, size_t len, txlm_vocab_buf *v, txlm_err *err)
{
    const char *path = tmp_path("vocab.any");
    write_file(path, bytes, len);
    memset(err, 0, sizeof *err);
    return txlm_vocab_load_pickle(path, v, err);
}

/* A TransfoXLTokenizer-like dict; `mutate` picks one defect. */
static void vocab_pickle(buf *p, int mutate)
{
    static const char *const syms[] = {"<eos>", "<unk>", "the", "caf\xc3\xa9", "Zebra"};
    pk_begin(p);
    pk_op(p, '}');
    pk_op(p, '(');
    pk_str(p, "special");
    pk_op(p, ']');
    pk_op(p, '(');
    pk_str(p, "<eos>");
    pk_str(p, mutate == 1 ? "<mask>" : "<unk>");
    pk_op(p, 'e');
    pk_str(p, "lower_case");
    pk_op(p, mutate == 6 ? ')' : 0x88);
    pk_str(p, "idx2sym");
    pk_op(p, ']');
    pk_op(p, 'q'), pk_op(p, 1);
    pk_op(p, '(');
    for (int i = 0; i < 5; i++) {
        if (mutate == 2 && i == 4) pk_str(p, "the");
        else if (mutate == 5 && i == 3) pk_int(p, 3);
        else if (mutate == 7 && i == 4) pk_op(p, 'X'), buf_le(p, 4, 4), buf_put(p, "Ze\0a", 4); /* BINUNICODE "Ze\0a" */
        else pk_str(p, syms[i]);
    }
    pk_op(p, 'e');
    pk_str(p, "sym2idx");
    pk_global(p, "collections", "OrderedDict");
    pk_op(p, ')');
    pk_op(p, 'R');
    pk_op(p, '(');
    for (int i = 0; i < 5; i++) {
        pk_str(p, mutate == 2 && i == 4 ? "the" : syms[i]);
        pk_int(p, mutate == 3 && i == 2 ? 3 : i);
    }
    pk_op(p, 'u');
    pk_str(p, "unk_idx");
    pk_int(p, mutate == 4 ? 5 : 1);
    pk_op(p, 'u');
    pk_op(p, '.');
}

static void test_vocab(void)
{
    txlm_vocab_buf t, a, b;
    txlm_err err = {0};
    EXPECT_OK(txlm_vocab_load_txt(golden_path("vocab.txt"), &t, &err), &err);
    EXPECT_OK(txlm_vocab_load_pickle(golden_path("vocab.pkl"), &a, &err), &err);
    EXPECT_OK(txlm_vocab_load_pickle(golden_path("vocab.bin"), &b, &err), &err);
    const txlm_vocab_buf *both[] = {&a, &b};
    for (int k = 0; k < 2; k++) {
        const txlm_vocab *x = &both[k]->v;
        CHECK(x->n == t.v.n && x->blob_size == t.v.blob_size && x->eos_id == 0 && x->unk_id == 1 && x->flags == 0);
        CHECK(x->kind == TXLM_TOK_WORD);
        CHECK(x->n == t.v.n && !memcmp(x->offsets, t.v.offsets, ((size_t)x->n + 1) * 4) &&
              !memcmp(x->blob, t.v.blob, x->blob_size));
    }
    txlm_vocab_buf_free(&a);
    txlm_vocab_buf_free(&b);
    txlm_vocab_buf_free(&t);

    unsigned char head[16];
    size_t n;
    char *pkl = read_file(golden_path("vocab.pkl"), &n);
    memcpy(head, pkl, 16);
    CHECK(txlm_vocab_sniff_pickle(head, 16));
    CHECK(!txlm_vocab_sniff_pickle("<eos>\n<unk>\n", 12));
    /* The same dict in a zip torch.save file. */
    zip_in e[] = {{"vocab/data.pkl", pkl, n}, {"vocab/version", "3\n", 2}};
    size_t zl;
    uint8_t *z = zip_build(e, 2, ZIP_PLAIN, -1, 0, &zl);
    EXPECT_OK(load_vocab_bytes(z, zl, &a, &err), &err);
    CHECK(a.v.n == 1000 && a.v.eos_id == 0 && a.v.unk_id == 1);
    txlm_vocab_buf_free(&a);
    free(z);
    char *extra = malloc(n + 1);
    memcpy(extra, pkl, n);
    extra[n] = 'x';
    EXPECT_ERR(load_vocab_bytes(extra, n + 1, &a, &err), &err, TXLM_ERR_FORMAT, "1 unexpected bytes after the pickle");
    free(extra);
    free(pkl);

    buf p = {0};
    vocab_pickle(&p, 0);
    EXPECT_OK(load_vocab_bytes(p.p, p.n, &a, &err), &err);
    uint32_t len;
    const char *s = a.v.n == 5 ? txlm_vocab_sym(&a.v, 3, &len) : NULL;
    CHECK(s && len == 5 && !memcmp(s, "caf\xc3\xa9", 5));
    CHECK(a.v.flags == TXLM_VOCAB_LOWER_CASE && a.v.eos_id == 0 && a.v.unk_id == 1);
    txlm_vocab_buf_free(&a);
    buf_free(&p);

    static const struct {
        int mutate;
        const char *m1, *m2;
    } bad[] = {
        {1, "special symbol 1 ('<mask>') is not in idx2sym", NULL},
        {2, "'the' appears twice in idx2sym", "ids 2 and 4"},
        {3, "sym2idx['the'] = 3 disagrees with idx2sym", NULL},
        {4, "unk_idx 5 is outside the 5 symbols", NULL},
        {5, "idx2sym[3] is a int, not a string", NULL},
        {6, "lower_case is a tuple, not a bool", NULL},
        {7, "id 4 in idx2sym holds a NUL byte", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vocab_pickle(&p, bad[i].mutate);
        int rc = load_vocab_bytes(p.p, p.n, &a, &err);
        if (bad[i].m2) EXPECT_ERR(rc, &err, TXLM_ERR_FORMAT, bad[i].m1, bad[i].m2);
        else EXPECT_ERR(rc, &err, TXLM_ERR_FORMAT, bad[i].m1);
        buf_free(&p);
    }
    pk_begin(&p);
    pk_global(&p, "subprocess", "Popen");
    pk_op(&p, '.');
    EXPECT_ERR(load_vocab_bytes(p.p, p.n, &a, &err), &err, TXLM_ERR_UNSUPPORTED, "'subprocess.Popen' at byte 2");
    buf_free(&p);
    pk_begin(&p);
    pk_op(&p, '}');
    pk_op(&p, '.');
    EXPECT_ERR(load_vocab_bytes(p.p, p.n, &a, &err), &err, TXLM_ERR_FORMAT, "no idx2sym list");
    buf_free(&p);
    EXPECT_ERR(load_vocab_bytes("<eos>\n", 6, &a, &err), &err, TXLM_ERR_FORMAT, "neither a pickle nor a torch.save");
}

/* ---- random damage: an error or a checkpoint, never a crash ---------- */

static uint32_t lcg(uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}

/* Flips 1-4 bytes of bytes[from .. to) (and sometimes truncates), then
 * loads the result as a checkpoint or a vocabulary. */
static void damage(const char *what, const uint8_t *bytes, size_t len, size_t from, size_t to, int vocab, int rounds)
{
    uint8_t *m = malloc(len);
    uint32_t st = 12345;
    int errors = 0;
    for (int r = 0; r < rounds; r++) {
        memcpy(m, bytes, len);
        int k = 1 + (int)(lcg(&st) % 4);
        for (int i = 0; i < k; i++) m[from + lcg(&st) % (to - from)] ^= (uint8_t)(1 + lcg(&st) % 255);
        size_t n = lcg(&st) % 8 == 0 ? from + lcg(&st) % (to - from) : len;
        const char *path = tmp_path("damaged.bin");
        write_file(path, m, n);
        txlm_err err = {0};
        int rc;
        if (vocab) {
            txlm_vocab_buf v;
            rc = txlm_vocab_load_pickle(path, &v, &err);
            if (!rc) txlm_vocab_buf_free(&v);
        } else {
            txlm_checkpoint *ck = NULL;
            rc = txlm_checkpoint_open(path, &ck, &err);
            txlm_checkpoint_free(ck);
        }
        if (rc && !err.msg[0]) fprintf(stderr, "%s: round %d failed without a message\n", what, r);
        CHECK(!rc || err.msg[0]);
        errors += rc != 0;
    }
    CHECK(errors > 0);
    free(m);
}

static void test_damage(void)
{
    size_t len;
    uint8_t *g = (uint8_t *)read_file(golden_path("vocab.pkl"), &len);
    if (g) damage("vocab.pkl", g, len, 0, len, 1, 300);
    free(g);
    g = (uint8_t *)read_file(golden_path("vocab.bin"), &len);
    if (g) damage("vocab.bin", g, len, 0, len, 1, 300);
    free(g);
    /* The pickles of the legacy checkpoint (its first 11308 bytes). */
    g = (uint8_t *)read_file(golden_path("pytorch_model_legacy.bin"), &len);
    if (g && len > 11308) damage("legacy", g, len, 0, 11308, 0, 200);
    free(g);
    /* The zip directory and end records of the zip checkpoint. */
    g = (uint8_t *)read_file(golden_path("pytorch_model.bin"), &len);
    size_t cd = 0;
    while (g && cd + 4 <= len && memcmp(g + cd, "PK\x01\x02", 4)) cd++;
    if (g && cd + 4 <= len) damage("zip directory", g, len, cd, len, 0, 300);
    free(g);
    /* data.pkl of a zip checkpoint, re-zipped so that CRCs still match:
     * the damage reaches the pickle reader and the tensor checks. */
    buf p = {0};
    small_dict(&p, "0");
    uint32_t st = 99;
    for (int r = 0; r < 300; r++) {
        buf q = {0};
        buf_put(&q, p.p, p.n);
        int k = 1 + (int)(lcg(&st) % 3);
        for (int i = 0; i < k; i++) q.p[lcg(&st) % q.n] ^= (uint8_t)(1 + lcg(&st) % 255);
        size_t zl;
        uint8_t *z = small_zip(&q, ZIP_PLAIN, -1, &zl);
        write_file(tmp_path("damaged.zip"), z, zl);
        txlm_checkpoint *ck = NULL;
        txlm_err err = {0};
        int rc = txlm_checkpoint_open(tmp_path("damaged.zip"), &ck, &err);
        CHECK(!rc || err.msg[0]);
        txlm_checkpoint_free(ck);
        free(z);
        buf_free(&q);
    }
    buf_free(&p);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
        return 2;
    }
    golden = argv[1];
    test_forms();
    test_small();
    test_bad_pickles();
    test_bad_views();
    test_bad_zips();
    test_bad_legacy();
    test_vocab();
    test_damage();
    tmp_cleanup();
    if (test_failures) fprintf(stderr, "%d check(s) failed\n", test_failures);
    return test_failures ? 1 : 0;
}
