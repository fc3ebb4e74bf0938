/* torch.save checkpoints (zip and legacy forms), opened from a file as
 * txlm-pack does: every tensor handed out can be read end to end. */
#include "checkpoint.h"
#include "ckpt_source.h"
#include "fuzz.h"
#include "torch.h"

/* The training-checkpoint readers (NVIDIA's dict, a whole module) on
 * whatever object the file holds. */
static void training_forms(const char *path)
{
    txlm_torch_obj *o = NULL;
    txlm_err err = {0, ""};
    if (txlm_torch_load(path, &o, &err)) return;
    const txlm_pk_value *root = txlm_torch_root(o);
    txlm_source s;
    int rc = -1;
    if (txlm_nvidia_is(root)) rc = txlm_nvidia_read(o, &s, &err);
    else if (txlm_module_is(root)) rc = txlm_module_read(o, &s, &err);
    if (rc > 0) fuzz_require(err.code == rc && err.msg[0], "a status and a message on failure");
    if (rc >= 0) txlm_source_free(&s);
    txlm_torch_free(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)txlm_torch_sniff(data, size);
    txlm_checkpoint *c = NULL;
    txlm_err err = {0, ""};
    const char *path = fuzz_as_file(data, size);
    training_forms(path);
    int rc = txlm_torch_open(path, &c, &err);
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
