/* A TensorFlow bundle's .index (tf_table.c, tf_proto.c, tf_bundle.c) and
 * the authors' layout read from it (tf_layout.c): the table's blocks,
 * snappy, CRCs, entries and protos, then the shapes' hyper-parameters.
 * Without shards no tensor's bytes can be read, so the layout stops at the
 * first one it takes, having read the shapes. */
#include <string.h>

#include "fuzz.h"
#include "tf_bundle.h"
#include "tf_layout.h"
#include "tf_table.h"

static int each(void *user, const txlm_tf_entry *e, txlm_err *err)
{
    (void)err, (void)user;
    fuzz_require(e->klen < (1u << 30) && e->vlen < (1u << 30), "entry lengths bounded");
    /* every byte handed out is read, so ASan sees one outside its block */
    volatile uint8_t sum = 0;
    for (uint32_t i = 0; i < e->klen; i++) sum ^= e->key[i];
    for (uint32_t i = 0; i < e->vlen; i++) sum ^= e->val[i];
    (void)sum;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    txlm_err err = {0, ""};
    int rc = txlm_tf_table_each("index", data, size, each, NULL, &err);
    if (rc) fuzz_require(err.code == rc && err.msg[0], "a status and a message on failure");
    txlm_tf_bundle *b = NULL;
    err = (txlm_err){0, ""};
    rc = txlm_tf_bundle_open_memory("index", data, size, &b, &err);
    if (rc) {
        fuzz_require(err.code == rc && err.msg[0], "a status and a message on failure");
        return 0;
    }
    for (uint32_t i = 0; i < txlm_tf_bundle_count(b); i++) {
        const txlm_tf_tensor *t = txlm_tf_bundle_at(b, i);
        uint64_t n = 1;
        for (uint32_t k = 0; k < t->rank; k++) n *= t->dims[k];
        fuzz_require(t->rank <= TXLM_TF_MAX_RANK && n == t->n_elems && t->name[0] && strlen(t->name) < 1024,
                     "entries of bounded rank, counted elements, a name");
        fuzz_require(txlm_tf_bundle_find(b, t->name) != NULL, "found by name");
    }
    txlm_hparams h;
    txlm_checkpoint *ck = NULL;
    uint32_t skipped = 0;
    err = (txlm_err){0, ""};
    rc = txlm_tf_layout(b, &h, &ck, &skipped, &err); /* takes b */
    fuzz_require(rc && err.code == rc && err.msg[0], "no tensor is readable without shards, and the refusal says why");
    return 0;
}
