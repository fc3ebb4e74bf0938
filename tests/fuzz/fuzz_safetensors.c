/* safetensors reader from memory: every tensor handed out must lie inside
 * the input, and its first and last elements must be readable. An input
 * that starts with '{' is a bare JSON header: it gets its length prefix
 * and a 64-byte data area, so that mutations of the JSON are not wasted
 * on a length that no longer matches. */
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "fuzz.h"

static void open_image(const uint8_t *data, size_t size)
{
    txlm_checkpoint *c = NULL;
    txlm_err err = {0, ""};
    int rc = txlm_safetensors_open_memory(data, size, &c, &err);
    if (rc) {
        fuzz_require(c == NULL && err.code == rc && err.msg[0], "a status and a message on failure");
        return;
    }
    const uint8_t *lo = data, *hi = data + size;
    float sum = 0;
    for (uint32_t i = 0; i < c->n_tensors; i++) {
        const txlm_src_tensor *t = &c->tensors[i];
        const uint8_t *p = t->data;
        fuzz_require(t->nbytes == 0 || (p >= lo && p <= hi && t->nbytes <= (uint64_t)(hi - p)), "tensor inside the input");
        fuzz_require(txlm_checkpoint_find(c, t->name) == t, "tensor found by its name");
        if (t->n_elems) sum += txlm_src_get_f32(t, 0) + txlm_src_get_f32(t, t->n_elems - 1);
    }
    (void)sum;
    txlm_checkpoint_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || data[0] != '{') {
        open_image(data, size);
        return 0;
    }
    uint8_t *img = malloc(8 + size + 64);
    if (!img) return 0;
    for (int i = 0; i < 8; i++) img[i] = (uint8_t)((uint64_t)size >> (8 * i));
    memcpy(img + 8, data, size);
    for (int i = 0; i < 64; i++) img[8 + size + i] = (uint8_t)(i * 29 + 7);
    open_image(img, 8 + size + 64);
    free(img);
    return 0;
}
