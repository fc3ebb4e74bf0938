/* Checks of a checkpoint's values (ckpt_checks.h). */
#include "ckpt_checks.h"

#include <inttypes.h>
#include <math.h>

#include "inv_freq.h"
#include "nonfinite.h"

#include <txlm_status.h>

int txlm_inv_freq_check(const txlm_src_tensor *t, uint32_t d_model, int *keep, txlm_err *err)
{
    uint64_t d = d_model;
    *keep = 0;
    if (t->rank != 1 || t->dims[0] != d / 2)
        return txlm_fail(err, TXLM_ERR_FORMAT, "tensor '%s': %" PRIu32 "-d with %" PRIu64 " elements, expected [%" PRIu64 "]",
                         t->name, t->rank, t->n_elems, d / 2);
    /* Relative tolerance: float32 rounding, or half of a 16-bit type's ulp. */
    double tol = t->dtype == TXLM_DT_F16 ? 1e-3 : t->dtype == TXLM_DT_BF16 ? 1e-2 : 1e-6;
    for (uint64_t k = 0; k < d / 2; k++) {
        double want = 1.0 / pow(10000.0, (double)(2 * k) / (double)d), got = txlm_src_get_f32(t, k);
        if (!(fabs(got - want) <= tol * want))
            return txlm_fail(err, TXLM_ERR_UNSUPPORTED,
                             "tensor '%s'[%" PRIu64 "] = %g, not the standard sinusoid frequency %g", t->name, k, got, want);
        /* float32 values within float32 rounding are the engine's own */
        float mine = txlm_inv_freq_std((uint32_t)k, d_model);
        if (t->dtype != TXLM_DT_F32 && (float)got != mine) *keep = 1;
    }
    return 0;
}

int txlm_check_finite(const txlm_checkpoint *ck, int allow, FILE *report, const char *who, txlm_err *err)
{
    uint32_t tensors = 0, first = 0;
    for (uint32_t i = 0; i < ck->n_tensors; i++) {
        const txlm_src_tensor *t = &ck->tensors[i];
        txlm_nonfinite nf;
        if (txlm_nonfinite_scan(t->dtype, t->data, t->n_elems, &nf) || !nf.count) continue;
        if (!tensors++) first = i;
        if (report)
            fprintf(report, "%stensor '%s': %" PRIu64 " non-finite value%s of %" PRIu64 ", the first at element %" PRIu64 " (%s)\n",
                    who, t->name, nf.count, nf.count == 1 ? "" : "s", t->n_elems, nf.first, txlm_nonfinite_name(nf.value));
    }
    if (!tensors || allow) return 0;
    return txlm_fail(err, TXLM_ERR_FORMAT,
                     "%" PRIu32 " tensor%s NaN or infinite values (the first: '%s'); --allow-nonfinite packs them anyway",
                     tensors, tensors == 1 ? " holds" : "s hold", ck->tensors[first].name);
}
