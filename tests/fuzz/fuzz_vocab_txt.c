/* vocab.txt parsing from memory: an accepted vocabulary satisfies what the
 * .txlm writer requires of one. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > UINT32_MAX) return 0;
    char *text = malloc(size ? size : 1);
    if (!text) return 0;
    memcpy(text, data, size);
    txlm_vocab_buf b;
    txlm_err err = {0, ""};
    fuzz_vocab_result(txlm_vocab_parse_txt("vocab.txt", text, (uint32_t)size, &b, &err), &b, &err);
    return 0;
}
