/* .txlm v1 writer (docs/format.md, "Writing"). Tensor data is streamed
 * straight from the caller's buffers, hashed on the way; the metadata,
 * which needs those hashes, is written last at the front of the file.
 * Everything goes to a temporary file that replaces path only once synced
 * (atomic_write.c: the temporary cannot be redirected, nor left behind). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stb/stb_ds.h>
#include <xxhash.h>

#include <txlm_status.h>

#include "atomic_write.h"
#include "txlm_file.h"
#include "txlm_layout.h"

#define CHUNK (8u << 20) /* bytes per write: large enough to amortise syscalls */

typedef struct wtensor {
    txlm_tensor_info info;
    const void *data;
} wtensor;

typedef struct name_slot {
    char *key;
    uint32_t value;
} name_slot;

struct txlm_writer {
    char *path;
    txlm_atomic out; /* out.fd takes the data */
    int have_hp, have_vocab;
    txlm_hparams hp;
    txlm_vocab vocab;
    uint32_t *offsets;
    char *blob;
    wtensor *tensors;  /* stb_ds array */
    name_slot *names;  /* stb_ds string map, keys copied */
    txlm_err first;    /* the first error; once set, finish refuses */
    void (*progress)(void *user, uint64_t done, uint64_t total);
    void *user;
};

static int wfail(txlm_writer *w, txlm_err *err, int code, const char *fmt, ...) TXLM_PRINTF(4, 5);
static int wfail(txlm_writer *w, txlm_err *err, int code, const char *fmt, ...)
{
    char buf[448];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    txlm_err e;
    txlm_fail(&e, code, "%s: %s", w->path, buf);
    if (!w->first.code) w->first = e;
    if (err) *err = e;
    return code;
}

/* A later call after a failed one reports the original failure. */
static int sticky(txlm_writer *w, txlm_err *err)
{
    if (!w->first.code) return 0;
    if (err) *err = w->first;
    return w->first.code;
}

int txlm_writer_open(const char *path, txlm_writer **out, txlm_err *err)
{
    if (!path || !out || !*path) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "txlm_writer_open: no path");
    *out = NULL;
    txlm_writer *w = calloc(1, sizeof *w);
    if (w) w->path = strdup(path);
    if (!w || !w->path) {
        free(w);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    int rc = txlm_atomic_open(&w->out, path, err);
    if (rc) {
        free(w->path);
        free(w);
        return rc;
    }
    sh_new_strdup(w->names);
    *out = w;
    return 0;
}

int txlm_writer_set_hparams(txlm_writer *w, const txlm_hparams *h, txlm_err *err)
{
    int rc = sticky(w, err);
    if (rc) return rc;
    char why[256];
    if (!h) return wfail(w, err, TXLM_ERR_INVALID_ARGUMENT, "no hyper-parameters");
    if (txlm_hparams_validate(h, why, sizeof why) != 0) return wfail(w, err, TXLM_ERR_INVALID_ARGUMENT, "hyper-parameters: %s", why);
    w->hp = *h;
    /* The reader insists unused slots are zero. */
    for (uint32_t i = w->hp.n_cutoffs; i < TXLM_MAX_CUTOFFS; i++) w->hp.cutoffs[i] = 0;
    for (uint32_t i = w->hp.n_cutoffs + 1; i < TXLM_MAX_CLUSTERS; i++) w->hp.tie_projs[i] = 0;
    w->have_hp = 1;
    return 0;
}

int txlm_writer_set_vocab(txlm_writer *w, const txlm_vocab *v, txlm_err *err)
{
    int rc = sticky(w, err);
    if (rc) return rc;
    if (!v) return wfail(w, err, TXLM_ERR_INVALID_ARGUMENT, "no vocabulary");
    txlm_err why;
    if (txlm_vocab_check(v, "vocabulary", TXLM_ERR_INVALID_ARGUMENT, &why)) return wfail(w, err, why.code, "%s", why.msg);
    uint32_t *offsets = malloc(4 * ((size_t)v->n + 1));
    char *blob = malloc(v->blob_size ? v->blob_size : 1);
    if (!offsets || !blob) {
        free(offsets);
        free(blob);
        return wfail(w, err, TXLM_ERR_OUT_OF_MEMORY, "out of memory copying the vocabulary");
    }
    memcpy(offsets, v->offsets, 4 * ((size_t)v->n + 1));
    if (v->blob_size) memcpy(blob, v->blob, v->blob_size);
    free(w->offsets);
    free(w->blob);
    w->offsets = offsets;
    w->blob = blob;
    w->vocab = *v;
    w->vocab.offsets = offsets;
    w->vocab.blob = blob;
    w->have_vocab = 1;
    return 0;
}

int txlm_writer_add_tensor(txlm_writer *w, const char *name, txlm_dtype dtype, uint32_t rank, const uint64_t *dims,
                           const void *data, uint64_t nbytes, txlm_err *err)
{
    int rc = sticky(w, err);
    if (rc) return rc;
    if (!name || !*name) return wfail(w, err, TXLM_ERR_INVALID_ARGUMENT, "tensor with an empty name");
    size_t len = strnlen(name, TXLM_MAX_NAME);
    if (len >= TXLM_MAX_NAME)
        return wfail(w, err, TXLM_ERR_INVALID_ARGUMENT, "tensor name '%.40s...' is longer than %d bytes", name, TXLM_MAX_NAME - 1);
    if (txlm_utf8_valid_prefix((const uint8_t *)name, len) != len)
        return wfail(w, err, TXLM_ERR_INVALID_ARGUMENT, "tensor name is not valid UTF-8");
    if (shgeti(w->names, name) >= 0) return wfail(w, err, TXLM_ERR_INVALID_ARGUMENT, "tensor '%s' added twice", name);
    if (arrlenu(w->tensors) >= TXLM_TDIR_MAX)
        return wfail(w, err, TXLM_ERR_LIMIT, "tensor '%s': more than %u tensors", name, TXLM_TDIR_MAX);
    if (!dims && rank) return wfail(w, err, TXLM_ERR_INVALID_ARGUMENT, "tensor '%s': no dims", name);
    txlm_err why;
    uint64_t want = txlm_tensor_nbytes(dtype, rank, dims, &why);
    if (!want) return wfail(w, err, TXLM_ERR_INVALID_ARGUMENT, "tensor '%s': %s", name, why.msg);
    if (nbytes != want)
        return wfail(w, err, TXLM_ERR_INVALID_ARGUMENT, "tensor '%s': %" PRIu64 " bytes given, dtype and dims need %" PRIu64,
                     name, nbytes, want);
    if (!data) return wfail(w, err, TXLM_ERR_INVALID_ARGUMENT, "tensor '%s': no data", name);
    wtensor t;
    memset(&t, 0, sizeof t);
    memcpy(t.info.name, name, len);
    t.info.dtype = dtype;
    t.info.rank = rank;
    t.info.n_elems = 1;
    for (uint32_t d = 0; d < rank; d++) {
        t.info.dims[d] = dims[d];
        t.info.n_elems *= dims[d];
    }
    t.info.nbytes = nbytes;
    t.data = data;
    shput(w->names, name, (uint32_t)arrlenu(w->tensors));
    arrput(w->tensors, t);
    return 0;
}

void txlm_writer_set_progress(txlm_writer *w, void (*cb)(void *user, uint64_t done, uint64_t total), void *user)
{
    w->progress = cb;
    w->user = user;
}

/* Drops the temporary file too, unless commit has released it. */
static void free_writer(txlm_writer *w)
{
    txlm_atomic_abort(&w->out);
    shfree(w->names);
    arrfree(w->tensors);
    free(w->offsets);
    free(w->blob);
    free(w->path);
    free(w);
}

void txlm_writer_abort(txlm_writer *w)
{
    if (w) free_writer(w);
}

static int pwrite_all(txlm_writer *w, txlm_err *err, const void *buf, uint64_t len, uint64_t off)
{
    const uint8_t *p = buf;
    while (len) {
        size_t n = len > (1u << 30) ? (1u << 30) : (size_t)len;
        ssize_t got = pwrite(w->out.fd, p, n, (off_t)off);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0)
            return wfail(w, err, TXLM_ERR_IO, "write of %zu bytes at offset %" PRIu64 " failed: %s", n, off,
                         got < 0 ? strerror(errno) : "no progress");
        p += got;
        off += (uint64_t)got;
        len -= (uint64_t)got;
    }
    return 0;
}

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }

/* Where everything goes; all of it fits far below 2^64 given the caps. */
typedef struct layout {
    uint64_t off[5], size[5]; /* HPRM, VOCB, DTYP, TDIR, TDAT, in table order */
    uint64_t meta_end, file_size, total_data;
    uint32_t n_dtypes;
    uint32_t dtypes[TXLM_DT_COUNT];
} layout;

static const char *const tags[5] = {TXLM_TAG_HPRM, TXLM_TAG_VOCB, TXLM_TAG_DTYP, TXLM_TAG_TDIR, TXLM_TAG_TDAT};

/* 1.0's record unless a later field is needed (docs/format.md). */
static uint32_t hprm_size(const txlm_hparams *h)
{
    return h->zero_memory ? TXLM_HPRM_SIZE_1_2 : h->same_length_rule ? TXLM_HPRM_SIZE_1_1 : TXLM_HPRM_SIZE;
}

static void plan(txlm_writer *w, layout *L)
{
    memset(L, 0, sizeof *L);
    uint8_t used[TXLM_DT_COUNT] = {0};
    size_t n = arrlenu(w->tensors);
    for (size_t i = 0; i < n; i++) used[w->tensors[i].info.dtype] = 1;
    for (uint32_t d = 0; d < TXLM_DT_COUNT; d++)
        if (used[d]) L->dtypes[L->n_dtypes++] = d;
    L->size[0] = hprm_size(&w->hp);
    L->size[1] = TXLM_VOCB_HEAD + 4 * ((uint64_t)w->vocab.n + 1) + w->vocab.blob_size;
    L->size[2] = TXLM_DTYP_HEAD + (uint64_t)L->n_dtypes * TXLM_DTYP_ENTRY_SIZE;
    L->size[3] = TXLM_TDIR_HEAD + (uint64_t)n * TXLM_TDIR_ENTRY_SIZE;
    uint64_t at = TXLM_HDR_SIZE + 5 * TXLM_SEC_ENTRY_SIZE;
    for (int s = 0; s < 4; s++) {
        at = align_up(at, 8);
        L->off[s] = at;
        at += L->size[s];
    }
    L->meta_end = at;
    L->off[4] = align_up(at, TXLM_WRITE_ALIGNMENT);
    at = L->off[4];
    for (size_t i = 0; i < n; i++) {
        txlm_tensor_info *t = &w->tensors[i].info;
        t->offset = align_up(at, TXLM_WRITE_ALIGNMENT);
        at = t->offset + t->nbytes;
        L->total_data += t->nbytes;
    }
    L->size[4] = at - L->off[4];
    L->file_size = at;
}

static int write_data(txlm_writer *w, const layout *L, txlm_err *err)
{
    XXH3_state_t *st = XXH3_createState();
    if (!st) return wfail(w, err, TXLM_ERR_OUT_OF_MEMORY, "out of memory for the hash state");
    uint64_t done = 0;
    if (w->progress) w->progress(w->user, 0, L->total_data);
    for (size_t i = 0; i < arrlenu(w->tensors); i++) {
        wtensor *t = &w->tensors[i];
        const uint8_t *p = t->data;
        XXH3_64bits_reset(st);
        for (uint64_t at = 0; at < t->info.nbytes;) {
            uint64_t n = t->info.nbytes - at < CHUNK ? t->info.nbytes - at : CHUNK;
            XXH3_64bits_update(st, p + at, (size_t)n);
            if (pwrite_all(w, err, p + at, n, t->info.offset + at)) {
                XXH3_freeState(st);
                return w->first.code;
            }
            at += n;
            done += n;
            if (w->progress) w->progress(w->user, done, L->total_data);
        }
        t->info.hash = XXH3_64bits_digest(st);
    }
    XXH3_freeState(st);
    return 0;
}

static void fill_hparams(const txlm_hparams *h, uint8_t *p)
{
    txlm_wr32(p + TXLM_HP_SIZE, hprm_size(h));
    txlm_wr32(p + TXLM_HP_N_TOKEN, h->n_token);
    txlm_wr32(p + TXLM_HP_D_MODEL, h->d_model);
    txlm_wr32(p + TXLM_HP_D_EMBED, h->d_embed);
    txlm_wr32(p + TXLM_HP_N_HEAD, h->n_head);
    txlm_wr32(p + TXLM_HP_D_HEAD, h->d_head);
    txlm_wr32(p + TXLM_HP_D_INNER, h->d_inner);
    txlm_wr32(p + TXLM_HP_N_LAYER, h->n_layer);
    txlm_wr32(p + TXLM_HP_DIV_VAL, h->div_val);
    txlm_wr32(p + TXLM_HP_N_CUTOFFS, h->n_cutoffs);
    for (int i = 0; i < TXLM_MAX_CUTOFFS; i++) txlm_wr32(p + TXLM_HP_CUTOFFS + 4 * i, h->cutoffs[i]);
    for (int i = 0; i < TXLM_MAX_CLUSTERS; i++) p[TXLM_HP_TIE_PROJS + i] = h->tie_projs[i];
    p[TXLM_HP_TIE_WEIGHT] = h->tie_weight;
    p[TXLM_HP_PRE_LNORM] = h->pre_lnorm;
    p[TXLM_HP_UNTIE_R] = h->untie_r;
    p[TXLM_HP_SAME_LENGTH] = h->same_length;
    txlm_wr32(p + TXLM_HP_CLAMP_LEN, (uint32_t)h->clamp_len);
    txlm_wr32(p + TXLM_HP_MEM_LEN, h->mem_len);
    txlm_wr32(p + TXLM_HP_TGT_LEN, h->tgt_len);
    txlm_wr32(p + TXLM_HP_EXT_LEN, h->ext_len);
    txlm_wr32(p + TXLM_HP_ATTN_TYPE, h->attn_type);
    txlm_wrf32(p + TXLM_HP_LN_EPS, h->layer_norm_epsilon);
    if (h->same_length_rule || h->zero_memory) txlm_wr32(p + TXLM_HP_SAME_LENGTH_RULE, h->same_length_rule);
    if (h->zero_memory) txlm_wr32(p + TXLM_HP_ZERO_MEMORY, h->zero_memory);
}

static void fill_vocab(const txlm_vocab *v, uint8_t *p)
{
    txlm_wr32(p, v->n);
    txlm_wr32(p + 4, v->kind);
    txlm_wr32(p + 8, v->flags);
    txlm_wr32(p + 12, (uint32_t)v->eos_id);
    txlm_wr32(p + 16, (uint32_t)v->unk_id);
    txlm_wr32(p + 20, v->blob_size);
    for (uint32_t i = 0; i <= v->n; i++) txlm_wr32(p + TXLM_VOCB_HEAD + 4 * (size_t)i, v->offsets[i]);
    if (v->blob_size) memcpy(p + TXLM_VOCB_HEAD + 4 * ((size_t)v->n + 1), v->blob, v->blob_size);
}

static void fill_dtypes(const layout *L, uint8_t *p)
{
    txlm_wr32(p, L->n_dtypes);
    txlm_wr32(p + 4, TXLM_DTYP_ENTRY_SIZE);
    for (uint32_t i = 0; i < L->n_dtypes; i++) {
        uint8_t *e = p + TXLM_DTYP_HEAD + (size_t)i * TXLM_DTYP_ENTRY_SIZE;
        const txlm_dtype_info *di = txlm_dtype_get(L->dtypes[i]);
        txlm_wr32(e + TXLM_DT_ID, L->dtypes[i]);
        txlm_wr32(e + TXLM_DT_BLOCK_ELEMS, di->block_elems);
        txlm_wr32(e + TXLM_DT_BLOCK_BYTES, di->block_bytes);
        memcpy(e + TXLM_DT_NAME, di->name, strnlen(di->name, TXLM_DTYP_NAME_LEN - 1));
    }
}

static void fill_tensors(const txlm_writer *w, uint8_t *p)
{
    size_t n = arrlenu(w->tensors);
    txlm_wr32(p, (uint32_t)n);
    txlm_wr32(p + 4, TXLM_TDIR_ENTRY_SIZE);
    for (size_t i = 0; i < n; i++) {
        uint8_t *e = p + TXLM_TDIR_HEAD + i * TXLM_TDIR_ENTRY_SIZE;
        const txlm_tensor_info *t = &w->tensors[i].info;
        memcpy(e + TXLM_TE_NAME, t->name, TXLM_MAX_NAME);
        txlm_wr32(e + TXLM_TE_DTYPE, t->dtype);
        txlm_wr32(e + TXLM_TE_RANK, t->rank);
        for (int d = 0; d < TXLM_MAX_RANK; d++) txlm_wr64(e + TXLM_TE_DIMS + 8 * d, t->dims[d]);
        txlm_wr64(e + TXLM_TE_OFFSET, t->offset);
        txlm_wr64(e + TXLM_TE_NBYTES, t->nbytes);
        txlm_wr64(e + TXLM_TE_HASH, t->hash);
    }
}

/* Header, section table and the four metadata sections, checksums included. */
static int write_metadata(txlm_writer *w, const layout *L, txlm_err *err)
{
    uint8_t *m = calloc(1, (size_t)L->meta_end);
    if (!m) return wfail(w, err, TXLM_ERR_OUT_OF_MEMORY, "out of memory for %" PRIu64 " bytes of metadata", L->meta_end);
    fill_hparams(&w->hp, m + L->off[0]);
    fill_vocab(&w->vocab, m + L->off[1]);
    fill_dtypes(L, m + L->off[2]);
    fill_tensors(w, m + L->off[3]);

    uint8_t *table = m + TXLM_HDR_SIZE;
    for (int s = 0; s < 5; s++) {
        uint8_t *e = table + s * TXLM_SEC_ENTRY_SIZE;
        memcpy(e + TXLM_SEC_TAG, tags[s], 4);
        int data = s == 4;
        txlm_wr32(e + TXLM_SEC_FLAGS, TXLM_SECF_REQUIRED | (data ? TXLM_SECF_NO_CHECKSUM : 0));
        txlm_wr64(e + TXLM_SEC_OFFSET, L->off[s]);
        txlm_wr64(e + TXLM_SEC_SIZE, L->size[s]);
        txlm_wr64(e + TXLM_SEC_CHECKSUM, data ? 0 : XXH3_64bits(m + L->off[s], (size_t)L->size[s]));
    }

    memcpy(m + TXLM_HDR_MAGIC, TXLM_MAGIC, TXLM_MAGIC_LEN);
    txlm_wr16(m + TXLM_HDR_MAJOR, TXLM_MAJOR);
    txlm_wr16(m + TXLM_HDR_MINOR, hprm_size(&w->hp) > TXLM_HPRM_SIZE_1_1 ? 2 : hprm_size(&w->hp) > TXLM_HPRM_SIZE ? 1 : TXLM_MINOR);
    txlm_wr32(m + TXLM_HDR_BOM, TXLM_BOM);
    txlm_wr32(m + TXLM_HDR_HEADER_SIZE, TXLM_HDR_SIZE);
    txlm_wr32(m + TXLM_HDR_ALIGNMENT, TXLM_WRITE_ALIGNMENT);
    txlm_wr64(m + TXLM_HDR_FILE_SIZE, L->file_size);
    txlm_wr64(m + TXLM_HDR_TABLE_OFFSET, TXLM_HDR_SIZE);
    txlm_wr32(m + TXLM_HDR_SECTION_COUNT, 5);
    txlm_wr32(m + TXLM_HDR_ENTRY_SIZE, TXLM_SEC_ENTRY_SIZE);

    /* The checksum field is still zero here, as the scope requires. */
    XXH3_state_t *st = XXH3_createState();
    if (!st) {
        free(m);
        return wfail(w, err, TXLM_ERR_OUT_OF_MEMORY, "out of memory for the hash state");
    }
    XXH3_64bits_reset(st);
    XXH3_64bits_update(st, m, TXLM_HDR_SIZE + 5 * TXLM_SEC_ENTRY_SIZE);
    for (int s = 0; s < 4; s++) XXH3_64bits_update(st, m + L->off[s], (size_t)L->size[s]);
    txlm_wr64(m + TXLM_HDR_CHECKSUM, XXH3_64bits_digest(st));
    XXH3_freeState(st);

    int rc = pwrite_all(w, err, m, L->meta_end, 0);
    free(m);
    return rc;
}

static int finish(txlm_writer *w, txlm_err *err)
{
    int rc = sticky(w, err);
    if (rc) return rc;
    if (!w->have_hp) return wfail(w, err, TXLM_ERR_INVALID_ARGUMENT, "hyper-parameters were never set");
    if (!w->have_vocab) return wfail(w, err, TXLM_ERR_INVALID_ARGUMENT, "vocabulary was never set");
    if (w->vocab.n != w->hp.n_token)
        return wfail(w, err, TXLM_ERR_INVALID_ARGUMENT, "vocabulary has %" PRIu32 " symbols but n_token is %" PRIu32, w->vocab.n,
                     w->hp.n_token);
    layout L;
    plan(w, &L);
    if (ftruncate(w->out.fd, (off_t)L.file_size) != 0)
        return wfail(w, err, TXLM_ERR_IO, "cannot size the file to %" PRIu64 " bytes: %s", L.file_size, strerror(errno));
    if ((rc = write_data(w, &L, err))) return rc;
    if ((rc = write_metadata(w, &L, err))) return rc;
    return txlm_atomic_commit(&w->out, err);
}

int txlm_writer_finish(txlm_writer *w, txlm_err *err)
{
    if (!w) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "txlm_writer_finish: no writer");
    int rc = finish(w, err);
    free_writer(w);
    return rc;
}
