/* Whole-file read-only mappings: the checkpoint readers hand out tensor
 * data as pointers into the file, so a checkpoint is never copied. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <txlm_status.h>

#include "file_map.h"
#include "open_input.h"

int txlm_file_map_open(const char *path, txlm_file_map *m, txlm_err *err)
{
    memset(m, 0, sizeof *m);
    int fd;
    int rc = txlm_open_input(path, &fd, err);
    if (rc) return rc;
    struct stat st;
    if (fstat(fd, &st) != 0) rc = txlm_fail(err, TXLM_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
    else if ((uint64_t)st.st_size > SIZE_MAX) rc = txlm_fail(err, TXLM_ERR_LIMIT, "%s: too large to map", path);
    if (rc || st.st_size == 0) {
        close(fd);
        if (!rc) m->data = (const uint8_t *)"";
        return rc;
    }
    void *addr = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (addr == MAP_FAILED) return txlm_fail(err, TXLM_ERR_IO, "%s: cannot map: %s", path, strerror(e));
    m->data = addr;
    m->len = (uint64_t)st.st_size;
    return 0;
}

void txlm_file_map_close(txlm_file_map *m)
{
    if (m->len) munmap((void *)m->data, (size_t)m->len);
    memset(m, 0, sizeof *m);
}
