/* safetensors reader: well-formed images read back exactly, malformed ones
 * refused with a message that names the problem. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm.h>

#include "checkpoint.h"
#include "util.h"

static int open_image(const st_image *im, txlm_checkpoint **ck, txlm_err *err, uint8_t **bytes)
{
    uint64_t size;
    *bytes = st_serialize(im, &size);
    return txlm_safetensors_open_memory(*bytes, size, ck, err);
}

/* Opens raw bytes: header text given literally, then `data_len` zero bytes. */
static int open_raw(const char *header, uint64_t claimed_len, uint64_t data_len, txlm_err *err)
{
    size_t hl = strlen(header);
    uint64_t size = 8 + hl + data_len;
    uint8_t *b = calloc(1, size);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(claimed_len >> (8 * i));
    memcpy(b + 8, header, hl);
    txlm_checkpoint *ck = NULL;
    memset(err, 0, sizeof *err);
    int rc = txlm_safetensors_open_memory(b, size, &ck, err);
    if (!rc) {
        CHECK(ck != NULL);
        txlm_checkpoint_free(ck);
    } else {
        CHECK(ck == NULL);
    }
    free(b);
    return rc;
}

#define RAW(hdr, data_len, err) open_raw((hdr), strlen(hdr), (data_len), (err))

static void test_values(void)
{
    float f32[3] = {1.5f, -2.25f, 1e-3f};
    /* f16: 1.0, -2.0, 65504 (max), 2^-24 (smallest subnormal); bf16: 1.0, -3.0 */
    uint8_t f16[8] = {0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b, 0x01, 0x00};
    uint8_t bf16[4] = {0x80, 0x3f, 0x40, 0xc0};
    st_image im = {0};
    st_add(&im, "a.f32", "F32", 1, (uint64_t[]){3}, f32, sizeof f32);
    st_add(&im, "b f16 with spaces", "F16", 2, (uint64_t[]){2, 2}, f16, sizeof f16);
    st_add(&im, "c.bf16", "BF16", 1, (uint64_t[]){2}, bf16, sizeof bf16);
    st_add(&im, "empty", "F32", 2, (uint64_t[]){0, 5}, NULL, 0);
    st_add(&im, "scalar", "F32", 0, NULL, f32, 4);
    im.extra_json = "\"__metadata__\":{\"format\":\"pt\"}";
    txlm_checkpoint *ck;
    txlm_err err = {0};
    uint8_t *bytes;
    EXPECT_OK(open_image(&im, &ck, &err, &bytes), &err);
    if (ck) {
        CHECK(ck->n_tensors == 5);
        CHECK(!strcmp(ck->format, "safetensors"));
        const txlm_src_tensor *a = txlm_checkpoint_find(ck, "a.f32");
        CHECK(a && a->dtype == TXLM_DT_F32 && a->rank == 1 && a->dims[0] == 3 && a->n_elems == 3 && a->nbytes == 12);
        if (a) CHECK(txlm_src_get_f32(a, 0) == 1.5f && txlm_src_get_f32(a, 1) == -2.25f && txlm_src_get_f32(a, 2) == 1e-3f);
        const txlm_src_tensor *b = txlm_checkpoint_find(ck, "b f16 with spaces");
        CHECK(b && b->dtype == TXLM_DT_F16 && b->rank == 2 && b->n_elems == 4 && b->nbytes == 8);
        if (b)
            CHECK(txlm_src_get_f32(b, 0) == 1.0f && txlm_src_get_f32(b, 1) == -2.0f && txlm_src_get_f32(b, 2) == 65504.0f &&
                  txlm_src_get_f32(b, 3) == ldexpf(1.0f, -24));
        const txlm_src_tensor *c = txlm_checkpoint_find(ck, "c.bf16");
        CHECK(c && c->dtype == TXLM_DT_BF16);
        if (c) CHECK(txlm_src_get_f32(c, 0) == 1.0f && txlm_src_get_f32(c, 1) == -3.0f);
        const txlm_src_tensor *e = txlm_checkpoint_find(ck, "empty");
        CHECK(e && e->n_elems == 0 && e->nbytes == 0 && e->rank == 2);
        const txlm_src_tensor *s = txlm_checkpoint_find(ck, "scalar");
        CHECK(s && s->rank == 0 && s->n_elems == 1);
        CHECK(txlm_checkpoint_find(ck, "__metadata__") == NULL);
        CHECK(txlm_checkpoint_find(ck, "a.f3") == NULL);
        txlm_checkpoint_free(ck);
    }
    free(bytes);
    st_free(&im);
}

static void test_file(void)
{
    float v[4] = {1, 2, 3, 4};
    st_image im = {0};
    st_add(&im, "w", "F32", 2, (uint64_t[]){2, 2}, v, sizeof v);
    uint64_t size;
    uint8_t *bytes = st_serialize(&im, &size);
    const char *path = tmp_path("t.safetensors");
    write_file(path, bytes, size);
    txlm_checkpoint *ck = NULL;
    txlm_err err = {0};
    EXPECT_OK(txlm_checkpoint_open(path, &ck, &err), &err);
    if (ck) {
        const txlm_src_tensor *w = txlm_checkpoint_find(ck, "w");
        CHECK(w && w->n_elems == 4 && txlm_src_get_f32(w, 3) == 4.0f);
        txlm_checkpoint_free(ck);
    }
    /* Cut short: the header claims more than the file holds. */
    write_file(path, bytes, 20);
    EXPECT_ERR(txlm_checkpoint_open(path, &ck, &err), &err, TXLM_ERR_FORMAT, path, "header length");
    write_file(path, "hello world, not a model", 24);
    EXPECT_ERR(txlm_checkpoint_open(path, &ck, &err), &err, TXLM_ERR_FORMAT, path, "neither");
    EXPECT_ERR(txlm_checkpoint_open(tmp_path("absent"), &ck, &err), &err, TXLM_ERR_IO, "absent");
    /* Opened as safetensors directly: too short for the length, not a file, absent. */
    write_file(path, bytes, 5);
    EXPECT_ERR(txlm_safetensors_open(path, &ck, &err), &err, TXLM_ERR_FORMAT, path, "5 bytes", "8-byte header length");
    CHECK(ck == NULL);
    EXPECT_ERR(txlm_safetensors_open(tmp_dir(), &ck, &err), &err, TXLM_ERR_IO, "not a regular file");
    EXPECT_ERR(txlm_safetensors_open(tmp_path("absent"), &ck, &err), &err, TXLM_ERR_IO, "cannot open");
    write_file(path, bytes, size);
    EXPECT_OK(txlm_safetensors_open(path, &ck, &err), &err);
    txlm_checkpoint_free(ck);
    free(bytes);
    st_free(&im);
}

static void test_malformed(void)
{
    txlm_err err;
    const char *ok = "{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
    EXPECT_OK(RAW(ok, 8, &err), &err);

    /* Header length beyond the file, and beyond the 100 MB cap. */
    EXPECT_ERR(open_raw(ok, strlen(ok) + 9, 8, &err), &err, TXLM_ERR_FORMAT, "header length", "past the end");
    EXPECT_ERR(open_raw(ok, UINT64_MAX, 8, &err), &err, TXLM_ERR_FORMAT, "header length");
    {
        txlm_checkpoint *ck;
        uint8_t b[7] = {0};
        EXPECT_ERR(txlm_safetensors_open_memory(b, sizeof b, &ck, &err), &err, TXLM_ERR_FORMAT, "too short");
        uint64_t big = 200u * 1000u * 1000u;
        uint8_t *m = calloc(1, 8 + big);
        for (int i = 0; i < 8; i++) m[i] = (uint8_t)(big >> (8 * i));
        m[8] = '{';
        EXPECT_ERR(txlm_safetensors_open_memory(m, 8 + big, &ck, &err), &err, TXLM_ERR_LIMIT, "exceeds");
        free(m);
    }

    /* Header not JSON, or JSON but not the expected structure. */
    EXPECT_ERR(RAW("{\"t\":{\"dtype\":\"F32\",", 0, &err), &err, TXLM_ERR_FORMAT, "not valid JSON");
    EXPECT_ERR(RAW("[1,2,3]", 0, &err), &err, TXLM_ERR_FORMAT, "does not start with '{'");
    EXPECT_ERR(RAW("{} trailing", 0, &err), &err, TXLM_ERR_FORMAT, "trailing");
    EXPECT_ERR(RAW("{\"t\":5}", 0, &err), &err, TXLM_ERR_FORMAT, "'t'", "not an object");
    EXPECT_ERR(RAW("{\"__metadata__\":{\"a\":1}}", 0, &err), &err, TXLM_ERR_FORMAT, "__metadata__", "'a'");
    EXPECT_ERR(RAW("{\"__metadata__\":[]}", 0, &err), &err, TXLM_ERR_FORMAT, "__metadata__");
    EXPECT_OK(RAW("{\"__metadata__\":{\"a\":\"b\"}}  ", 0, &err), &err);

    /* data_offsets beyond the file. */
    EXPECT_ERR(RAW("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4, &err), &err, TXLM_ERR_FORMAT,
               "'w'", "beyond");
    EXPECT_ERR(RAW("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[1e300,1e300]}}", 8, &err), &err,
               TXLM_ERR_FORMAT, "'w'", "data_offsets");
    /* Offsets inconsistent with shape and dtype, or reversed, or malformed. */
    EXPECT_ERR(RAW("{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 16, &err), &err, TXLM_ERR_FORMAT,
               "'w'", "need 12");
    EXPECT_ERR(RAW("{\"w\":{\"dtype\":\"F16\",\"shape\":[2,2],\"data_offsets\":[0,16]}}", 16, &err), &err,
               TXLM_ERR_FORMAT, "'w'", "need 8");
    EXPECT_ERR(RAW("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", 16, &err), &err, TXLM_ERR_FORMAT,
               "'w'", "end before begin");
    EXPECT_ERR(RAW("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 16, &err), &err, TXLM_ERR_FORMAT,
               "'w'", "data_offsets");
    EXPECT_ERR(RAW("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4.5]}}", 16, &err), &err,
               TXLM_ERR_FORMAT, "'w'", "data_offsets");
    EXPECT_ERR(RAW("{\"w\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 16, &err), &err, TXLM_ERR_FORMAT,
               "'w'", "shape[0]");
    EXPECT_ERR(RAW("{\"w\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,4]}}", 16, &err), &err,
               TXLM_ERR_FORMAT, "'w'", "shape[0]");
    EXPECT_ERR(RAW("{\"w\":{\"dtype\":\"F32\",\"shape\":\"2\",\"data_offsets\":[0,4]}}", 16, &err), &err,
               TXLM_ERR_FORMAT, "'w'", "shape");
    EXPECT_ERR(RAW("{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,4]}}", 16,
                   &err),
               &err, TXLM_ERR_FORMAT, "'w'", "overflows");
    EXPECT_ERR(RAW("{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 16, &err), &err, TXLM_ERR_FORMAT, "'w'", "dtype");

    /* Overlapping tensors, including one nested inside another. */
    EXPECT_ERR(RAW("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                   "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                   16, &err),
               &err, TXLM_ERR_FORMAT, "'a'", "'b'", "overlap");
    EXPECT_ERR(RAW("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                   "\"c\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]},"
                   "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
                   16, &err),
               &err, TXLM_ERR_FORMAT, "'a'", "'b'", "overlap");
    EXPECT_OK(RAW("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]},"
                  "\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,8]},"
                  "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
                  16, &err),
              &err);
    /* The same name twice. */
    EXPECT_ERR(RAW("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                   "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                   8, &err),
               &err, TXLM_ERR_FORMAT, "'a'", "twice");

    /* Dtypes txlm does not take, and ranks beyond 8. */
    EXPECT_ERR(RAW("{\"ids\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8, &err), &err,
               TXLM_ERR_UNSUPPORTED, "'ids'", "I64");
    EXPECT_ERR(RAW("{\"q\":{\"dtype\":\"Q9\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8, &err), &err,
               TXLM_ERR_UNSUPPORTED, "'q'", "Q9");
    EXPECT_ERR(RAW("{\"r9\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, &err), &err,
               TXLM_ERR_UNSUPPORTED, "'r9'", "rank 9");
    EXPECT_OK(RAW("{\"r8\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, &err), &err);
}

/* Every truncation and every single-byte corruption of a small image
 * either opens or fails cleanly (run under sanitizers to catch the rest). */
static void test_corruption_sweep(void)
{
    float v[6] = {1, 2, 3, 4, 5, 6};
    uint16_t h[2] = {0x3c00, 0x4000};
    st_image im = {0};
    st_add(&im, "x", "F32", 2, (uint64_t[]){2, 3}, v, sizeof v);
    st_add(&im, "y", "F16", 1, (uint64_t[]){2}, h, sizeof h);
    uint64_t size;
    uint8_t *bytes = st_serialize(&im, &size);
    uint8_t *copy = malloc(size);
    int opened = 0;
    for (uint64_t cut = 0; cut < size; cut++) {
        txlm_checkpoint *ck = NULL;
        txlm_err err = {0};
        memcpy(copy, bytes, cut);
        int rc = txlm_safetensors_open_memory(copy, cut, &ck, &err);
        CHECK(rc != 0 && ck == NULL && err.msg[0]);
    }
    for (uint64_t i = 0; i < size; i++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(copy, bytes, size);
            copy[i] ^= (uint8_t)(1u << bit);
            txlm_checkpoint *ck = NULL;
            txlm_err err = {0};
            int rc = txlm_safetensors_open_memory(copy, size, &ck, &err);
            if (rc == 0) {
                opened++;
                for (uint32_t t = 0; t < ck->n_tensors; t++) {
                    const txlm_src_tensor *s = &ck->tensors[t];
                    CHECK((const uint8_t *)s->data >= copy && (const uint8_t *)s->data + s->nbytes <= copy + size);
                }
                txlm_checkpoint_free(ck);
            } else {
                CHECK(ck == NULL && err.msg[0]);
            }
        }
    CHECK(opened > 0); /* flips inside the tensor data must still open */
    free(copy);
    free(bytes);
    st_free(&im);
}

int main(void)
{
    test_values();
    test_file();
    test_malformed();
    test_corruption_sweep();
    tmp_cleanup();
    if (test_failures) fprintf(stderr, "%d check(s) failed\n", test_failures);
    return test_failures ? 1 : 0;
}
