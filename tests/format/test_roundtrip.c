/* Writes synthetic models and reads them back through both open paths:
 * every hyper-parameter, every vocabulary symbol, every tensor field and
 * byte, lookup by name, and the documented header bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <txlm.h>

#include "fmt_common.h"
#include "../common/model_diff.h"
#include "../common/tmpdir.h"

static void check_file(const txlm_file *f, const fmt_model *m, const uint8_t *base)
{
    const char *d = hparams_diff(txlm_file_hparams(f), &m->hp);
    CHECK(!d, "hyper-parameters differ: %s", d);
    uint32_t sym = 0;
    d = vocab_diff(txlm_file_vocab(f), &m->vocab, &sym);
    CHECK(!d, "vocabularies differ: %s (symbol %u)", d, sym);
    CHECK(txlm_file_version_minor(f) == 0, "minor %u", txlm_file_version_minor(f));
    CHECK(txlm_file_tensor_count(f) == (uint32_t)m->n_tensors, "count %u", txlm_file_tensor_count(f));
    uint64_t prev_end = 0;
    for (int i = 0; i < m->n_tensors; i++) {
        const fmt_tensor *w = &m->t[i];
        const txlm_tensor_info *t = txlm_file_tensor(f, (uint32_t)i);
        if (!t) {
            CHECK(0, "tensor %d missing", i);
            continue;
        }
        CHECK(strcmp(t->name, w->name) == 0, "tensor %d is '%s', added '%s' (order must be kept)", i, t->name, w->name);
        CHECK(t->dtype == w->dtype && t->rank == w->rank, "tensor %s dtype/rank", w->name);
        CHECK(memcmp(t->dims, w->dims, sizeof t->dims) == 0, "tensor %s dims", w->name);
        uint64_t n = 1;
        for (uint32_t d = 0; d < w->rank; d++) n *= w->dims[d];
        CHECK(t->n_elems == n, "tensor %s n_elems %llu", w->name, (unsigned long long)t->n_elems);
        CHECK(t->nbytes == w->nbytes, "tensor %s nbytes", w->name);
        CHECK(t->offset % 256 == 0, "tensor %s offset %llu not 256-aligned", w->name, (unsigned long long)t->offset);
        CHECK(t->offset >= prev_end, "tensor %s not after the previous one", w->name);
        prev_end = t->offset + t->nbytes;
        const void *data = txlm_file_data(f, t);
        CHECK(memcmp(data, w->data, w->nbytes) == 0, "tensor %s data differs", w->name);
        if (base) CHECK(data == base + t->offset, "tensor %s data was copied", w->name);
        CHECK(txlm_file_find(f, w->name) == t, "find '%s'", w->name);
    }
    CHECK(txlm_file_tensor(f, (uint32_t)m->n_tensors) == NULL, "tensor past the end");
    CHECK(txlm_file_find(f, "no.such.tensor") == NULL, "find of a missing name");
    CHECK(txlm_file_find(f, "") == NULL, "find of the empty name");
    CHECK(txlm_file_find(f, "q") == NULL, "find of a prefix");
    CHECK(prev_end == txlm_file_size(f), "file ends %llu after the last tensor %llu",
          (unsigned long long)txlm_file_size(f), (unsigned long long)prev_end);
}

typedef struct progress {
    uint64_t calls, last_done, total;
    int regress;
} progress;

static void on_progress(void *user, uint64_t done, uint64_t total)
{
    progress *p = user;
    if (p->calls && (done < p->last_done || total != p->total)) p->regress = 1;
    p->calls++;
    p->last_done = done;
    p->total = total;
}

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static void roundtrip(const char *dir, uint32_t kind)
{
    fmt_model m;
    fmt_model_build(&m, 1234 + kind, kind);
    char path[4096];
    snprintf(path, sizeof path, "%s/model-%u.txlm", dir, kind);

    /* Garbage in unused slots must not reach the file (the reader refuses it). */
    txlm_hparams dirty = m.hp;
    dirty.cutoffs[TXLM_MAX_CUTOFFS - 1] = 77;
    dirty.tie_projs[TXLM_MAX_CLUSTERS - 1] = 1;

    txlm_err err = {0, ""};
    txlm_writer *w;
    progress pr = {0, 0, 0, 0};
    int rc = txlm_writer_open(path, &w, &err);
    CHECK(rc == 0, "writer_open: %s", err.msg);
    if (rc) return;
    txlm_writer_set_progress(w, on_progress, &pr);
    rc = txlm_writer_set_hparams(w, &dirty, &err);
    if (!rc) rc = txlm_writer_set_vocab(w, &m.vocab, &err);
    uint64_t total = 0;
    for (int i = 0; i < m.n_tensors && !rc; i++) {
        rc = txlm_writer_add_tensor(w, m.t[i].name, (txlm_dtype)m.t[i].dtype, m.t[i].rank, m.t[i].dims, m.t[i].data,
                                    m.t[i].nbytes, &err);
        total += m.t[i].nbytes;
    }
    CHECK(rc == 0, "adding: %s", err.msg);
    /* The vocabulary is copied: clobbering ours must not change the file. */
    char *saved = malloc(m.vocab.blob_size);
    memcpy(saved, m.blob, m.vocab.blob_size);
    memset(m.blob, 'x', m.vocab.blob_size);
    rc = txlm_writer_finish(w, &err);
    CHECK(rc == 0, "finish: %s", err.msg);
    memcpy(m.blob, saved, m.vocab.blob_size);
    free(saved);
    CHECK(pr.calls >= 2 && !pr.regress && pr.total == total && pr.last_done == total,
          "progress: %llu calls, last %llu of %llu (expected %llu)", (unsigned long long)pr.calls,
          (unsigned long long)pr.last_done, (unsigned long long)pr.total, (unsigned long long)total);
    CHECK(test_count_entries(dir) == 1, "%d files beside the model: a temporary left behind", test_count_entries(dir));

    txlm_file *f = NULL;
    rc = txlm_file_open(path, 0, &f, &err);
    CHECK(rc == 0 && f, "open: %s", err.msg);
    if (f) {
        check_file(f, &m, NULL);
        txlm_file_close(f);
    }
    rc = txlm_file_open(path, TXLM_OPEN_NO_VERIFY, &f, &err);
    CHECK(rc == 0 && f, "open no-verify: %s", err.msg);
    if (f) {
        check_file(f, &m, NULL);
        txlm_file_close(f);
    }

    size_t len;
    uint8_t *buf = fmt_read_all(path, &len);
    CHECK(buf != NULL, "read back");
    if (buf) {
        /* The header as docs/format.md lays it out. */
        CHECK(memcmp(buf, "TXLMODEL", 8) == 0, "magic");
        CHECK(buf[8] == 1 && buf[9] == 0 && buf[10] == 0 && buf[11] == 0, "version 1.0");
        CHECK(buf[12] == 4 && buf[13] == 3 && buf[14] == 2 && buf[15] == 1, "byte-order marker bytes");
        CHECK(rd64(buf + 16) == (128 | (256ull << 32)), "header size 128, alignment 256");
        CHECK(rd64(buf + 24) == len, "file size field");
        CHECK(rd64(buf + 32) == 128 && rd64(buf + 40) == (5 | (32ull << 32)), "section table at 128, 5 x 32 bytes");
        static const char *const tags[5] = {"HPRM", "VOCB", "DTYP", "TDIR", "TDAT"};
        for (int s = 0; s < 5; s++) {
            const uint8_t *e = buf + 128 + 32 * s;
            CHECK(memcmp(e, tags[s], 4) == 0, "section %d tag", s);
            CHECK((e[4] & 1) == 1, "section %s required", tags[s]);
            CHECK(((e[4] >> 1) & 1) == (s == 4), "section %s checksum flag", tags[s]);
        }
        rc = txlm_file_open_memory(buf, len, 0, &f, &err);
        CHECK(rc == 0 && f, "open_memory: %s", err.msg);
        if (f) {
            check_file(f, &m, buf);
            txlm_file_close(f);
        }
        free(buf);
    }
    unlink(path);
    fmt_model_free(&m);
}

/* A file with no tensors at all is a valid container. */
static void empty_model(const char *dir)
{
    fmt_model m;
    fmt_model_build(&m, 9, TXLM_TOK_CHAR_BYTE);
    for (int i = 0; i < m.n_tensors; i++) free(m.t[i].data);
    m.n_tensors = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/empty.txlm", dir);
    txlm_err err = {0, ""};
    int rc = fmt_model_write(&m, path, &err);
    CHECK(rc == 0, "write empty: %s", err.msg);
    txlm_file *f = NULL;
    rc = txlm_file_open(path, 0, &f, &err);
    CHECK(rc == 0 && f, "open empty: %s", err.msg);
    if (f) {
        CHECK(txlm_file_tensor_count(f) == 0, "no tensors");
        CHECK(txlm_file_size(f) % 256 == 0, "size %llu", (unsigned long long)txlm_file_size(f));
        txlm_file_close(f);
    }
    unlink(path);
    fmt_model_free(&m);
}

static void nbytes_rules(void)
{
    txlm_err err = {0, ""};
    CHECK(txlm_tensor_nbytes(TXLM_DT_F32, 2, (uint64_t[]){3, 5}, &err) == 60, "f32 3x5");
    CHECK(txlm_tensor_nbytes(TXLM_DT_F16, 1, (uint64_t[]){7}, &err) == 14, "f16 7");
    CHECK(txlm_tensor_nbytes(TXLM_DT_BF16, 1, (uint64_t[]){7}, &err) == 14, "bf16 7");
    CHECK(txlm_tensor_nbytes(TXLM_DT_Q8_0, 2, (uint64_t[]){3, 64}, &err) == 6 * 34, "q8_0 3x64");
    CHECK(txlm_tensor_nbytes(TXLM_DT_Q4_0, 2, (uint64_t[]){3, 64}, &err) == 6 * 18, "q4_0 3x64");
    /* A quantised block may not straddle rows. */
    err.code = 0;
    CHECK(txlm_tensor_nbytes(TXLM_DT_Q8_0, 2, (uint64_t[]){32, 48}, &err) == 0 && err.code == TXLM_ERR_FORMAT,
          "q8_0 last dim 48");
    CHECK(strstr(err.msg, "multiple") != NULL, "message: %s", err.msg);
    err.code = 0;
    CHECK(txlm_tensor_nbytes(TXLM_DT_Q4_0, 1, (uint64_t[]){16}, &err) == 0 && err.code == TXLM_ERR_FORMAT, "q4_0 16");
    err.code = 0;
    CHECK(txlm_tensor_nbytes(TXLM_DT_COUNT, 1, (uint64_t[]){16}, &err) == 0 && err.code == TXLM_ERR_UNSUPPORTED,
          "unknown dtype");
    err.code = 0;
    CHECK(txlm_tensor_nbytes(TXLM_DT_F32, 0, (uint64_t[]){1}, &err) == 0 && err.code == TXLM_ERR_FORMAT, "rank 0");
    err.code = 0;
    CHECK(txlm_tensor_nbytes(TXLM_DT_F32, 9, (uint64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, &err) == 0 && err.code, "rank 9");
    err.code = 0;
    CHECK(txlm_tensor_nbytes(TXLM_DT_F32, 2, (uint64_t[]){0, 4}, &err) == 0 && err.code, "zero dim");
    err.code = 0;
    CHECK(txlm_tensor_nbytes(TXLM_DT_F32, 1, (uint64_t[]){(1ull << 40) + 1}, &err) == 0 && err.code, "dim over 2^40");
    CHECK(txlm_tensor_nbytes(TXLM_DT_F32, 1, (uint64_t[]){1ull << 40}, &err) == 4ull << 40, "dim of exactly 2^40");
    err.code = 0;
    CHECK(txlm_tensor_nbytes(TXLM_DT_F32, 2, (uint64_t[]){1ull << 21, 1ull << 20}, &err) == 0 && err.code,
          "elements over 2^40");
    err.code = 0;
    CHECK(txlm_tensor_nbytes(TXLM_DT_F32, 4, (uint64_t[]){1ull << 40, 1ull << 40, 1ull << 40, 1ull << 40}, &err) == 0 &&
              err.code,
          "product overflowing 64 bits");
}

int main(void)
{
    char *dir = fmt_mkdtemp();
    if (!dir) {
        fprintf(stderr, "cannot create a temporary directory\n");
        return 1;
    }
    nbytes_rules();
    roundtrip(dir, TXLM_TOK_WORD);
    roundtrip(dir, TXLM_TOK_CHAR_BYTE);
    empty_model(dir);
    fmt_rmdir(dir);
    if (fmt_failures) fprintf(stderr, "%d checks failed\n", fmt_failures);
    else printf("round trip: all checks passed\n");
    return fmt_failures != 0;
}
