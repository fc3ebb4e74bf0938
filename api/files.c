/* The public API's file functions (include/txlm_files.h): a .txlm file
 * read without a device, inputs that cannot block, atomic outputs. */
#include <stdlib.h>
#include <string.h>

#include "atomic_write.h"
#include "nonfinite.h"
#include "open_input.h"
#include "same_file.h"
#include "txlm.h"
#include "txlm_api_error.h"
#include "txlm_file.h"

struct txlm_model_file {
    txlm_file *f;
};

txlm_status txlm_model_file_open(const char *path, int no_verify, txlm_model_file **out)
{
    if (!out) return txlm_api_bad_arg("txlm_model_file_open: out is NULL");
    *out = NULL;
    if (!path) return txlm_api_bad_arg("txlm_model_file_open: path is NULL");
    txlm_model_file *mf = calloc(1, sizeof *mf);
    txlm_err err = {0};
    if (!mf) return txlm_api_fail((txlm_fail(&err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", path), &err));
    if (txlm_file_open(path, no_verify ? TXLM_OPEN_NO_VERIFY : 0, &mf->f, &err)) {
        free(mf);
        return txlm_api_fail(&err);
    }
    *out = mf;
    return TXLM_OK;
}

void txlm_model_file_close(txlm_model_file *f)
{
    if (!f) return;
    txlm_file_close(f->f);
    free(f);
}

void txlm_model_file_get_info(const txlm_model_file *f, txlm_model_file_info *out)
{
    static const char *kinds[] = {"word", "char-byte", "char-text8"};
    const txlm_hparams *h = txlm_file_hparams(f->f);
    const txlm_vocab *v = txlm_file_vocab(f->f);
    *out = (txlm_model_file_info){
        .version_minor = txlm_file_version_minor(f->f), .size = txlm_file_size(f->f),
        .n_token = h->n_token, .d_model = h->d_model, .d_embed = h->d_embed, .n_head = h->n_head,
        .d_head = h->d_head, .d_inner = h->d_inner, .n_layer = h->n_layer,
        .div_val = h->div_val, .n_cutoffs = h->n_cutoffs,
        .tie_weight = h->tie_weight, .pre_lnorm = h->pre_lnorm, .untie_r = h->untie_r, .same_length = h->same_length,
        .clamp_len = h->clamp_len, .mem_len = h->mem_len, .tgt_len = h->tgt_len,
        .layer_norm_epsilon = h->layer_norm_epsilon,
        .vocab_size = v->n, .tokenizer = v->kind < 3 ? kinds[v->kind] : "?",
        .lower_case = !!(v->flags & TXLM_VOCAB_LOWER_CASE), .wt103 = !!(v->flags & TXLM_VOCAB_WT103_NORM),
        .eos_id = v->eos_id, .unk_id = v->unk_id,
        .n_tensors = txlm_file_tensor_count(f->f),
        .same_length_rule = h->same_length_rule, .zero_memory = h->zero_memory != 0,
        .line_start_eos = !!(v->flags & TXLM_VOCAB_LINE_START_EOS),
    };
    _Static_assert(TXLM_FILE_MAX_CUTOFFS == TXLM_MAX_CUTOFFS, "txlm_files.h and hparams.h disagree");
    memcpy(out->cutoffs, h->cutoffs, sizeof out->cutoffs);
    memcpy(out->tie_projs, h->tie_projs, sizeof out->tie_projs);
}

static const txlm_tensor_info *tensor_at(const txlm_model_file *f, uint32_t i, const char *who)
{
    if (!f || i >= txlm_file_tensor_count(f->f)) {
        txlm_api_bad_arg(who);
        return NULL;
    }
    return txlm_file_tensor(f->f, i);
}

txlm_status txlm_model_file_get_tensor(const txlm_model_file *f, uint32_t i, txlm_model_file_tensor *out)
{
    const txlm_tensor_info *t = tensor_at(f, i, "txlm_model_file_get_tensor: no such tensor");
    if (!t || !out) return TXLM_ERR_INVALID_ARGUMENT;
    const txlm_dtype_info *di = txlm_dtype_get(t->dtype);
    *out = (txlm_model_file_tensor){.name = t->name, .dtype = di ? di->name : "?", .dtype_id = t->dtype,
                                    .rank = t->rank, .n_elems = t->n_elems, .nbytes = t->nbytes};
    _Static_assert(sizeof out->dims == sizeof t->dims, "txlm_files.h and txlm_file.h disagree on the rank");
    memcpy(out->dims, t->dims, sizeof out->dims);
    return TXLM_OK;
}

txlm_status txlm_model_file_scan_tensor(const txlm_model_file *f, uint32_t i, txlm_model_file_nonfinite *out)
{
    const txlm_tensor_info *t = tensor_at(f, i, "txlm_model_file_scan_tensor: no such tensor");
    if (!t || !out) return TXLM_ERR_INVALID_ARGUMENT;
    txlm_nonfinite nf;
    if (txlm_nonfinite_scan(t->dtype, txlm_file_data(f->f, t), t->n_elems, &nf)) {
        txlm_err err = {0};
        return txlm_api_fail((txlm_fail(&err, TXLM_ERR_UNSUPPORTED, "%s: unknown dtype %u", t->name, t->dtype), &err));
    }
    *out = (txlm_model_file_nonfinite){.count = nf.count, .first = nf.first,
                                       .value = nf.count ? txlm_nonfinite_name(nf.value) : ""};
    return TXLM_OK;
}

txlm_status txlm_input_open(const char *path, FILE **out)
{
    if (!path || !out) return txlm_api_bad_arg("txlm_input_open: path or out is NULL");
    txlm_err err = {0};
    return txlm_fopen_input(path, out, &err) ? txlm_api_fail(&err) : TXLM_OK;
}

txlm_status txlm_write_files(int n, const char *const *paths, const void *const *data, const size_t *sizes)
{
    if (n < 0 || (n && (!paths || !data || !sizes))) return txlm_api_bad_arg("txlm_write_files: bad arrays");
    txlm_err err = {0};
    return txlm_atomic_write_files(n, paths, data, sizes, &err) ? txlm_api_fail(&err) : TXLM_OK;
}

struct txlm_output {
    txlm_atomic a;
};

txlm_status txlm_output_open(const char *path, txlm_output **out)
{
    if (!out) return txlm_api_bad_arg("txlm_output_open: out is NULL");
    *out = NULL;
    if (!path) return txlm_api_bad_arg("txlm_output_open: path is NULL");
    txlm_output *o = malloc(sizeof *o);
    txlm_err err = {0};
    if (!o) return txlm_api_fail((txlm_fail(&err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", path), &err));
    if (txlm_atomic_open(&o->a, path, &err)) {
        free(o);
        return txlm_api_fail(&err);
    }
    *out = o;
    return TXLM_OK;
}

txlm_status txlm_output_write(txlm_output *o, const void *data, size_t n)
{
    if (!o || (n && !data)) return txlm_api_bad_arg("txlm_output_write: no output or no data");
    txlm_err err = {0};
    return txlm_atomic_write(&o->a, data, n, &err) ? txlm_api_fail(&err) : TXLM_OK;
}

txlm_status txlm_output_commit(txlm_output *o)
{
    if (!o) return txlm_api_bad_arg("txlm_output_commit: no output");
    txlm_err err = {0};
    int rc = txlm_atomic_commit(&o->a, &err);
    free(o);
    return rc ? txlm_api_fail(&err) : TXLM_OK;
}

void txlm_output_abort(txlm_output *o)
{
    if (!o) return;
    txlm_atomic_abort(&o->a);
    free(o);
}

int txlm_same_file(const char *a, const char *b) { return txlm_paths_same(a, b); }
