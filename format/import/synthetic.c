/* Seeded random weights in the shapes txlm_pack_names gives, so the
 * synthetic model can never drift from what the packer and engine expect. */
#include "synthetic.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm_status.h>
#include <xxhash.h>

#include "inv_freq.h"
#include "pack_names.h"

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform with standard deviation `std` and the given mean: plain integer
 * arithmetic and one multiply, so every platform draws the same values. */
static void fill(float *out, uint64_t n, const char *name, uint64_t seed, float mean, float std)
{
    uint64_t s = XXH3_64bits_withSeed(name, strlen(name), seed);
    double half_width = std * sqrt(3.0);
    for (uint64_t i = 0; i < n; i++) {
        double u = (double)(splitmix64(&s) >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
        out[i] = (float)(mean + (2.0 * u - 1.0) * half_width);
    }
}

/* How a tensor is drawn, from its kind. */
static void init_of(const txlm_tt_slot *t, float *mean, float *std)
{
    *mean = 0.0f;
    if (t->id == TXLM_TT_ATTN_LN_W || t->id == TXLM_TT_FF_LN_W) {
        *mean = 1.0f;
        *std = 0.05f;
    } else if (t->rank == 1) {
        *std = 0.02f;
    } else if (t->id == TXLM_TT_R_W_BIAS || t->id == TXLM_TT_R_R_BIAS) {
        *std = 0.1f;
    } else {
        *std = (float)(1.0 / sqrt((double)(t->rank == 2 ? t->dims[1] : t->dims[0]))); /* 1/sqrt(fan-in) */
    }
}

typedef struct synth {
    txlm_checkpoint *ck;
    float *next;       /* next free float of the data block (ck->impl) */
} synth;

/* Appends tensor `src` (*added = NULL when it is already there: shared r
 * biases are listed once per layer). */
static int add(synth *s, const char *src, uint32_t rank, const uint64_t *dims, txlm_src_tensor **added, txlm_err *err)
{
    txlm_checkpoint *ck = s->ck;
    char name[TXLM_MAX_NAME + sizeof TXLM_HF_PREFIX];
    snprintf(name, sizeof name, "%s%s", txlm_hf_prefix_of(src), src); /* HF's names */
    *added = NULL;
    for (uint32_t i = 0; i < ck->n_tensors; i++)
        if (!strcmp(ck->tensors[i].name, name)) return 0;
    txlm_src_tensor *t = *added = &ck->tensors[ck->n_tensors];
    if (!(t->name = strdup(name))) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    ck->n_tensors++;
    t->dtype = TXLM_DT_F32;
    t->rank = rank;
    t->n_elems = 1;
    for (uint32_t i = 0; i < rank; i++) t->n_elems *= (t->dims[i] = dims[i]);
    t->nbytes = t->n_elems * sizeof(float);
    t->data = s->next;
    s->next += t->n_elems;
    return 0;
}

int txlm_synthetic_checkpoint(const txlm_hparams *h, uint64_t seed, txlm_checkpoint **out, txlm_err *err)
{
    *out = NULL;
    char why[256];
    if (txlm_hparams_validate(h, why, sizeof why)) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "hyper-parameters: %s", why);
    txlm_pack_name *names = NULL;
    txlm_pack_tie *ties = NULL;
    uint32_t n_names = 0, n_ties = 0;
    int rc = txlm_pack_names(h, &names, &n_names, &ties, &n_ties, err);
    if (rc) return rc;
    free(ties);
    uint64_t total = h->d_model / 2; /* TXLM_INV_FREQ_NAME */
    for (uint32_t i = 0; i < n_names; i++) total += names[i].t.dims[0] * (names[i].t.rank == 2 ? names[i].t.dims[1] : 1);

    txlm_checkpoint *ck = calloc(1, sizeof *ck);
    if (ck) ck->tensors = calloc(n_names + 1, sizeof *ck->tensors);
    if (ck) ck->impl = malloc(total * sizeof(float) + 1);
    if (!ck || !ck->tensors || !ck->impl) {
        txlm_checkpoint_free(ck);
        free(names);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory for %" PRIu64 " synthetic weights", total);
    }
    ck->format = "synthetic";
    synth s = {ck, ck->impl};
    for (uint32_t i = 0; !rc && i < n_names; i++) {
        txlm_src_tensor *t;
        rc = add(&s, names[i].src, names[i].t.rank, names[i].t.dims, &t, err);
        if (rc || !t) continue;
        float mean, std;
        init_of(&names[i].t, &mean, &std);
        fill((float *)t->data, t->n_elems, t->name, seed, mean, std);
    }
    uint64_t half = h->d_model / 2;
    txlm_src_tensor *inv = NULL;
    if (!rc) rc = add(&s, TXLM_INV_FREQ_NAME, 1, &half, &inv, err);
    if (inv) {
        float *f = (float *)inv->data;
        for (uint64_t k = 0; k < half; k++) f[k] = (float)(1.0 / pow(10000.0, (double)(2 * k) / (double)h->d_model));
    }
    free(names);
    if (rc) {
        txlm_checkpoint_free(ck);
        return rc;
    }
    *out = ck;
    return 0;
}

int txlm_synthetic_vocab(uint32_t n, txlm_vocab_buf *out, txlm_err *err)
{
    memset(out, 0, sizeof *out);
    if (n == 0) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "a vocabulary needs at least one symbol");
    uint64_t bytes = 16 + (uint64_t)n * 11; /* "w" + up to 10 digits */
    out->offsets = malloc(((size_t)n + 1) * sizeof *out->offsets);
    out->blob = malloc(bytes);
    if (!out->offsets || !out->blob) {
        txlm_vocab_buf_free(out);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory for %" PRIu32 " symbols", n);
    }
    uint32_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        out->offsets[i] = at;
        if (i == 0) at += (uint32_t)snprintf(out->blob + at, bytes - at, "<eos>");
        else if (i == 1) at += (uint32_t)snprintf(out->blob + at, bytes - at, "<unk>");
        else at += (uint32_t)snprintf(out->blob + at, bytes - at, "w%" PRIu32, i);
    }
    out->offsets[n] = at;
    out->v = (txlm_vocab){.n = n, .kind = TXLM_TOK_WORD, .flags = 0, .eos_id = 0, .unk_id = n > 1 ? 1 : -1,
                          .offsets = out->offsets, .blob = out->blob, .blob_size = at};
    return 0;
}
