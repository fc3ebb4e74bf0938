/* The lines of txlm-pack --list (ckpt_list.h). */
#include "ckpt_list.h"

#include <inttypes.h>
#include <string.h>

#include "dtype.h"

#define FIRST 4u

static void dims(FILE *out, uint32_t rank, const uint64_t *d)
{
    fputc('[', out);
    for (uint32_t i = 0; i < rank; i++) fprintf(out, "%s%" PRIu64, i ? ", " : "", d[i]);
    fputc(']', out);
}

void txlm_checkpoint_print(const txlm_checkpoint *ck, FILE *out)
{
    for (uint32_t i = 0; i < ck->n_tensors; i++) {
        const txlm_src_tensor *t = &ck->tensors[i];
        const txlm_dtype_info *di = txlm_dtype_get(t->dtype);
        fprintf(out, "%s\t%s\t", t->name, di ? di->name : "?");
        dims(out, t->rank, t->dims);
        fputc('\t', out);
        for (uint64_t k = 0; k < t->n_elems && k < FIRST; k++) fprintf(out, "%s%.6g", k ? " " : "", (double)txlm_src_get_f32(t, k));
        fputc('\n', out);
    }
}

int txlm_tf_bundle_print(const txlm_tf_bundle *b, FILE *out, txlm_err *err)
{
    for (uint32_t i = 0; i < txlm_tf_bundle_count(b); i++) {
        const txlm_tf_tensor *t = txlm_tf_bundle_at(b, i);
        char buf[32];
        uint32_t es = txlm_tf_float_size(t->dtype);
        const uint8_t *d = NULL;
        int rc = es ? txlm_tf_bundle_data(b, t, &d, err) : 0;
        if (rc) return rc;
        fprintf(out, "%s\t%s\t", t->name, txlm_tf_dtype_name(t->dtype, buf, sizeof buf));
        dims(out, t->rank, t->dims);
        fputc('\t', out);
        if (!es) fputs("(not read)", out);
        for (uint64_t k = 0; d && k < t->n_elems && k < FIRST; k++) fprintf(out, "%s%.6g", k ? " " : "", txlm_tf_elem(d, t->dtype, k));
        fputc('\n', out);
    }
    return 0;
}
