/* A .txlm model stored in another dtype, for accuracy measurements
 * (docs/performance.md, "Matrix units"): f16, q8_0 or q4_0 stores the
 * tensors txlm-pack --dtype would (the tensor table's txlm_tt_stored_dtype)
 * rounded to that type;
 * f32 stores every tensor as f32, the values of the smaller types exactly.
 * So `retype_model m-f16.txlm m-f16as32.txlm f32` is the same weights on
 * the FP32 kernels (an f32 model never takes the matrix units), and
 * `txlm compare -m m-f16as32.txlm -m m-f16.txlm TEXT` measures what the
 * matrix units change.
 *
 * usage: retype_model IN.txlm OUT.txlm f32|f16|q8_0|q4_0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quantize.h"
#include "tensor_table.h"
#include "txlm_status.h"
#include "txlm_file.h"

static uint32_t dtype_named(const char *s)
{
    for (uint32_t d = 0; d < TXLM_DT_COUNT; d++)
        if (d != TXLM_DT_BF16 && !strcmp(txlm_dtype_get(d)->name, s)) return d;
    return TXLM_DT_COUNT;
}

/* The dtype txlm-pack --dtype want stores tensor `name` of a model with
 * hyper-parameters h in: the tensor table's rule, f32 for a name it lacks. */
static uint32_t stored_dtype(const txlm_hparams *h, const char *name, uint32_t want)
{
    txlm_tt_slot s;
    for (uint32_t id = 0; id < TXLM_TT_COUNT; id++)
        for (uint32_t i = 0, n = txlm_tt_count(h, (txlm_tt_id)id); i < n; i++)
            if (!txlm_tt_slot_of(h, (txlm_tt_id)id, i, &s) && !strcmp(s.name, name)) return txlm_tt_stored_dtype(&s, want);
    return TXLM_DT_F32;
}

/* Tensor t's data in dtype `to` (malloc'd into *out, its bytes in *nbytes). */
static int retype(const txlm_file *f, const txlm_tensor_info *t, uint32_t to, void **out, uint64_t *nbytes, txlm_err *err)
{
    *nbytes = txlm_tensor_nbytes(to, t->rank, t->dims, err);
    float *f32 = malloc(t->n_elems * sizeof *f32 + 4);
    *out = malloc(*nbytes + 4);
    if (!*nbytes || !f32 || !*out) {
        free(f32);
        return *nbytes ? txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory") : 1;
    }
    txlm_dequantize(t->dtype, txlm_file_data(f, t), t->n_elems, f32);
    switch (to) {
    case TXLM_DT_F16: txlm_quantize_f16(f32, t->n_elems, *out); break;
    case TXLM_DT_Q8_0: txlm_quantize_q8_0(f32, t->n_elems, *out); break;
    case TXLM_DT_Q4_0: txlm_quantize_q4_0(f32, t->n_elems, *out); break;
    default: memcpy(*out, f32, *nbytes); break;
    }
    free(f32);
    return 0;
}

int main(int argc, char **argv)
{
    uint32_t want = argc == 4 ? dtype_named(argv[3]) : TXLM_DT_COUNT;
    if (want == TXLM_DT_COUNT) {
        fprintf(stderr, "usage: %s IN.txlm OUT.txlm f32|f16|q8_0|q4_0\n", argv[0]);
        return 2;
    }
    txlm_err err = {0, ""};
    txlm_file *f = NULL;
    txlm_writer *w = NULL;
    int rc = txlm_file_open(argv[1], 0, &f, &err) || txlm_writer_open(argv[2], &w, &err) ||
             txlm_writer_set_hparams(w, txlm_file_hparams(f), &err) || txlm_writer_set_vocab(w, txlm_file_vocab(f), &err);
    uint32_t n = rc ? 0 : txlm_file_tensor_count(f);
    void **data = calloc(n + 1, sizeof *data);
    for (uint32_t i = 0; !rc && i < n; i++) {
        const txlm_tensor_info *t = txlm_file_tensor(f, i);
        uint32_t to = stored_dtype(txlm_file_hparams(f), t->name, want);
        uint64_t nbytes = 0;
        rc = retype(f, t, to, &data[i], &nbytes, &err) ||
             txlm_writer_add_tensor(w, t->name, (txlm_dtype)to, t->rank, t->dims, data[i], nbytes, &err);
    }
    if (!rc) rc = txlm_writer_finish(w, &err);
    else if (w) txlm_writer_abort(w);
    for (uint32_t i = 0; i < n; i++) free(data[i]);
    free(data);
    txlm_file_close(f);
    if (rc) fprintf(stderr, "retype_model: %s\n", err.msg);
    return rc ? 1 : 0;
}
