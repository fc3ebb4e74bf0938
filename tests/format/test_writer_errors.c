/* The writer refuses bad input and, whatever fails and wherever, leaves
 * neither the output nor its temporary file behind. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <txlm.h>

#include "fmt_common.h"

static fmt_model model;
static char *dir;

static void paths(const char *name, char *path, char *tmp)
{
    snprintf(path, 4096, "%s/%s", dir, name);
    snprintf(tmp, 4200, "%s.tmp", path);
}

/* A file beside path whose name starts with path's (its temporaries are
 * "<name>.<random>.tmp"), other than `except`; NULL when there is none. */
static const char *leftover(const char *path, const char *except)
{
    static char found[300];
    const char *slash = strrchr(path, '/'), *base = slash + 1;
    char parent[4096];
    snprintf(parent, sizeof parent, "%.*s", (int)(slash - path), path);
    DIR *d = opendir(parent);
    const char *hit = NULL;
    for (struct dirent *e; d && !hit && (e = readdir(d));)
        if (!strncmp(e->d_name, base, strlen(base)) && strcmp(e->d_name, base) && (!except || !strstr(except, e->d_name)))
            hit = found, snprintf(found, sizeof found, "%s", e->d_name);
    if (d) closedir(d);
    return hit;
}

static void expect_nothing(const char *what, const char *path, const char *tmp)
{
    CHECK(!fmt_exists(path), "%s: %s exists", what, path);
    const char *left = leftover(path, NULL);
    CHECK(!left, "%s: %s left behind", what, left);
    (void)tmp;
}

static txlm_writer *start(const char *path, int with_tensors)
{
    txlm_writer *w = NULL;
    txlm_err err = {0, ""};
    int rc = txlm_writer_open(path, &w, &err);
    if (!rc) rc = txlm_writer_set_hparams(w, &model.hp, &err);
    if (!rc) rc = txlm_writer_set_vocab(w, &model.vocab, &err);
    for (int i = 0; i < with_tensors && !rc; i++)
        rc = txlm_writer_add_tensor(w, model.t[i].name, (txlm_dtype)model.t[i].dtype, model.t[i].rank, model.t[i].dims,
                                    model.t[i].data, model.t[i].nbytes, &err);
    CHECK(rc == 0, "setting up %s: %s", path, err.msg);
    return w;
}

/* A failing add_tensor: its status, then finish repeats it, nothing is left. */
static void failing_add(const char *what, const char *name, uint32_t dtype, uint32_t rank, const uint64_t *dims,
                        const void *data, uint64_t nbytes, int want, const char *needle)
{
    char path[4096], tmp[4200];
    paths("bad.txlm", path, tmp);
    txlm_writer *w = start(path, 2);
    if (!w) return;
    CHECK(!fmt_exists(path), "%s: the output appears before finish", what);
    txlm_err err = {0, ""};
    int rc = txlm_writer_add_tensor(w, name, (txlm_dtype)dtype, rank, dims, data, nbytes, &err);
    CHECK(rc == want && err.code == want, "%s: status %d, expected %d: %s", what, rc, want, err.msg);
    CHECK(strstr(err.msg, path) != NULL, "%s: message '%s' does not name the file", what, err.msg);
    if (needle) CHECK(strstr(err.msg, needle) != NULL, "%s: message '%s' lacks '%s'", what, err.msg, needle);
    /* Later calls keep failing: a file missing a tensor is never produced. */
    txlm_err err2 = {0, ""};
    rc = txlm_writer_add_tensor(w, "later", TXLM_DT_F32, 1, (uint64_t[]){1}, model.t[0].data, 4, &err2);
    CHECK(rc == want, "%s: later add gave %d", what, rc);
    txlm_err err3 = {0, ""};
    rc = txlm_writer_finish(w, &err3);
    CHECK(rc == want && strcmp(err3.msg, err.msg) == 0, "%s: finish gave %d '%s'", what, rc, err3.msg);
    expect_nothing(what, path, tmp);
}

static void bad_tensors(void)
{
    const fmt_tensor *t0 = &model.t[0];
    failing_add("duplicate name", model.t[1].name, TXLM_DT_F32, 1, (uint64_t[]){1}, t0->data, 4,
                TXLM_ERR_INVALID_ARGUMENT, "twice");
    failing_add("nbytes not matching dims", "x", TXLM_DT_F32, 2, (uint64_t[]){3, 4}, t0->data, 44, TXLM_ERR_INVALID_ARGUMENT,
                "48");
    failing_add("q4_0 row not whole blocks", "x", TXLM_DT_Q4_0, 1, (uint64_t[]){48}, t0->data, 27,
                TXLM_ERR_INVALID_ARGUMENT, "multiple");
    failing_add("unknown dtype", "x", 99, 1, (uint64_t[]){4}, t0->data, 16, TXLM_ERR_INVALID_ARGUMENT, "dtype");
    failing_add("rank 9", "x", TXLM_DT_F32, 9, (uint64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, t0->data, 4,
                TXLM_ERR_INVALID_ARGUMENT, "rank");
    failing_add("empty name", "", TXLM_DT_F32, 1, (uint64_t[]){1}, t0->data, 4, TXLM_ERR_INVALID_ARGUMENT, "name");
    failing_add("no data", "x", TXLM_DT_F32, 1, (uint64_t[]){1}, NULL, 4, TXLM_ERR_INVALID_ARGUMENT, "data");
    failing_add("name not UTF-8", "bad\xFFname", TXLM_DT_F32, 1, (uint64_t[]){1}, t0->data, 4, TXLM_ERR_INVALID_ARGUMENT,
                "UTF-8");
    char long_name[TXLM_MAX_NAME + 1];
    memset(long_name, 'n', TXLM_MAX_NAME);
    long_name[TXLM_MAX_NAME] = 0;
    failing_add("96-byte name", long_name + 0, TXLM_DT_F32, 1, (uint64_t[]){1}, t0->data, 4, TXLM_ERR_INVALID_ARGUMENT,
                "longer");

    /* The longest name that fits (95 bytes) is fine. */
    char path[4096], tmp[4200];
    paths("long.txlm", path, tmp);
    txlm_writer *w = start(path, 0);
    txlm_err err = {0, ""};
    long_name[TXLM_MAX_NAME - 1] = 0;
    int rc = txlm_writer_add_tensor(w, long_name, TXLM_DT_F32, 1, (uint64_t[]){1}, t0->data, 4, &err);
    CHECK(rc == 0, "95-byte name: %s", err.msg);
    rc = txlm_writer_finish(w, &err);
    CHECK(rc == 0, "finish with a 95-byte name: %s", err.msg);
    txlm_file *f = NULL;
    CHECK(txlm_file_open(path, 0, &f, &err) == 0 && txlm_file_find(f, long_name), "95-byte name read back: %s", err.msg);
    txlm_file_close(f);
    unlink(path);
}

static void bad_metadata(void)
{
    char path[4096], tmp[4200];
    paths("meta.txlm", path, tmp);
    txlm_err err = {0, ""};
    txlm_writer *w;

    /* Invalid hyper-parameters. */
    CHECK(txlm_writer_open(path, &w, &err) == 0, "open: %s", err.msg);
    txlm_hparams h = model.hp;
    h.d_model = 33;
    CHECK(txlm_writer_set_hparams(w, &h, &err) == TXLM_ERR_INVALID_ARGUMENT && strstr(err.msg, "d_model"), "odd d_model: %s",
          err.msg);
    CHECK(txlm_writer_finish(w, &err) == TXLM_ERR_INVALID_ARGUMENT, "finish after bad hparams");
    expect_nothing("invalid hparams", path, tmp);

    /* Vocabulary size differing from n_token, found at finish. */
    w = start(path, 1);
    fmt_model small;
    fmt_model_build(&small, 5, TXLM_TOK_CHAR_BYTE);
    CHECK(txlm_writer_set_vocab(w, &small.vocab, &err) == 0, "256-symbol vocab: %s", err.msg);
    CHECK(txlm_writer_finish(w, &err) == TXLM_ERR_INVALID_ARGUMENT && strstr(err.msg, "n_token"), "vocab n != n_token: %s",
          err.msg);
    expect_nothing("vocab size mismatch", path, tmp);

    /* Vocabulary invalid in itself. */
    CHECK(txlm_writer_open(path, &w, &err) == 0, "open: %s", err.msg);
    txlm_vocab v = model.vocab;
    v.eos_id = (int32_t)v.n;
    CHECK(txlm_writer_set_vocab(w, &v, &err) == TXLM_ERR_INVALID_ARGUMENT && strstr(err.msg, "eos_id"), "eos_id: %s", err.msg);
    txlm_writer_abort(w);
    expect_nothing("vocab eos_id", path, tmp);
    CHECK(txlm_writer_open(path, &w, &err) == 0, "open: %s", err.msg);
    small.blob[200] = (char)0xFF; /* fine for a byte vocabulary (bytes 200 and 255 swapped: no symbol twice) ... */
    small.blob[255] = (char)200;
    CHECK(txlm_writer_set_vocab(w, &small.vocab, &err) == 0, "byte vocab with 0xFF: %s", err.msg);
    small.vocab.kind = TXLM_TOK_CHAR_TEXT8; /* ... not for a character one */
    CHECK(txlm_writer_set_vocab(w, &small.vocab, &err) == TXLM_ERR_INVALID_ARGUMENT && strstr(err.msg, "UTF-8"),
          "text vocab with a lone 0x80: %s", err.msg);
    txlm_writer_abort(w);
    expect_nothing("vocab UTF-8", path, tmp);
    fmt_model_free(&small);

    /* Nothing set at all. */
    CHECK(txlm_writer_open(path, &w, &err) == 0, "open: %s", err.msg);
    CHECK(txlm_writer_finish(w, &err) == TXLM_ERR_INVALID_ARGUMENT && strstr(err.msg, "hyper-parameters"), "empty: %s",
          err.msg);
    expect_nothing("nothing set", path, tmp);

    /* Abort after a complete set-up. */
    w = start(path, model.n_tensors);
    txlm_writer_abort(w);
    expect_nothing("abort", path, tmp);
}

static void unwritable(void)
{
    char path[4096], tmp[4200];
    txlm_err err = {0, ""};
    txlm_writer *w = (txlm_writer *)&err;
    snprintf(path, sizeof path, "%s/no/such/dir/m.txlm", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    CHECK(txlm_writer_open(path, &w, &err) == TXLM_ERR_IO && strstr(err.msg, "no/such/dir"), "missing directory: %s", err.msg);
    CHECK(w == NULL, "no writer on failure");
    expect_nothing("missing directory", path, tmp);

    /* A regular file where a directory should be. */
    char file[4096];
    snprintf(file, sizeof file, "%s/plain", dir);
    fmt_write_all(file, "x", 1);
    snprintf(path, sizeof path, "%s/plain/m.txlm", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    CHECK(txlm_writer_open(path, &w, &err) == TXLM_ERR_IO, "file as directory: %s", err.msg);
    expect_nothing("file as directory", path, tmp);
    unlink(file);

    /* The output is a non-empty directory: refused before anything is written. */
    paths("taken.txlm", path, tmp);
    mkdir(path, 0755);
    char inner[4200];
    snprintf(inner, sizeof inner, "%s/keep", path);
    fmt_write_all(inner, "x", 1);
    CHECK(txlm_writer_open(path, &w, &err) == TXLM_ERR_IO && strstr(err.msg, "is a directory"), "a directory as output: %s",
          err.msg);
    CHECK(fmt_exists(inner) && !leftover(path, NULL), "a directory as output: touched, or a temporary left");
    unlink(inner);
    rmdir(path);
}

/* The data write fails part-way: the file-size limit drops once writing has begun. */
static struct rlimit saved_limit;
static void drop_limit(void *user, uint64_t done, uint64_t total)
{
    (void)done;
    (void)total;
    int *calls = user;
    if ((*calls)++ == 0) {
        struct rlimit r = saved_limit;
        r.rlim_cur = 4096;
        setrlimit(RLIMIT_FSIZE, &r);
    }
}

static void failing_write(void)
{
    char path[4096], tmp[4200];
    paths("full.txlm", path, tmp);
    if (getrlimit(RLIMIT_FSIZE, &saved_limit) != 0) return;
    signal(SIGXFSZ, SIG_IGN);
    txlm_writer *w = start(path, model.n_tensors);
    int calls = 0;
    txlm_writer_set_progress(w, drop_limit, &calls);
    txlm_err err = {0, ""};
    int rc = txlm_writer_finish(w, &err);
    setrlimit(RLIMIT_FSIZE, &saved_limit);
    CHECK(calls >= 1, "progress was never called");
    CHECK(rc == TXLM_ERR_IO && strstr(err.msg, "write"), "write failing part-way: %d %s", rc, err.msg);
    expect_nothing("write failing part-way", path, tmp);
}

/* An existing file is replaced on success and left alone on failure; a
 * file at the old temporary name ("<path>.tmp") is neither used nor removed. */
static void existing_files(void)
{
    char path[4096], tmp[4200];
    paths("exists.txlm", path, tmp);
    fmt_write_all(path, "old", 3);
    fmt_write_all(tmp, "stale temporary", 15);
    txlm_writer *w = start(path, 1);
    txlm_err err = {0, ""};
    txlm_writer_add_tensor(w, model.t[0].name, TXLM_DT_F32, 1, (uint64_t[]){1}, model.t[0].data, 4, &err);
    CHECK(txlm_writer_finish(w, &err) != 0, "duplicate must fail");
    size_t len = 0;
    uint8_t *b = fmt_read_all(path, &len);
    CHECK(b && len == 3 && memcmp(b, "old", 3) == 0, "the existing file was touched");
    free(b);
    CHECK(!leftover(path, tmp), "temporary file left after a failure");
    CHECK((b = fmt_read_all(tmp, &len)) && len == 15, "the file at the old temporary name changed");
    free(b);

    CHECK(fmt_model_write(&model, path, &err) == 0, "overwrite: %s", err.msg);
    txlm_file *f = NULL;
    CHECK(txlm_file_open(path, 0, &f, &err) == 0 && txlm_file_tensor_count(f) == (uint32_t)model.n_tensors,
          "replaced file: %s", err.msg);
    txlm_file_close(f);
    CHECK(!leftover(path, tmp), "temporary file left after success");
    CHECK((b = fmt_read_all(tmp, &len)) && len == 15, "the file at the old temporary name changed");
    free(b);
    unlink(tmp);
    unlink(path);
}

int main(void)
{
    dir = fmt_mkdtemp();
    if (!dir) return 1;
    fmt_model_build(&model, 7, TXLM_TOK_WORD);
    bad_tensors();
    bad_metadata();
    unwritable();
    failing_write();
    existing_files();
    fmt_model_free(&model);
    fmt_rmdir(dir);
    if (fmt_failures) fprintf(stderr, "%d checks failed\n", fmt_failures);
    else printf("writer errors: all checks passed\n");
    return fmt_failures != 0;
}
