/* Inputs that are not regular files (format/container/open_input.c): every reader
 * refuses a FIFO at once, with a message naming the path and "a FIFO",
 * instead of blocking in open() until a writer appears; a directory and a
 * character device are refused too; a symbolic link to a regular file is
 * still read. An alarm turns a blocked open into a failure, not a hang. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <txlm.h>

#include "checkpoint.h"
#include "fmt_common.h"
#include "open_input.h"
#include "pack.h"
#include "torch.h"

typedef int (*reader)(const char *path, txlm_err *err);

static int r_txlm(const char *p, txlm_err *e)
{
    txlm_file *f = NULL;
    int rc = txlm_file_open(p, 0, &f, e);
    txlm_file_close(f);
    return rc;
}

static int r_checkpoint(const char *p, txlm_err *e)
{
    txlm_checkpoint *c = NULL;
    int rc = txlm_checkpoint_open(p, &c, e);
    txlm_checkpoint_free(c);
    return rc;
}

static int r_safetensors(const char *p, txlm_err *e)
{
    txlm_checkpoint *c = NULL;
    int rc = txlm_safetensors_open(p, &c, e);
    txlm_checkpoint_free(c);
    return rc;
}

static int r_torch(const char *p, txlm_err *e)
{
    txlm_checkpoint *c = NULL;
    int rc = txlm_torch_open(p, &c, e);
    txlm_checkpoint_free(c);
    return rc;
}

static int r_config(const char *p, txlm_err *e)
{
    txlm_hparams h;
    return txlm_config_load_json(p, &h, e);
}

static int r_vocab_txt(const char *p, txlm_err *e)
{
    txlm_vocab_buf v;
    memset(&v, 0, sizeof v);
    int rc = txlm_vocab_load_txt(p, &v, e);
    txlm_vocab_buf_free(&v);
    return rc;
}

static int r_vocab_pickle(const char *p, txlm_err *e)
{
    txlm_vocab_buf v;
    int rc = txlm_vocab_load_pickle(p, &v, e);
    if (!rc) txlm_vocab_buf_free(&v);
    return rc;
}

static int r_open(const char *p, txlm_err *e)
{
    FILE *f = NULL;
    int rc = txlm_fopen_input(p, &f, e);
    if (f) fclose(f);
    return rc;
}

int main(void)
{
    alarm(20); /* a reader that blocks fails the test instead of hanging it */
    char *dir = fmt_mkdtemp(), fifo[4096], sub[4096], link[4096], model[4096];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(link, sizeof link, "%s/link.txlm", dir);
    snprintf(model, sizeof model, "%s/m.txlm", dir);
    CHECK(mkfifo(fifo, 0644) == 0, "mkfifo: %s", strerror(errno));
    mkdir(sub, 0755);
    struct {
        const char *name;
        reader fn;
    } readers[] = {{"txlm_file_open", r_txlm},           {"txlm_checkpoint_open", r_checkpoint},
                   {"txlm_safetensors_open", r_safetensors}, {"txlm_torch_open", r_torch},
                   {"txlm_config_load_json", r_config},  {"txlm_vocab_load_txt", r_vocab_txt},
                   {"txlm_vocab_load_pickle", r_vocab_pickle}, {"txlm_fopen_input", r_open}};
    struct {
        const char *path, *kind;
    } inputs[] = {{fifo, "a FIFO"}, {sub, "a directory"}, {"/dev/null", "a character device"}};
    for (size_t r = 0; r < sizeof readers / sizeof *readers; r++)
        for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
            txlm_err err = {0, ""};
            int rc = readers[r].fn(inputs[i].path, &err);
            CHECK(rc == TXLM_ERR_IO && strstr(err.msg, inputs[i].path) && strstr(err.msg, inputs[i].kind),
                  "%s on %s: status %d, '%s'", readers[r].name, inputs[i].kind, rc, err.msg);
        }

    /* A link to a regular file is an ordinary input. */
    fmt_model m;
    fmt_model_build(&m, 5, TXLM_TOK_CHAR_BYTE);
    txlm_err err = {0, ""};
    CHECK(fmt_model_write(&m, model, &err) == 0, "write: %s", err.msg);
    CHECK(symlink(model, link) == 0, "symlink: %s", strerror(errno));
    CHECK(r_txlm(link, &err) == 0, "a link to a model: %s", err.msg);
    fmt_model_free(&m);
    unlink(link), unlink(model), unlink(fifo), rmdir(sub);
    fmt_rmdir(dir);
    if (fmt_failures) fprintf(stderr, "%d checks failed\n", fmt_failures);
    else printf("special files: all checks passed\n");
    return fmt_failures != 0;
}
