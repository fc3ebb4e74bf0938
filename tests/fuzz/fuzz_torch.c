/* torch.save checkpoints (zip and legacy forms), opened from a file as
 * txlm-pack does: every tensor handed out can be read end to end. */
#include "checkpoint.h"
#include "fuzz.h"
#include "torch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)txlm_torch_sniff(data, size);
    txlm_checkpoint *c = NULL;
    txlm_err err = {0, ""};
    int rc = txlm_torch_open(fuzz_as_file(data, size), &c, &err);
    if (rc) {
        fuzz_require(c == NULL && err.code == rc && err.msg[0], "a status and a message on failure");
        return 0;
    }
    float sum = 0;
    for (uint32_t i = 0; i < c->n_tensors; i++) {
        const txlm_src_tensor *t = &c->tensors[i];
        fuzz_require(txlm_checkpoint_find(c, t->name) != NULL, "tensor found by its name");
        for (uint64_t k = 0; k < t->n_elems && k < 4096; k++) sum += txlm_src_get_f32(t, k);
        if (t->n_elems) sum += txlm_src_get_f32(t, t->n_elems - 1);
    }
    (void)sum;
    txlm_checkpoint_free(c);
    return 0;
}
