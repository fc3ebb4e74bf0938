/* Pickled objects read inertly (format/import/pickle_object.c) and the training
 * checkpoints built on them (format/import/ckpt_nvidia.c, format/import/ckpt_module.c):
 * records of any class, object graphs deep or cyclic through the memo,
 * records where a tensor or a vocabulary should be, and storages that are
 * never read (a corrupted optimizer moment does not matter).
 *
 * usage: test_import_records TRAINING_CKPTS_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm.h>

#include "ckpt_source.h"
#include "pickle.h"
#include "torch.h"
#include "torch_build.h"
#include "util.h"
#include "zip.h"

static const char *fixtures;

static const txlm_pk_value *parse(const buf *b, txlm_pickle **p, txlm_err *err)
{
    const txlm_pk_value *root = NULL;
    uint64_t used = 0;
    memset(err, 0, sizeof *err);
    if (txlm_pickle_parse("test", b->p, b->n, 0, p, &root, &used, err)) return NULL;
    return root;
}

/* A module record: cls() with state {_parameters, _buffers, _modules: {name: child}}. */
static void module_begin(buf *b, const char *cls)
{
    pk_global(b, "mem_transformer", cls);
    pk_op(b, ')');
    pk_op(b, 0x81); /* NEWOBJ */
}

static void module_state(buf *b, const char *child_name, void (*child)(buf *, int), int depth)
{
    pk_op(b, '}');
    pk_op(b, '(');
    pk_str(b, "_parameters"), pk_op(b, '}');
    pk_str(b, "_buffers"), pk_op(b, '}');
    pk_str(b, "_modules"), pk_op(b, '}');
    if (child) {
        pk_op(b, '(');
        pk_str(b, child_name);
        child(b, depth);
        pk_op(b, 'u');
    }
    pk_op(b, 'u');
    pk_op(b, 'b'); /* BUILD */
}

static void nested(buf *b, int depth)
{
    module_begin(b, "Deep");
    module_state(b, "m", depth > 1 ? nested : NULL, depth - 1);
}

static void test_records(void)
{
    txlm_err err;
    txlm_pickle *p = NULL;
    buf b = {0};
    /* os.system('x') is a record of its name and arguments: nothing runs */
    pk_begin(&b);
    pk_global(&b, "os", "system");
    pk_str(&b, "touch /tmp/txlm-must-not-exist");
    pk_op(&b, 0x85), pk_op(&b, 'R');
    pk_op(&b, '}'), pk_str(&b, "k"), pk_int(&b, 7), pk_op(&b, 's'), pk_op(&b, 'b');
    pk_op(&b, '.');
    const txlm_pk_value *r = parse(&b, &p, &err);
    CHECK(r && r->kind == TXLM_PK_OBJECT && txlm_pk_class_is(r, "os", "system"));
    CHECK(r && r->u.obj.args->n == 1 && txlm_pk_str_is(r->u.obj.args->u.seq.items[0], "touch /tmp/txlm-must-not-exist"));
    const txlm_pk_value *k = txlm_pk_attr(r, "k");
    CHECK(k && k->kind == TXLM_PK_INT && k->u.i == 7);
    CHECK(!file_exists("/tmp/txlm-must-not-exist"));
    char d[240];
    CHECK(r && strstr(txlm_pk_describe(r, d, sizeof d), "global 'os.system' at byte 2"));
    txlm_pickle_free(p);
    buf_free(&b);

    /* a list that contains itself, through the memo: parsed, never walked forever */
    pk_begin(&b);
    pk_op(&b, ']'), pk_op(&b, 'q'), buf_put(&b, "\0", 1), pk_op(&b, 'h'), buf_put(&b, "\0", 1), pk_op(&b, 'a');
    pk_op(&b, '.');
    r = parse(&b, &p, &err);
    CHECK(r && r->kind == TXLM_PK_LIST && r->n == 1 && r->u.seq.items[0] == r);
    txlm_pickle_free(p);
    buf_free(&b);

    /* 200000 nested lists: the reader keeps no recursion */
    pk_begin(&b);
    for (int i = 0; i < 200000; i++) pk_op(&b, ']');
    for (int i = 0; i < 199999; i++) pk_op(&b, 'a');
    pk_op(&b, '.');
    r = parse(&b, &p, &err);
    CHECK(r && r->kind == TXLM_PK_LIST && r->n == 1);
    txlm_pickle_free(p);
    buf_free(&b);

    /* records pretending to be data: a class where a storage type goes, a
     * record as a Parameter's tensor */
    pk_begin(&b);
    pk_global(&b, "torch._utils", "_rebuild_parameter");
    pk_global(&b, "torch", "FloatTensor");
    pk_op(&b, ')'), pk_op(&b, 'R');
    pk_op(&b, 0x88), pk_op(&b, '}'), pk_op(&b, 0x87), pk_op(&b, 'R'), pk_op(&b, '.');
    CHECK(!parse(&b, &p, &err));
    EXPECT_ERR(err.code, &err, TXLM_ERR_UNSUPPORTED, "_rebuild_parameter whose data is an object of global 'torch.FloatTensor'");
    buf_free(&b);
    pk_begin(&b);
    pk_global(&b, "torch._utils", "_rebuild_tensor_v2");
    pk_op(&b, '(');
    pk_str(&b, "storage"), pk_global(&b, "torch", "FakeStorage"), pk_str(&b, "0"), pk_str(&b, "cpu"), pk_int(&b, 4);
    pk_op(&b, 't'), pk_op(&b, 'Q');
    pk_op(&b, '.');
    CHECK(!parse(&b, &p, &err));
    EXPECT_ERR(err.code, &err, TXLM_ERR_UNSUPPORTED, "storage whose type is global 'torch.FakeStorage'");
    buf_free(&b);
}

static txlm_torch_obj *load_object(const buf *object, int n_keys, const char *const *keys, const uint64_t *counts)
{
    static const float zeros[64];
    const void *data[8] = {zeros, zeros, zeros, zeros, zeros, zeros, zeros, zeros};
    size_t bytes[8] = {0}, len = 0;
    for (int i = 0; i < n_keys; i++) bytes[i] = counts[i] * 4;
    uint8_t *file = legacy_build(object, 1, n_keys, keys, counts, data, bytes, &len);
    const char *path = tmp_path("object.pt");
    write_file(path, file, len);
    free(file);
    txlm_torch_obj *o = NULL;
    txlm_err err = {0};
    EXPECT_OK(txlm_torch_load(path, &o, &err), &err);
    return o;
}

static void test_module_trees(void)
{
    txlm_err err = {0};
    txlm_source src;
    /* 40 modules deep: refused with a message, not a crash */
    buf b = {0};
    pk_begin(&b);
    nested(&b, 40);
    pk_op(&b, '.');
    txlm_torch_obj *o = load_object(&b, 0, NULL, NULL);
    CHECK(o && txlm_module_is(txlm_torch_root(o)));
    if (o) EXPECT_ERR(txlm_module_read(o, &src, &err), &err, TXLM_ERR_FORMAT, "nested deeper than 32");
    txlm_source_free(&src);
    txlm_torch_free(o);
    buf_free(&b);

    /* a module among its own submodules, through the memo */
    pk_begin(&b);
    module_begin(&b, "MemTransformerLM");
    pk_op(&b, 'q'), buf_put(&b, "\1", 1);
    pk_op(&b, '}'), pk_op(&b, '(');
    pk_str(&b, "_parameters"), pk_op(&b, '}');
    pk_str(&b, "_modules"), pk_op(&b, '}'), pk_op(&b, '('), pk_str(&b, "self"), pk_op(&b, 'h'), buf_put(&b, "\1", 1);
    pk_op(&b, 'u'), pk_op(&b, 'u'), pk_op(&b, 'b'), pk_op(&b, '.');
    o = load_object(&b, 0, NULL, NULL);
    if (o) EXPECT_ERR(txlm_module_read(o, &src, &err), &err, TXLM_ERR_FORMAT, "self.self.self.self");
    txlm_source_free(&src);
    txlm_torch_free(o);
    buf_free(&b);

    /* a record posing as a parameter */
    pk_begin(&b);
    module_begin(&b, "MemTransformerLM");
    pk_op(&b, '}'), pk_op(&b, '(');
    pk_str(&b, "_parameters"), pk_op(&b, '}'), pk_op(&b, '('), pk_str(&b, "r_w_bias");
    pk_global(&b, "torch.nn.parameter", "Parameter"), pk_op(&b, ')'), pk_op(&b, 'R');
    pk_op(&b, 'u');
    pk_str(&b, "_modules"), pk_op(&b, '}');
    pk_op(&b, 'u'), pk_op(&b, 'b'), pk_op(&b, '.');
    o = load_object(&b, 0, NULL, NULL);
    if (o)
        EXPECT_ERR(txlm_module_read(o, &src, &err), &err, TXLM_ERR_UNSUPPORTED, "'r_w_bias' is an object of global "
                   "'torch.nn.parameter.Parameter'", "not a tensor");
    txlm_source_free(&src);
    txlm_torch_free(o);
    buf_free(&b);
}

/* {model_config: {...}, model_state: {}, vocab: Vocab record with idx2sym} */
static void nvidia_with_vocab(buf *b, void (*idx2sym)(buf *))
{
    pk_begin(b);
    pk_op(b, '}'), pk_op(b, '(');
    pk_str(b, "model_config"), pk_op(b, '}'), pk_op(b, '(');
    static const char *const keys[] = {"n_token", "n_layer", "n_head", "d_model", "d_head", "d_inner"};
    static const int vals[] = {3, 1, 1, 4, 4, 8};
    for (int i = 0; i < 6; i++) pk_str(b, keys[i]), pk_int(b, vals[i]);
    pk_op(b, 'u');
    pk_str(b, "model_state"), pk_op(b, '}');
    pk_str(b, "vocab");
    pk_global(b, "utils.vocabulary", "Vocab"), pk_op(b, ')'), pk_op(b, 0x81);
    pk_op(b, '}'), pk_str(b, "idx2sym"), idx2sym(b), pk_op(b, 's'), pk_op(b, 'b');
    pk_op(b, 'u'), pk_op(b, '.');
}

static void ints(buf *b) { pk_op(b, ']'), pk_op(b, '('), pk_int(b, 1), pk_int(b, 2), pk_int(b, 3), pk_op(b, 'e'); }
static void record(buf *b) { pk_global(b, "builtins", "range"), pk_int(b, 3), pk_op(b, 0x85), pk_op(b, 'R'); }
static void words(buf *b) { pk_op(b, ']'), pk_op(b, '('), pk_str(b, "<eos>"), pk_str(b, "a"), pk_str(b, "b"), pk_op(b, 'e'); }

static void test_nvidia_vocab(void)
{
    static const struct {
        void (*idx2sym)(buf *);
        int code;
        const char *m1, *m2;
    } cases[] = {
        {ints, TXLM_ERR_FORMAT, "idx2sym[0] is a int, not a string", NULL},
        {record, TXLM_ERR_FORMAT, "no idx2sym list", NULL},
        /* a good vocabulary; the weights then are missing */
        {words, 0, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf b = {0};
        nvidia_with_vocab(&b, cases[i].idx2sym);
        txlm_torch_obj *o = load_object(&b, 0, NULL, NULL);
        txlm_source src;
        txlm_err err = {0};
        CHECK(o && txlm_nvidia_is(txlm_torch_root(o)));
        int rc = o ? txlm_nvidia_read(o, &src, &err) : -1;
        if (cases[i].code) EXPECT_ERR(rc, &err, cases[i].code, cases[i].m1);
        else {
            EXPECT_OK(rc, &err);
            CHECK(src.vocab.v.n == 3 && src.vocab.v.eos_id == 0 && src.vocab.v.unk_id == -1 && src.ck->n_tensors == 0);
            CHECK(src.h.same_length_rule == TXLM_SAME_LENGTH_NVIDIA && src.order == TXLM_CLUSTERS_REVERSE);
        }
        txlm_source_free(&src);
        txlm_torch_free(o);
        buf_free(&b);
    }
}

/* NVIDIA's checkpoint with every storage that is not the model's damaged
 * (its CRC no longer matches): the optimizer's moments, the random states
 * and the memory are never read, so it packs all the same. */
static void test_unread_storages(void)
{
    char *path = malloc(strlen(fixtures) + 32);
    sprintf(path, "%s/nvidia_f32.pt", fixtures);
    size_t len = 0;
    uint8_t *bytes = (uint8_t *)read_file(path, &len);
    CHECK(bytes != NULL);
    txlm_torch_obj *o = NULL;
    txlm_err err = {0};
    if (bytes) EXPECT_OK(txlm_torch_load(path, &o, &err), &err);
    const txlm_pk_value *state = o ? txlm_pk_dict_get(txlm_torch_root(o), "model_state") : NULL;
    txlm_zip z = {0};
    int damaged = 0;
    if (state && !txlm_zip_open("fixture", bytes, len, &z, &err)) {
        for (uint32_t i = 0; i < z.n; i++) {
            const txlm_zip_entry *e = &z.entries[i];
            const char *slash = memchr(e->name, '/', e->name_len);
            if (!slash || (size_t)(e->name + e->name_len - slash) < 6 || memcmp(slash, "/data/", 6) || !e->size) continue;
            const char *key = slash + 6;
            size_t kl = (size_t)(e->name + e->name_len - key);
            int used = 0;
            for (uint32_t k = 1; k < state->n && !used; k += 2) {
                const txlm_pk_storage *s = &state->u.seq.items[k]->u.tensor.storage->u.storage;
                used = s->key_len == kl && !memcmp(s->key, key, kl);
            }
            if (!used) bytes[e->offset] ^= 0x5a, damaged++;
        }
        txlm_zip_free(&z);
    }
    txlm_torch_free(o);
    CHECK(damaged > 10);
    const char *copy = tmp_path("damaged.pt");
    if (bytes) write_file(copy, bytes, len);
    o = NULL;
    txlm_source src;
    memset(&src, 0, sizeof src);
    int rc = txlm_torch_load(copy, &o, &err);
    if (!rc) rc = txlm_nvidia_read(o, &src, &err);
    txlm_pack_options opt = {TXLM_DT_F32, NULL, NULL, TXLM_CLUSTERS_REVERSE, 0};
    if (!rc) rc = txlm_pack_write(&src.h, &src.vocab.v, src.ck, &opt, tmp_path("damaged.txlm"), &err);
    EXPECT_OK(rc, &err);
    printf("%d storages outside the model damaged; packed all the same\n", damaged);
    txlm_source_free(&src);
    txlm_torch_free(o);
    free(bytes);
    free(path);
}

/* The hyper-parameters a training checkpoint carries: the authors' whole
 * model has no tie flags, so its ties come from Parameter identity. */
static void test_fixture_hparams(void)
{
    static const struct {
        const char *file;
        int module;
        uint8_t tie_weight, tie_projs[4];
        uint32_t div_val, d_embed, n_layer;
    } cases[] = {
        {"authors_model.pt", 1, 1, {0, 1, 1, 1}, 2, 16, 2},
        {"authors_model_legacy.pt", 1, 1, {0, 1, 1, 1}, 2, 16, 2},
        {"nvidia_f32.pt", 0, 0, {0, 1, 1, 1}, 1, 8, 1},
        {"nvidia_f16.pt", 0, 1, {0, 1, 0, 1}, 2, 16, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *path = malloc(strlen(fixtures) + 64);
        sprintf(path, "%s/%s", fixtures, cases[i].file);
        txlm_torch_obj *o = NULL;
        txlm_source src;
        memset(&src, 0, sizeof src);
        txlm_err err = {0};
        int rc = txlm_torch_load(path, &o, &err);
        if (!rc) rc = cases[i].module ? txlm_module_read(o, &src, &err) : txlm_nvidia_read(o, &src, &err);
        EXPECT_OK(rc, &err);
        const txlm_hparams *h = &src.h;
        if (!rc) {
            if (h->tie_weight != cases[i].tie_weight || memcmp(h->tie_projs, cases[i].tie_projs, 4))
                fprintf(stderr, "%s: tie_weight %u, tie_projs %u %u %u %u\n", cases[i].file, h->tie_weight, h->tie_projs[0],
                        h->tie_projs[1], h->tie_projs[2], h->tie_projs[3]);
            CHECK(h->tie_weight == cases[i].tie_weight && !memcmp(h->tie_projs, cases[i].tie_projs, 4));
            CHECK(h->n_token == 60 && h->n_cutoffs == 3 && h->cutoffs[2] == 50 && h->div_val == cases[i].div_val);
            CHECK(h->d_embed == cases[i].d_embed && h->n_layer == cases[i].n_layer && h->untie_r == 0);
            CHECK(h->mem_len == 24 && h->tgt_len == 6 && h->same_length == 1 && h->d_inner == 16);
            CHECK(h->same_length_rule == (cases[i].module ? TXLM_SAME_LENGTH_AUTHORS : TXLM_SAME_LENGTH_NVIDIA));
            CHECK(cases[i].module || (src.vocab.v.n == 60 && src.vocab.v.eos_id == 0 && src.vocab.v.unk_id == 9));
        }
        txlm_source_free(&src);
        txlm_torch_free(o);
        free(path);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s TRAINING_CKPTS_DIR\n", argv[0]);
        return 2;
    }
    fixtures = argv[1];
    test_records();
    test_module_trees();
    test_nvidia_vocab();
    test_unread_storages();
    test_fixture_hparams();
    tmp_cleanup();
    if (test_failures) fprintf(stderr, "%d check(s) failed\n", test_failures);
    return test_failures ? 1 : 0;
}
