/* Checks of a checkpoint's values (ckpt_checks.h). */
#include "ckpt_checks.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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

/* "tensor 'NAME': N non-finite value(s) of M, the first at element I (nan)" */
static void nonfinite_text(const txlm_src_tensor *t, const txlm_nonfinite *nf, char *out, size_t cap)
{
    snprintf(out, cap, "tensor '%s': %" PRIu64 " non-finite value%s of %" PRIu64 ", the first at element %" PRIu64 " (%s)",
             t->name, nf->count, nf->count == 1 ? "" : "s", t->n_elems, nf->first, txlm_nonfinite_name(nf->value));
}

int txlm_check_finite(const txlm_checkpoint *ck, int allow, FILE *report, const char *who, txlm_err *err)
{
    uint32_t tensors = 0;
    char first[1200] = "", line[1200];
    for (uint32_t i = 0; i < ck->n_tensors; i++) {
        const txlm_src_tensor *t = &ck->tensors[i];
        txlm_nonfinite nf;
        if (txlm_nonfinite_scan(t->dtype, t->data, t->n_elems, &nf) || !nf.count) continue;
        nonfinite_text(t, &nf, line, sizeof line);
        if (!tensors++) memcpy(first, line, sizeof line);
        if (report) fprintf(report, "%s%s\n", who, line);
    }
    if (!tensors || allow) return 0;
    return txlm_fail(err, TXLM_ERR_FORMAT, "%" PRIu32 " tensor%s NaN or infinite values (the first: %s); --allow-nonfinite "
                     "packs them anyway%s", tensors, tensors == 1 ? " holds" : "s hold", first,
                     tensors > 1 ? ", --verbose lists each" : "");
}
