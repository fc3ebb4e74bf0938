/* The lines of txlm-pack --list (ckpt_list.h). */
#include "ckpt_list.h"

#include <inttypes.h>
#include <string.h>

#include "dtype.h"

void txlm_list_head(FILE *out, const char *name, const char *dtype, uint32_t rank, const uint64_t *dims)
{
    fprintf(out, "%s\t%s\t[", name, dtype);
    for (uint32_t i = 0; i < rank; i++) fprintf(out, "%s%" PRIu64, i ? ", " : "", dims[i]);
    fputs("]\t", out);
}

void txlm_checkpoint_print(const txlm_checkpoint *ck, FILE *out)
{
    for (uint32_t i = 0; i < ck->n_tensors; i++) {
        const txlm_src_tensor *t = &ck->tensors[i];
        const txlm_dtype_info *di = txlm_dtype_get(t->dtype);
        txlm_list_head(out, t->name, di ? di->name : "?", t->rank, t->dims);
        for (uint64_t k = 0; k < t->n_elems && k < TXLM_LIST_VALUES; k++)
            fprintf(out, "%s%.6g", k ? " " : "", (double)txlm_src_get_f32(t, k));
        fputc('\n', out);
    }
}
