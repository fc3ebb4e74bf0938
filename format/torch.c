/* torch.save checkpoints: the zip or the legacy reader, chosen by the
 * file's first bytes. */
#include "torch.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <txlm.h>

#include "torch_read.h"
#include "open_input.h"

int txlm_torch_sniff(const void *head, uint64_t len)
{
    const uint8_t *h = head;
    return (len >= 4 && !memcmp(h, "PK\x03\x04", 4)) ||
           (len >= TXLM_TORCH_LEGACY_MAGIC_LEN && !memcmp(h, TXLM_TORCH_LEGACY_MAGIC, TXLM_TORCH_LEGACY_MAGIC_LEN));
}

int txlm_torch_open(const char *path, txlm_checkpoint **out, txlm_err *err)
{
    *out = NULL;
    unsigned char head[TXLM_TORCH_LEGACY_MAGIC_LEN];
    FILE *f;
    int open_rc = txlm_fopen_input(path, &f, err);
    if (open_rc) return open_rc;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    if (n >= 4 && !memcmp(head, "PK\x03\x04", 4)) return txlm_torch_zip_open(path, out, err);
    if (txlm_torch_sniff(head, n)) return txlm_torch_legacy_open(path, out, err);
    if (n >= 2 && head[0] == 0x80)
        return txlm_fail(err, TXLM_ERR_FORMAT,
                         "%s: a pickle without the legacy torch.save magic number: not a torch.save checkpoint", path);
    return txlm_fail(err, TXLM_ERR_FORMAT, "%s: not a torch.save file (neither a zip nor the legacy magic number)", path);
}
