/* Writes the generated seeds of the torch fuzz corpora with the test-side
 * torch.save writers (tests/import/torch_build.c): a zip and a zip64
 * checkpoint, a legacy one, their pickles, and pickled vocabularies (plain
 * and legacy torch.save). Run after a reader change:
 *   build/tests/fuzz/fuzz_gen_torch_seeds tests/fuzz/corpus */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "torch_build.h"

static int save(const char *dir, const char *target, const char *name, const void *data, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", dir, target, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len) {
        fprintf(stderr, "%s: cannot write\n", path);
        if (f) fclose(f);
        return 1;
    }
    return fclose(f) != 0;
}

static float w[6] = {1.5f, -2.0f, 0.25f, 3.0f, -0.5f, 8.0f};
static uint16_t half[4] = {0x3c00, 0xbc00, 0x3800, 0x0001};

/* {"w": [2, 3] f32, "wt": its transpose (a strided view), "h": [4] f16} */
static void state_dict(buf *p)
{
    pk_ordered_dict_begin(p);
    pk_str(p, "w");
    pk_tensor(p, "FloatStorage", "0", 6, 0, 2, (uint64_t[]){2, 3}, (uint64_t[]){3, 1});
    pk_str(p, "wt");
    pk_tensor(p, "FloatStorage", "0", 6, 0, 2, (uint64_t[]){3, 2}, (uint64_t[]){1, 3});
    pk_str(p, "h");
    pk_tensor(p, "HalfStorage", "1", 4, 0, 1, (uint64_t[]){4}, (uint64_t[]){1});
    pk_dict_end(p);
}

/* A tokenizer's attributes: idx2sym, lower_case, special, unk_idx. */
static void vocab(buf *p)
{
    static const char *const syms[] = {"<eos>", "<unk>", "a", "caf\xc3\xa9"};
    pk_begin(p);
    pk_op(p, '}');
    pk_op(p, '(');
    pk_str(p, "idx2sym");
    pk_op(p, ']');
    pk_op(p, '(');
    for (int i = 0; i < 4; i++) pk_str(p, syms[i]);
    pk_op(p, 'e');
    pk_str(p, "lower_case");
    pk_op(p, 0x88);
    pk_str(p, "special");
    pk_op(p, ']');
    pk_op(p, '(');
    pk_str(p, "<eos>");
    pk_op(p, 'e');
    pk_str(p, "unk_idx");
    pk_int(p, 1);
    pk_op(p, 'u');
    pk_op(p, '.');
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR (writes into its zip, pickle, torch and vocab_pickle folders)\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    int rc = 0;
    buf sd = {0}, vp = {0};
    pk_begin(&sd);
    state_dict(&sd);
    vocab(&vp);
    zip_in e[] = {{"archive/data.pkl", sd.p, sd.n}, {"archive/data/0", w, sizeof w}, {"archive/data/1", half, sizeof half},
                  {"archive/version", "3\n", 2}};
    size_t len;
    uint8_t *z = zip_build(e, 4, ZIP_PLAIN, -1, 0, &len);
    rc |= save(dir, "torch", "zip.pt", z, len) | save(dir, "zip", "torch.zip", z, len);
    free(z);
    z = zip_build(e, 4, ZIP_FORCE64, -1, 0, &len);
    rc |= save(dir, "torch", "zip64.pt", z, len) | save(dir, "zip", "zip64.zip", z, len);
    free(z);
    const char *keys[] = {"0", "1"};
    uint64_t counts[] = {6, 4};
    const void *data[] = {w, half};
    size_t bytes[] = {sizeof w, sizeof half};
    buf obj = {0};
    pk_begin(&obj);
    state_dict(&obj);
    z = legacy_build(&obj, 1, 2, keys, counts, data, bytes, &len);
    rc |= save(dir, "torch", "legacy.pt", z, len);
    free(z);
    rc |= save(dir, "pickle", "state_dict.pkl", sd.p, sd.n) | save(dir, "pickle", "vocab.pkl", vp.p, vp.n);
    rc |= save(dir, "vocab_pickle", "vocab.pkl", vp.p, vp.n);
    zip_in ve[] = {{"vocab/data.pkl", vp.p, vp.n}, {"vocab/version", "3\n", 2}};
    z = zip_build(ve, 2, ZIP_PLAIN, -1, 0, &len);
    rc |= save(dir, "vocab_pickle", "vocab_zip.bin", z, len);
    free(z);
    buf vobj = {0};
    vocab(&vobj);
    z = legacy_build(&vobj, 1, 0, NULL, NULL, NULL, NULL, &len);
    rc |= save(dir, "vocab_pickle", "vocab_legacy.bin", z, len);
    free(z);
    buf_free(&sd);
    buf_free(&vp);
    buf_free(&obj);
    buf_free(&vobj);
    return rc;
}
