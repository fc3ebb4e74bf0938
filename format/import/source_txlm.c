/* A .txlm model as a source: packed again, most often into another
 * --dtype (txlm-pack model.txlm --dtype q8_0 -o q.txlm, as llama-quantize
 * does). Its tensors go through the packer under their canonical names,
 * so the result is what packing the original checkpoint in that type
 * gives, byte for byte, when the file holds f32 weights, or f16 weights
 * of a checkpoint that was f16; with no --dtype each tensor keeps its
 * type. Weights already quantised (q8_0, q4_0) are refused, with the
 * reason for the type asked for (why_not). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm_status.h>

#include "quantize.h"
#include "source.h"
#include "tensor_table.h"
#include "txlm_file.h"
#include "txlm_layout.h"

typedef struct owned {
    txlm_file *f;
    uint16_t *inv_freq; /* the kept frequencies in the 16-bit type they came from */
} owned;

static void owned_free(void *impl)
{
    owned *o = impl;
    if (!o) return;
    txlm_file_close(o->f);
    free(o->inv_freq);
    free(o);
}

static int sniff(txlm_probe *p)
{
    return p->is_file && p->head_len >= TXLM_MAGIC_LEN && !memcmp(p->head, TXLM_MAGIC, TXLM_MAGIC_LEN);
}

static int add(txlm_checkpoint *ck, const char *name, uint32_t dtype, const txlm_tensor_info *t, const void *data,
               txlm_err *err)
{
    txlm_src_tensor *s = &ck->tensors[ck->n_tensors];
    if (!(s->name = strdup(name))) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    ck->n_tensors++;
    s->dtype = dtype;
    s->rank = t->rank;
    memcpy(s->dims, t->dims, sizeof s->dims);
    s->n_elems = t->n_elems;
    s->data = data;
    s->nbytes = t->n_elems * (dtype == TXLM_DT_F32 ? 4 : 2);
    return 0;
}

/* v as a value of the 16-bit type dt, when it is exactly one. */
static int exact16(uint32_t dt, float v, uint16_t *h)
{
    if (dt == TXLM_DT_BF16) {
        uint32_t u;
        memcpy(&u, &v, 4);
        *h = (uint16_t)(u >> 16);
        return !(u & 0xffff);
    }
    *h = txlm_f32_to_f16(v);
    return txlm_f16_to_f32(*h) == v;
}

/* A kept pos_emb.inv_freq holds a 16-bit checkpoint's values widened to
 * f32; the packer keeps frequencies only from a 16-bit tensor (within
 * that type's rounding of the standard ones), so they go back to the
 * type they came from: bf16 when every value is one (the looser check),
 * else f16. Both conversions are exact. */
static int add_inv_freq(txlm_checkpoint *ck, owned *o, const txlm_tensor_info *t, txlm_err *err)
{
    const uint8_t *src = txlm_file_data(o->f, t);
    if (t->dtype != TXLM_DT_F32 || t->rank != 1) return add(ck, t->name, t->dtype, t, src, err);
    if (!(o->inv_freq = malloc((t->n_elems ? t->n_elems : 1) * 2))) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    uint32_t types[2] = {TXLM_DT_BF16, TXLM_DT_F16};
    for (int k = 0; k < 2; k++) {
        uint64_t i = 0;
        while (i < t->n_elems && exact16(types[k], txlm_rdf32(src + 4 * i), &o->inv_freq[i])) i++;
        if (i == t->n_elems) return add(ck, t->name, types[k], t, o->inv_freq, err);
    }
    return add(ck, t->name, TXLM_DT_F32, t, src, err); /* not a 16-bit value: the packer's check says so */
}

/* Every tensor under its canonical name, and with untie_r false the
 * shared r biases once more under the name checkpoints give them (layer
 * 0's copy; every layer's must equal it). */
static int tensors(owned *o, const txlm_hparams *h, txlm_checkpoint *ck, txlm_err *err)
{
    uint32_t n = txlm_file_tensor_count(o->f);
    if (!(ck->tensors = calloc(n + TXLM_TT_COUNT, sizeof *ck->tensors)))
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    txlm_tt_slot inv;
    txlm_tt_slot_of(h, TXLM_TT_INV_FREQ, 0, &inv);
    int rc = 0;
    for (uint32_t i = 0; i < n && !rc; i++) {
        const txlm_tensor_info *t = txlm_file_tensor(o->f, i);
        rc = !strcmp(t->name, inv.name) ? add_inv_freq(ck, o, t, err) : add(ck, t->name, t->dtype, t, txlm_file_data(o->f, t), err);
    }
    for (uint32_t id = 0; id < TXLM_TT_COUNT && !rc; id++) {
        txlm_tt_slot s;
        const txlm_tensor_info *t;
        if (txlm_tt_slot_of(h, (txlm_tt_id)id, 0, &s) || !s.shared[0] || !(t = txlm_file_find(o->f, s.name))) continue;
        rc = add(ck, s.shared, t->dtype, t, txlm_file_data(o->f, t), err);
    }
    return rc;
}

/* Why weights quantised as `from` are not packed again into the type asked for (NULL: none). */
static const char *why_not(const char *dtype, const char *from)
{
    if (!dtype || !strcmp(dtype, from)) return "packed as they are, they would be the file it already is (copy it)";
    if (!strcmp(dtype, "f32"))
        return "f32 would hold the same rounded values in four bytes each, none of the precision the quantisation lost "
               "coming back";
    if (!strcmp(dtype, "f16"))
        return "f16 would round them a second time (a block's scale times its integer does not always fit f16) and bring "
               "back none of the precision the quantisation lost";
    return "quantising them again would add a second rounding error to the first";
}

/* Quantised weights are refused; f32 and f16 ones are read as they are. */
static int check_types(const txlm_file *f, const char *path, const char *dtype, char *what, size_t cap, txlm_err *err)
{
    uint32_t count[TXLM_DT_COUNT] = {0};
    for (uint32_t i = 0; i < txlm_file_tensor_count(f); i++) {
        const txlm_tensor_info *t = txlm_file_tensor(f, i);
        if (t->dtype != TXLM_DT_F32 && t->dtype != TXLM_DT_F16)
            return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "%s holds %s weights ('%s'): %s; pack from the original checkpoint, "
                             "or from an f32 or f16 .txlm", path, txlm_dtype_get(t->dtype)->name, t->name,
                             why_not(dtype, txlm_dtype_get(t->dtype)->name));
        count[t->dtype]++;
    }
    snprintf(what, cap, "a .txlm model (%" PRIu32 " f32 and %" PRIu32 " f16 tensors), packed again", count[TXLM_DT_F32],
             count[TXLM_DT_F16]);
    return 0;
}

static int vocab_copy(const txlm_vocab *v, txlm_vocab_buf *out, txlm_err *err)
{
    out->offsets = malloc(((size_t)v->n + 1) * sizeof *out->offsets);
    out->blob = malloc(v->blob_size ? v->blob_size : 1);
    if (!out->offsets || !out->blob) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(out->offsets, v->offsets, ((size_t)v->n + 1) * sizeof *out->offsets);
    memcpy(out->blob, v->blob, v->blob_size);
    out->v = *v;
    out->v.offsets = out->offsets;
    out->v.blob = out->blob;
    return 0;
}

static int open_txlm(txlm_probe *p, const txlm_source_options *opt, txlm_source *out, txlm_err *err)
{
    int rc = txlm_source_refuse(opt, p->path, 1, 1, 0, err);
    owned *o = rc ? NULL : calloc(1, sizeof *o);
    if (!rc && !o) rc = txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    if (!rc) rc = txlm_file_open(p->path, 0, &o->f, err);
    if (!rc) rc = check_types(o->f, p->path, opt->dtype, out->what, sizeof out->what, err);
    if (!rc) rc = txlm_source_input(out, p->path, err);
    if (!rc && !(out->ck = calloc(1, sizeof *out->ck))) rc = txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    if (rc) {
        owned_free(o);
        return rc;
    }
    out->ck->impl = o;
    out->ck->free_impl = owned_free;
    out->ck->format = "txlm";
    out->h = *txlm_file_hparams(o->f);
    out->zero_memory = (int)out->h.zero_memory; /* kept, as every hyper-parameter is */
    rc = tensors(o, &out->h, out->ck, err);
    if (!rc) rc = opt->vocab ? txlm_source_vocab(out, opt->vocab, err) : vocab_copy(txlm_file_vocab(o->f), &out->vocab, err);
    out->order = TXLM_CLUSTERS_FORWARD;
    snprintf(out->why, sizeof out->why, "a .txlm stores them forward");
    return rc;
}

const txlm_source_kind txlm_source_txlm = {
    "txlm", "a .txlm model (packed again, f32 or f16 weights into any --dtype)", sniff, open_txlm, NULL,
};
