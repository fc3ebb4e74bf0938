/* config.json parsing: whatever is accepted passes the engine's own checks. */
#include <string.h>

#include "fuzz.h"
#include "pack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    txlm_hparams h;
    txlm_err err = {0, ""};
    int rc = txlm_config_parse_json((const char *)data, size, &h, &err);
    if (rc) {
        fuzz_require(err.code == rc && err.msg[0], "a status and a message on failure");
        return 0;
    }
    char why[256];
    fuzz_require(txlm_hparams_validate(&h, why, sizeof why) == 0, "accepted hyper-parameters are valid");
    return 0;
}
