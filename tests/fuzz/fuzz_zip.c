/* Zip directory reader (torch.save's container): every entry handed out
 * lies inside the input, is found by its name, and its CRC can be checked. */
#include <string.h>

#include "fuzz.h"
#include "zip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    txlm_zip z;
    txlm_err err = {0, ""};
    int rc = txlm_zip_open("zip", data, size, &z, &err);
    if (rc) {
        fuzz_require(err.code == rc && err.msg[0], "a status and a message on failure");
        return 0;
    }
    for (uint32_t i = 0; i < z.n; i++) {
        txlm_zip_entry *e = &z.entries[i];
        fuzz_require(e->offset <= size && e->size <= size - e->offset, "entry inside the input");
        fuzz_require(txlm_zip_find(&z, e->name, e->name_len) != NULL, "entry found by its name");
        txlm_err crc = {0, ""};
        if (txlm_zip_check_crc("zip", data, e, &crc)) fuzz_require(crc.code && crc.msg[0], "a message for a bad CRC");
    }
    txlm_zip_free(&z);
    return 0;
}
