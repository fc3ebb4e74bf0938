#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "fmt_common.h"
#include "../common/slurp.h"
#include "../common/tmpdir.h"

static uint32_t fmt_rd32(const uint8_t *p) { return p[0] | (p[1] << 8) | (p[2] << 16) | ((uint32_t)p[3] << 24); }
static uint64_t fmt_rd64(const uint8_t *p) { return fmt_rd32(p) | ((uint64_t)fmt_rd32(p + 4) << 32); }
static void fmt_wr64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static int is_meta(const uint8_t *tag)
{
    return !memcmp(tag, "HPRM", 4) || !memcmp(tag, "VOCB", 4) || !memcmp(tag, "DTYP", 4) || !memcmp(tag, "TDIR", 4);
}

/* Recomputes the checksums: each section's that carries one, when asked,
 * then the header's. Ranges outside the buffer are left alone (the reader
 * refuses those before it looks at any checksum). */
static int inside(uint64_t off, uint64_t size, size_t len) { return off <= len && size <= len - off; }

void fmt_fix_checksums(uint8_t *b, size_t len, int sections)
{
    uint64_t table = fmt_rd64(b + 32);
    uint32_t n = fmt_rd32(b + 40), es = fmt_rd32(b + 44), hs = fmt_rd32(b + 16);
    if (hs < 56 || hs > len || n > 64 || es < 32 || es > 256 || !inside(table, (uint64_t)n * es, len)) return;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = b + table + (uint64_t)i * es;
        if (!inside(fmt_rd64(e + 8), fmt_rd64(e + 16), len)) return;
    }
    if (sections)
        for (uint32_t i = 0; i < n; i++) {
            uint8_t *e = b + table + (uint64_t)i * es;
            if (!(fmt_rd32(e + 4) & 2)) fmt_wr64(e + 24, XXH3_64bits(b + fmt_rd64(e + 8), fmt_rd64(e + 16)));
        }
    fmt_wr64(b + 48, 0);
    XXH3_state_t *st = XXH3_createState();
    XXH3_64bits_reset(st);
    XXH3_64bits_update(st, b, hs);
    XXH3_64bits_update(st, b + table, (size_t)n * es);
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = b + table + (uint64_t)i * es;
        if (is_meta(e)) XXH3_64bits_update(st, b + fmt_rd64(e + 8), fmt_rd64(e + 16));
    }
    fmt_wr64(b + 48, XXH3_64bits_digest(st));
    XXH3_freeState(st);
}


int fmt_failures;

uint32_t fmt_rand(uint32_t *s)
{
    uint32_t x = *s ? *s : 0x9E3779B9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

static void add_tensor(fmt_model *m, uint32_t *seed, const char *name, uint32_t dtype, uint32_t rank, const uint64_t *dims)
{
    fmt_tensor *t = &m->t[m->n_tensors++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->dtype = dtype;
    t->rank = rank;
    memcpy(t->dims, dims, rank * sizeof *dims);
    txlm_err err;
    t->nbytes = txlm_tensor_nbytes(dtype, rank, dims, &err);
    t->data = malloc(t->nbytes);
    for (uint64_t i = 0; i < t->nbytes; i++) t->data[i] = (uint8_t)fmt_rand(seed);
}

static void build_vocab(fmt_model *m, uint32_t kind)
{
    uint32_t n = m->hp.n_token;
    m->offsets = malloc(4 * (n + 1));
    m->blob = malloc(16 * n);
    uint32_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        m->offsets[i] = at;
        if (kind == TXLM_TOK_CHAR_BYTE) {
            m->blob[at++] = (char)i; /* includes 0x00 and 0x80..0xFF: arbitrary bytes */
            continue;
        }
        char sym[16];
        if (i == 0) snprintf(sym, sizeof sym, "<eos>");
        else if (i == 1) snprintf(sym, sizeof sym, "<unk>");
        else if (i % 7 == 0) snprintf(sym, sizeof sym, "caf\xC3\xA9%u", i);         /* 2-byte sequence */
        else if (i % 11 == 0) snprintf(sym, sizeof sym, "\xE6\x97\xA5%u", i);       /* 3-byte sequence */
        else if (i % 13 == 0) snprintf(sym, sizeof sym, "\xF0\x9F\x98\x80%u", i);   /* 4-byte sequence */
        else snprintf(sym, sizeof sym, "w%u", i);
        size_t len = strlen(sym);
        memcpy(m->blob + at, sym, len);
        at += (uint32_t)len;
    }
    m->offsets[n] = at;
    m->vocab = (txlm_vocab){
        .n = n,
        .kind = kind,
        .flags = kind == TXLM_TOK_WORD ? TXLM_VOCAB_LOWER_CASE : 0,
        .eos_id = kind == TXLM_TOK_WORD ? 0 : -1,
        .unk_id = kind == TXLM_TOK_WORD ? 1 : -1,
        .offsets = m->offsets,
        .blob = m->blob,
        .blob_size = at,
    };
}

void fmt_model_build(fmt_model *m, uint32_t seed, uint32_t kind)
{
    memset(m, 0, sizeof *m);
    txlm_hparams *h = &m->hp;
    h->d_model = 32;
    h->d_embed = 32;
    h->n_head = 2;
    h->d_head = 16;
    h->d_inner = 64;
    h->n_layer = 2;
    h->tie_weight = 1;
    h->untie_r = 1;
    h->mem_len = 16;
    h->tgt_len = 8;
    h->layer_norm_epsilon = 1e-5f;
    if (kind == TXLM_TOK_WORD) {
        h->n_token = 300;
        h->div_val = 2;
        h->n_cutoffs = 2;
        h->cutoffs[0] = 100;
        h->cutoffs[1] = 200;
        h->tie_projs[1] = 1;
        h->tie_projs[2] = 1;
        h->same_length = 1;
        h->clamp_len = 20;
    } else {
        h->n_token = 256;
        h->div_val = 1;
        h->pre_lnorm = 1;
        h->clamp_len = -1;
    }
    build_vocab(m, kind);

    add_tensor(m, &seed, "transformer.word_emb.emb_layers.0.weight", TXLM_DT_F32, 2, (uint64_t[]){100, 32});
    add_tensor(m, &seed, "a.f16", TXLM_DT_F16, 2, (uint64_t[]){3, 64});
    add_tensor(m, &seed, "a.bf16", TXLM_DT_BF16, 1, (uint64_t[]){7});
    add_tensor(m, &seed, "q8", TXLM_DT_Q8_0, 2, (uint64_t[]){2, 64});
    add_tensor(m, &seed, "q4", TXLM_DT_Q4_0, 2, (uint64_t[]){4, 32});
    add_tensor(m, &seed, "rank8", TXLM_DT_F32, 8, (uint64_t[]){1, 2, 1, 2, 1, 2, 1, 3});
    add_tensor(m, &seed, "odd", TXLM_DT_F32, 1, (uint64_t[]){5});
    add_tensor(m, &seed, "\xC3\xA9t\xC3\xA9.unicode", TXLM_DT_F16, 1, (uint64_t[]){33});
}

void fmt_model_free(fmt_model *m)
{
    for (int i = 0; i < m->n_tensors; i++) free(m->t[i].data);
    free(m->offsets);
    free(m->blob);
    memset(m, 0, sizeof *m);
}

int fmt_model_write(const fmt_model *m, const char *path, txlm_err *err)
{
    txlm_writer *w;
    int rc = txlm_writer_open(path, &w, err);
    if (rc) return rc;
    if ((rc = txlm_writer_set_hparams(w, &m->hp, err)) || (rc = txlm_writer_set_vocab(w, &m->vocab, err))) {
        txlm_writer_abort(w);
        return rc;
    }
    for (int i = 0; i < m->n_tensors; i++) {
        const fmt_tensor *t = &m->t[i];
        rc = txlm_writer_add_tensor(w, t->name, (txlm_dtype)t->dtype, t->rank, t->dims, t->data, t->nbytes, err);
        if (rc) {
            txlm_writer_abort(w);
            return rc;
        }
    }
    return txlm_writer_finish(w, err);
}

uint8_t *fmt_read_all(const char *path, size_t *len) { return (uint8_t *)slurp(path, len); }

int fmt_write_all(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t n = len ? fwrite(data, 1, len, f) : 0;
    return (fclose(f) == 0 && n == len) ? 0 : -1;
}

int fmt_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

char *fmt_mkdtemp(void) { return test_mkdtemp("txlm-fmt"); }

void fmt_rmdir(char *dir)
{
    if (!dir) return;
    test_rmdir_flat(dir);
    free(dir);
}
