/* Pickled vocabularies (plain pickle or legacy torch.save of a tokenizer's
 * attributes): an accepted vocabulary satisfies the .txlm writer's check. */
#include "fuzz.h"
#include "torch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)txlm_vocab_sniff_pickle(data, size);
    txlm_vocab_buf b;
    txlm_err err = {0, ""};
    fuzz_vocab_result(txlm_vocab_load_pickle(fuzz_as_file(data, size), &b, &err), &b, &err);
    return 0;
}
