/* .txlm reader: every input is opened twice from memory with full
 * verification, once as it is and once with its size field, tensor hashes,
 * section checksums and header checksum repaired, so that mutations reach
 * the checks behind the checksums instead of stopping at the first one. */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "fuzz.h"
#include "txlm_file.h"
#include "txlm_layout.h"

static int inside(uint64_t off, uint64_t len, size_t size) { return off <= size && len <= size - off; }

static void repair(uint8_t *b, size_t size)
{
    if (size < TXLM_HDR_SIZE) return;
    txlm_wr64(b + TXLM_HDR_FILE_SIZE, size);
    uint32_t hs = txlm_rd32(b + TXLM_HDR_HEADER_SIZE), n = txlm_rd32(b + TXLM_HDR_SECTION_COUNT);
    uint32_t es = txlm_rd32(b + TXLM_HDR_ENTRY_SIZE);
    uint64_t table = txlm_rd64(b + TXLM_HDR_TABLE_OFFSET);
    if (hs < TXLM_HDR_SIZE || hs > TXLM_HDR_MAX || hs > size || n > TXLM_SEC_MAX || es < TXLM_SEC_ENTRY_SIZE ||
        es > TXLM_SEC_ENTRY_MAX || !inside(table, (uint64_t)n * es, size))
        return;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = b + table + (uint64_t)i * es;
        if (!inside(txlm_rd64(e + TXLM_SEC_OFFSET), txlm_rd64(e + TXLM_SEC_SIZE), size)) return;
    }
    /* Tensor hashes first: they live in TDIR, whose checksum comes next. */
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = b + table + (uint64_t)i * es;
        if (memcmp(e, TXLM_TAG_TDIR, 4)) continue;
        uint64_t off = txlm_rd64(e + TXLM_SEC_OFFSET), len = txlm_rd64(e + TXLM_SEC_SIZE);
        if (len < TXLM_TDIR_HEAD) continue;
        uint32_t count = txlm_rd32(b + off), tes = txlm_rd32(b + off + 4);
        if (tes < TXLM_TDIR_ENTRY_SIZE) continue;
        for (uint64_t k = 0; k < count && TXLM_TDIR_HEAD + (k + 1) * tes <= len; k++) {
            uint8_t *te = b + off + TXLM_TDIR_HEAD + k * tes;
            uint64_t doff = txlm_rd64(te + TXLM_TE_OFFSET), dlen = txlm_rd64(te + TXLM_TE_NBYTES);
            if (inside(doff, dlen, size)) txlm_wr64(te + TXLM_TE_HASH, XXH3_64bits(b + doff, (size_t)dlen));
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *e = b + table + (uint64_t)i * es;
        /* checked again: a tensor hash written above may have landed in the section table */
        uint64_t off = txlm_rd64(e + TXLM_SEC_OFFSET), len = txlm_rd64(e + TXLM_SEC_SIZE);
        if (inside(off, len, size) && !(txlm_rd32(e + TXLM_SEC_FLAGS) & TXLM_SECF_NO_CHECKSUM))
            txlm_wr64(e + TXLM_SEC_CHECKSUM, XXH3_64bits(b + off, (size_t)len));
    }
    uint8_t hdr[TXLM_HDR_MAX];
    memcpy(hdr, b, hs);
    memset(hdr + TXLM_HDR_CHECKSUM, 0, 8);
    XXH3_state_t *st = XXH3_createState();
    if (!st) return;
    XXH3_64bits_reset(st);
    XXH3_64bits_update(st, hdr, hs);
    XXH3_64bits_update(st, b + table, (size_t)n * es);
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = b + table + (uint64_t)i * es;
        int meta = !memcmp(e, TXLM_TAG_HPRM, 4) || !memcmp(e, TXLM_TAG_VOCB, 4) || !memcmp(e, TXLM_TAG_DTYP, 4) ||
                   !memcmp(e, TXLM_TAG_TDIR, 4);
        uint64_t off = txlm_rd64(e + TXLM_SEC_OFFSET), len = txlm_rd64(e + TXLM_SEC_SIZE);
        if (meta && inside(off, len, size)) XXH3_64bits_update(st, b + off, (size_t)len);
    }
    txlm_wr64(b + TXLM_HDR_CHECKSUM, XXH3_64bits_digest(st));
    XXH3_freeState(st);
}

/* Everything a caller may do with an opened file must stay in bounds. */
static void walk(const txlm_file *f, size_t size)
{
    const txlm_hparams *h = txlm_file_hparams(f);
    const txlm_vocab *v = txlm_file_vocab(f);
    fuzz_require(v->n == h->n_token && v->offsets[v->n] == v->blob_size, "vocabulary agrees with hparams");
    uint64_t sum = 0;
    for (uint32_t i = 0; i < v->n; i++) {
        uint32_t len;
        const char *s = txlm_vocab_sym(v, i, &len);
        if (len) sum += (uint8_t)s[0] + (uint8_t)s[len - 1];
    }
    for (uint32_t i = 0; i < txlm_file_tensor_count(f); i++) {
        const txlm_tensor_info *t = txlm_file_tensor(f, i);
        fuzz_require(t->offset <= size && t->nbytes <= size - t->offset, "tensor inside the file");
        fuzz_require(txlm_file_find(f, t->name) == t, "tensor found by its name");
        const uint8_t *d = txlm_file_data(f, t);
        if (t->nbytes) sum += d[0] + d[t->nbytes - 1];
    }
    fuzz_require(sum != UINT64_MAX, "reads happened");
}

static void open_once(const uint8_t *data, size_t size, unsigned flags)
{
    txlm_file *f = NULL;
    txlm_err err = {0, ""};
    int rc = txlm_file_open_memory(data, size, flags, &f, &err);
    if (rc == 0) {
        fuzz_require(f != NULL, "a handle on success");
        walk(f, size);
    } else {
        fuzz_require(f == NULL && err.code == rc && err.msg[0], "a status and a message on failure");
    }
    txlm_file_close(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    open_once(data, size, 0);
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    memcpy(copy, data, size);
    repair(copy, size);
    open_once(copy, size, 0);
    open_once(copy, size, TXLM_OPEN_NO_VERIFY);
    free(copy);
    return 0;
}
