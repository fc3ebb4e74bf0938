/* vocab.txt parsing from memory: an accepted vocabulary satisfies what the
 * .txlm writer requires of one. */
#include <stdlib.h>
#include <string.h>

#include <txlm.h>

#include "fuzz.h"
#include "pack.h"
#include "txlm_layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > UINT32_MAX) return 0;
    char *text = malloc(size ? size : 1);
    if (!text) return 0;
    memcpy(text, data, size);
    txlm_vocab_buf b;
    txlm_err err = {0, ""};
    int rc = txlm_vocab_parse_txt("vocab.txt", text, (uint32_t)size, &b, &err);
    if (rc) {
        fuzz_require(err.code == rc && err.msg[0], "a status and a message on failure");
        return 0;
    }
    txlm_err why = {0, ""};
    fuzz_require(txlm_vocab_check(&b.v, "vocab.txt", TXLM_ERR_FORMAT, &why) == 0, "accepted vocabulary passes the writer's check");
    txlm_vocab_buf_free(&b);
    return 0;
}
