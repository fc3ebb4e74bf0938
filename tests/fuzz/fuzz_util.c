/* memfd_create is a Linux (GNU) extension. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <txlm.h>

#include "fuzz.h"
#include "txlm_layout.h"

void fuzz_require(int cond, const char *what)
{
    if (cond) return;
    fprintf(stderr, "fuzz invariant broken: %s\n", what);
    abort();
}

const char *fuzz_as_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("fuzz-input", MFD_CLOEXEC);
        fuzz_require(fd >= 0, "memfd_create");
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    fuzz_require(ftruncate(fd, 0) == 0, "truncating the input file");
    size_t done = 0;
    while (done < size) {
        ssize_t w = pwrite(fd, data + done, size - done, (off_t)done);
        fuzz_require(w > 0, "writing the input file");
        done += (size_t)w;
    }
    return path;
}

void fuzz_vocab_result(int rc, txlm_vocab_buf *b, const txlm_err *err)
{
    if (rc) {
        fuzz_require(err->code == rc && err->msg[0], "a status and a message on failure");
        return;
    }
    txlm_err why = {0, ""};
    fuzz_require(txlm_vocab_check(&b->v, "vocabulary", TXLM_ERR_FORMAT, &why) == 0,
                 "accepted vocabulary passes the writer's check");
    txlm_vocab_buf_free(b);
}
