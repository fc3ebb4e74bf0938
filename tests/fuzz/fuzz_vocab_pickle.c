/* Pickled vocabularies (plain pickle or legacy torch.save of a tokenizer's
 * attributes): an accepted vocabulary satisfies the .txlm writer's check. */
#include <txlm.h>

#include "fuzz.h"
#include "torch.h"
#include "txlm_layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)txlm_vocab_sniff_pickle(data, size);
    txlm_vocab_buf b;
    txlm_err err = {0, ""};
    int rc = txlm_vocab_load_pickle(fuzz_as_file(data, size), &b, &err);
    if (rc) {
        fuzz_require(err.code == rc && err.msg[0], "a status and a message on failure");
        return 0;
    }
    txlm_err why = {0, ""};
    fuzz_require(txlm_vocab_check(&b.v, "vocabulary", TXLM_ERR_FORMAT, &why) == 0, "accepted vocabulary passes the writer's check");
    txlm_vocab_buf_free(&b);
    return 0;
}
