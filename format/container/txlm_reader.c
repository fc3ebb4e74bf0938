/* Validating .txlm v1 reader (docs/format.md, "Reading"). The checks run in
 * the order that document gives, so that a given corruption always gives
 * the same error. Tensor data is never copied: infos point into the map. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <xxhash.h>

#include <txlm_status.h>

#include "file_map.h"
#include "sym_index.h"
#include "txlm_file.h"
#include "txlm_layout.h"

struct txlm_file {
    const uint8_t *base;
    size_t size;
    int mapped;
    uint32_t minor;
    txlm_hparams hp;
    txlm_vocab vocab;
    uint32_t *offsets;
    uint32_t n_tensors;
    txlm_tensor_info *tensors;
    txlm_sym_index by_name; /* tensor names; read-only once the file is open */
};

enum { SEC_HPRM, SEC_VOCB, SEC_DTYP, SEC_TDIR, SEC_TDAT, SEC_KNOWN };
static const char *const known_tags[SEC_KNOWN] = {TXLM_TAG_HPRM, TXLM_TAG_VOCB, TXLM_TAG_DTYP, TXLM_TAG_TDIR,
                                                  TXLM_TAG_TDAT};

typedef struct section {
    char tag[5];
    uint32_t flags;
    uint64_t off, size, checksum;
    uint64_t entry_off; /* where its table entry lies, for messages */
    int known;          /* SEC_* or -1 */
} section;

typedef struct reader {
    const char *name;
    const uint8_t *p;
    uint64_t size;
    unsigned flags;
    txlm_err *err;
    uint32_t header_size, alignment, nsec, entry_size;
    uint64_t table_off;
    section secs[TXLM_SEC_MAX];
    const section *known[SEC_KNOWN];
    uint8_t declared[TXLM_DT_COUNT]; /* dtypes listed in DTYP */
    txlm_file *f;
} reader;

static int bad(reader *r, int code, const char *fmt, ...) TXLM_PRINTF(3, 4);
static int bad(reader *r, int code, const char *fmt, ...)
{
    char buf[448];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return txlm_fail(r->err, code, "%s: %s", r->name, buf);
}

/* Bytes from the file may be anything; messages show them tamed. */
static void printable(char *dst, const uint8_t *src, size_t n)
{
    size_t i = 0;
    for (; i < n && src[i]; i++) dst[i] = (src[i] >= 0x20 && src[i] < 0x7F) ? (char)src[i] : '?';
    dst[i] = 0;
}

/* [off, off+len) lies inside the file. */
static int in_file(const reader *r, uint64_t off, uint64_t len)
{
    uint64_t end;
    return !__builtin_add_overflow(off, len, &end) && end <= r->size;
}

static int check_header(reader *r)
{
    const uint8_t *p = r->p;
    if (r->size < TXLM_HDR_SIZE)
        return bad(r, TXLM_ERR_FORMAT, "file is %" PRIu64 " bytes, shorter than the %u-byte header (truncated?)", r->size,
                   TXLM_HDR_SIZE);
    if (memcmp(p + TXLM_HDR_MAGIC, TXLM_MAGIC, TXLM_MAGIC_LEN) != 0)
        return bad(r, TXLM_ERR_FORMAT, "bad magic at offset 0: not a .txlm model file");
    uint16_t major = txlm_rd16(p + TXLM_HDR_MAJOR);
    if (major != TXLM_MAJOR)
        return bad(r, TXLM_ERR_UNSUPPORTED, "format major version %u (offset %d) is not supported; this reader knows %d",
                   major, TXLM_HDR_MAJOR, TXLM_MAJOR);
    r->f->minor = txlm_rd16(p + TXLM_HDR_MINOR);
    uint32_t bom = txlm_rd32(p + TXLM_HDR_BOM);
    if (bom != TXLM_BOM)
        return bad(r, TXLM_ERR_FORMAT, "byte-order marker 0x%08" PRIx32 " at offset %d, expected 0x%08x (little-endian)", bom,
                   TXLM_HDR_BOM, TXLM_BOM);
    uint64_t fsize = txlm_rd64(p + TXLM_HDR_FILE_SIZE);
    if (fsize != r->size)
        return bad(r, TXLM_ERR_FORMAT, "file size field (offset %d) says %" PRIu64 " bytes but the file has %" PRIu64
                   " (truncated or extended)", TXLM_HDR_FILE_SIZE, fsize, r->size);
    r->header_size = txlm_rd32(p + TXLM_HDR_HEADER_SIZE);
    if (r->header_size < TXLM_HDR_SIZE || r->header_size > TXLM_HDR_MAX || r->header_size > r->size)
        return bad(r, TXLM_ERR_FORMAT, "header size %" PRIu32 " (offset %d) out of range [%u, %u]", r->header_size,
                   TXLM_HDR_HEADER_SIZE, TXLM_HDR_SIZE, TXLM_HDR_MAX);
    r->alignment = txlm_rd32(p + TXLM_HDR_ALIGNMENT);
    if (r->alignment < TXLM_MIN_ALIGNMENT || r->alignment > TXLM_MAX_ALIGNMENT || (r->alignment & (r->alignment - 1)))
        return bad(r, TXLM_ERR_FORMAT, "alignment %" PRIu32 " (offset %d) is not a power of two in [%u, %u]", r->alignment,
                   TXLM_HDR_ALIGNMENT, TXLM_MIN_ALIGNMENT, TXLM_MAX_ALIGNMENT);
    r->nsec = txlm_rd32(p + TXLM_HDR_SECTION_COUNT);
    if (r->nsec < 1 || r->nsec > TXLM_SEC_MAX)
        return bad(r, TXLM_ERR_FORMAT, "section count %" PRIu32 " (offset %d) out of range [1, %u]", r->nsec,
                   TXLM_HDR_SECTION_COUNT, TXLM_SEC_MAX);
    r->entry_size = txlm_rd32(p + TXLM_HDR_ENTRY_SIZE);
    if (r->entry_size < TXLM_SEC_ENTRY_SIZE || r->entry_size > TXLM_SEC_ENTRY_MAX)
        return bad(r, TXLM_ERR_FORMAT, "section entry size %" PRIu32 " (offset %d) out of range [%u, %u]", r->entry_size,
                   TXLM_HDR_ENTRY_SIZE, TXLM_SEC_ENTRY_SIZE, TXLM_SEC_ENTRY_MAX);
    r->table_off = txlm_rd64(p + TXLM_HDR_TABLE_OFFSET);
    if (!in_file(r, r->table_off, (uint64_t)r->nsec * r->entry_size))
        return bad(r, TXLM_ERR_FORMAT, "section table at offset %" PRIu64 " (%" PRIu32 " x %" PRIu32
                   " bytes) lies outside the file of %" PRIu64 " bytes", r->table_off, r->nsec, r->entry_size, r->size);
    return 0;
}

static int read_table(reader *r)
{
    for (uint32_t i = 0; i < r->nsec; i++) {
        section *s = &r->secs[i];
        s->entry_off = r->table_off + (uint64_t)i * r->entry_size;
        const uint8_t *e = r->p + s->entry_off;
        for (int k = 0; k < 4; k++) {
            if (e[k] < 0x20 || e[k] > 0x7E)
                return bad(r, TXLM_ERR_FORMAT, "section %" PRIu32 " (offset %" PRIu64 "): tag byte %d is 0x%02x, not printable ASCII",
                           i, s->entry_off, k, e[k]);
            s->tag[k] = (char)e[k];
        }
        s->tag[4] = 0;
        s->flags = txlm_rd32(e + TXLM_SEC_FLAGS);
        s->off = txlm_rd64(e + TXLM_SEC_OFFSET);
        s->size = txlm_rd64(e + TXLM_SEC_SIZE);
        s->checksum = txlm_rd64(e + TXLM_SEC_CHECKSUM);
        s->known = -1;
        for (int k = 0; k < SEC_KNOWN; k++)
            if (memcmp(s->tag, known_tags[k], 4) == 0) s->known = k;
        if (!in_file(r, s->off, s->size))
            return bad(r, TXLM_ERR_FORMAT, "section %s (entry at offset %" PRIu64 "): range [%" PRIu64 ", +%" PRIu64
                       ") lies outside the file of %" PRIu64 " bytes", s->tag, s->entry_off, s->off, s->size, r->size);
    }
    return 0;
}

static int is_metadata(int known) { return known >= 0 && known != SEC_TDAT; }

static int check_header_checksum(reader *r)
{
    uint8_t hdr[TXLM_HDR_MAX];
    memcpy(hdr, r->p, r->header_size);
    memset(hdr + TXLM_HDR_CHECKSUM, 0, 8);
    XXH3_state_t *st = XXH3_createState();
    if (!st) return bad(r, TXLM_ERR_OUT_OF_MEMORY, "out of memory for the hash state");
    XXH3_64bits_reset(st);
    XXH3_64bits_update(st, hdr, r->header_size);
    XXH3_64bits_update(st, r->p + r->table_off, (size_t)r->nsec * r->entry_size);
    for (uint32_t i = 0; i < r->nsec; i++)
        if (is_metadata(r->secs[i].known)) XXH3_64bits_update(st, r->p + r->secs[i].off, r->secs[i].size);
    uint64_t got = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    uint64_t want = txlm_rd64(r->p + TXLM_HDR_CHECKSUM);
    if (got != want)
        return bad(r, TXLM_ERR_CHECKSUM, "header checksum (offset %d) is %016" PRIx64 " but header, section table and "
                   "metadata sections hash to %016" PRIx64, TXLM_HDR_CHECKSUM, want, got);
    return 0;
}

typedef struct range {
    uint64_t off, size;
    const char *what;
} range;

static int cmp_range(const void *a, const void *b)
{
    const range *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

static int check_sections(reader *r)
{
    for (uint32_t i = 0; i < r->nsec; i++) {
        section *s = &r->secs[i];
        if (s->known < 0) {
            if (s->flags & TXLM_SECF_REQUIRED)
                return bad(r, TXLM_ERR_UNSUPPORTED, "unknown required section '%s' (entry at offset %" PRIu64 ")", s->tag,
                           s->entry_off);
            continue;
        }
        if (r->known[s->known])
            return bad(r, TXLM_ERR_FORMAT, "section %s appears twice (second entry at offset %" PRIu64 ")", s->tag,
                       s->entry_off);
        r->known[s->known] = s;
        if ((s->flags & TXLM_SECF_NO_CHECKSUM) && s->known != SEC_TDAT)
            return bad(r, TXLM_ERR_FORMAT, "section %s (entry at offset %" PRIu64 ") must carry a checksum", s->tag,
                       s->entry_off);
        if ((s->flags & TXLM_SECF_NO_CHECKSUM) && s->checksum != 0)
            return bad(r, TXLM_ERR_FORMAT, "section %s (entry at offset %" PRIu64 ") has no-checksum flag but checksum %016" PRIx64,
                       s->tag, s->entry_off, s->checksum);
    }
    for (int k = 0; k < SEC_KNOWN; k++)
        if (!r->known[k]) return bad(r, TXLM_ERR_FORMAT, "required section %s is missing", known_tags[k]);

    range rs[TXLM_SEC_MAX + 2];
    uint32_t n = 0;
    rs[n++] = (range){0, r->header_size, "header"};
    rs[n++] = (range){r->table_off, (uint64_t)r->nsec * r->entry_size, "section table"};
    for (uint32_t i = 0; i < r->nsec; i++)
        if (r->secs[i].size) rs[n++] = (range){r->secs[i].off, r->secs[i].size, r->secs[i].tag};
    qsort(rs, n, sizeof rs[0], cmp_range);
    for (uint32_t i = 1; i < n; i++)
        if (rs[i].off < rs[i - 1].off + rs[i - 1].size)
            return bad(r, TXLM_ERR_FORMAT, "%s [%" PRIu64 ", +%" PRIu64 ") overlaps %s [%" PRIu64 ", +%" PRIu64 ")", rs[i].what,
                       rs[i].off, rs[i].size, rs[i - 1].what, rs[i - 1].off, rs[i - 1].size);

    for (int k = 0; k < SEC_KNOWN; k++) {
        const section *s = r->known[k];
        if (s->flags & TXLM_SECF_NO_CHECKSUM) continue;
        if (k == SEC_TDAT && (r->flags & TXLM_OPEN_NO_VERIFY)) continue;
        uint64_t got = XXH3_64bits(r->p + s->off, s->size);
        if (got != s->checksum)
            return bad(r, TXLM_ERR_CHECKSUM, "section %s at offset %" PRIu64 ": checksum %016" PRIx64 " in the table, data hashes to %016" PRIx64,
                       s->tag, s->off, s->checksum, got);
    }
    return 0;
}

static int read_hparams(reader *r)
{
    const section *s = r->known[SEC_HPRM];
    const uint8_t *p = r->p + s->off;
    if (s->size < TXLM_HPRM_SIZE || s->size > TXLM_HPRM_MAX)
        return bad(r, TXLM_ERR_FORMAT, "HPRM at offset %" PRIu64 ": size %" PRIu64 " out of range [%u, %u]", s->off, s->size,
                   TXLM_HPRM_SIZE, TXLM_HPRM_MAX);
    uint32_t declared = txlm_rd32(p + TXLM_HP_SIZE);
    if (declared != s->size)
        return bad(r, TXLM_ERR_FORMAT, "HPRM at offset %" PRIu64 ": size field %" PRIu32 " differs from section size %" PRIu64,
                   s->off, declared, s->size);
    txlm_hparams *h = &r->f->hp;
    memset(h, 0, sizeof *h);
    h->n_token = txlm_rd32(p + TXLM_HP_N_TOKEN);
    h->d_model = txlm_rd32(p + TXLM_HP_D_MODEL);
    h->d_embed = txlm_rd32(p + TXLM_HP_D_EMBED);
    h->n_head = txlm_rd32(p + TXLM_HP_N_HEAD);
    h->d_head = txlm_rd32(p + TXLM_HP_D_HEAD);
    h->d_inner = txlm_rd32(p + TXLM_HP_D_INNER);
    h->n_layer = txlm_rd32(p + TXLM_HP_N_LAYER);
    h->div_val = txlm_rd32(p + TXLM_HP_DIV_VAL);
    h->n_cutoffs = txlm_rd32(p + TXLM_HP_N_CUTOFFS);
    for (int i = 0; i < TXLM_MAX_CUTOFFS; i++) h->cutoffs[i] = txlm_rd32(p + TXLM_HP_CUTOFFS + 4 * i);
    for (int i = 0; i < TXLM_MAX_CLUSTERS; i++) h->tie_projs[i] = p[TXLM_HP_TIE_PROJS + i];
    h->tie_weight = p[TXLM_HP_TIE_WEIGHT];
    h->pre_lnorm = p[TXLM_HP_PRE_LNORM];
    h->untie_r = p[TXLM_HP_UNTIE_R];
    h->same_length = p[TXLM_HP_SAME_LENGTH];
    h->clamp_len = (int32_t)txlm_rd32(p + TXLM_HP_CLAMP_LEN);
    h->mem_len = txlm_rd32(p + TXLM_HP_MEM_LEN);
    h->tgt_len = txlm_rd32(p + TXLM_HP_TGT_LEN);
    h->ext_len = txlm_rd32(p + TXLM_HP_EXT_LEN);
    h->attn_type = txlm_rd32(p + TXLM_HP_ATTN_TYPE);
    h->layer_norm_epsilon = txlm_rdf32(p + TXLM_HP_LN_EPS);
    if (declared >= TXLM_HPRM_SIZE_1_1) h->same_length_rule = txlm_rd32(p + TXLM_HP_SAME_LENGTH_RULE);
    if (declared >= TXLM_HPRM_SIZE_1_2) h->zero_memory = txlm_rd32(p + TXLM_HP_ZERO_MEMORY);
    char why[256];
    if (txlm_hparams_validate(h, why, sizeof why) != 0)
        return bad(r, TXLM_ERR_FORMAT, "HPRM at offset %" PRIu64 ": %s", s->off, why);
    for (uint32_t i = h->n_cutoffs; i < TXLM_MAX_CUTOFFS; i++)
        if (h->cutoffs[i])
            return bad(r, TXLM_ERR_FORMAT, "HPRM at offset %" PRIu64 ": unused cutoffs[%" PRIu32 "] is not zero", s->off, i);
    for (uint32_t i = h->n_cutoffs + 1; i < TXLM_MAX_CLUSTERS; i++)
        if (h->tie_projs[i])
            return bad(r, TXLM_ERR_FORMAT, "HPRM at offset %" PRIu64 ": unused tie_projs[%" PRIu32 "] is not zero", s->off, i);
    return 0;
}

/* Refuses a section shorter than its fixed head (1 after setting the error). */
static int short_head(reader *r, const section *s, const char *tag, unsigned head)
{
    if (s->size >= head) return 0;
    bad(r, TXLM_ERR_FORMAT, "%s at offset %" PRIu64 ": %" PRIu64 " bytes, shorter than its %u-byte head", tag, s->off,
        s->size, head);
    return 1;
}

static int read_vocab(reader *r)
{
    const section *s = r->known[SEC_VOCB];
    const uint8_t *p = r->p + s->off;
    if (short_head(r, s, "VOCB", TXLM_VOCB_HEAD)) return TXLM_ERR_FORMAT;
    txlm_vocab *v = &r->f->vocab;
    v->n = txlm_rd32(p);
    v->kind = txlm_rd32(p + 4);
    v->flags = txlm_rd32(p + 8);
    v->eos_id = (int32_t)txlm_rd32(p + 12);
    v->unk_id = (int32_t)txlm_rd32(p + 16);
    v->blob_size = txlm_rd32(p + 20);
    if (v->n < 1 || v->n > TXLM_VOCB_MAX_N)
        return bad(r, TXLM_ERR_FORMAT, "VOCB at offset %" PRIu64 ": n = %" PRIu32 " out of range [1, 2^24]", s->off, v->n);
    if (v->blob_size > TXLM_VOCB_MAX_BLOB)
        return bad(r, TXLM_ERR_FORMAT, "VOCB at offset %" PRIu64 ": blob size %" PRIu32 " exceeds 1 GiB", s->off, v->blob_size);
    uint64_t want = TXLM_VOCB_HEAD + 4 * ((uint64_t)v->n + 1) + v->blob_size;
    if (want != s->size)
        return bad(r, TXLM_ERR_FORMAT, "VOCB at offset %" PRIu64 ": n = %" PRIu32 " and blob size %" PRIu32 " need %" PRIu64
                   " bytes, section has %" PRIu64, s->off, v->n, v->blob_size, want, s->size);
    if (v->n != r->f->hp.n_token)
        return bad(r, TXLM_ERR_FORMAT, "VOCB at offset %" PRIu64 ": %" PRIu32 " symbols but HPRM n_token is %" PRIu32, s->off,
                   v->n, r->f->hp.n_token);
    r->f->offsets = malloc(4 * ((size_t)v->n + 1));
    if (!r->f->offsets) return bad(r, TXLM_ERR_OUT_OF_MEMORY, "out of memory for %" PRIu32 " vocabulary offsets", v->n);
    for (uint32_t i = 0; i <= v->n; i++) r->f->offsets[i] = txlm_rd32(p + TXLM_VOCB_HEAD + 4 * (size_t)i);
    v->offsets = r->f->offsets;
    v->blob = (const char *)p + TXLM_VOCB_HEAD + 4 * ((size_t)v->n + 1);
    char where[64];
    snprintf(where, sizeof where, "VOCB at offset %" PRIu64, s->off);
    int rc = txlm_vocab_check(v, where, TXLM_ERR_FORMAT, r->err);
    if (rc) return txlm_fail_prefix(r->err, "%s: ", r->name);
    return 0;
}

/* The head of a section holding a table (DTYP, TDIR): count entries of
 * esize bytes, bounded, filling the section exactly. */
typedef struct table_form {
    const char *tag;
    unsigned head, max_count, min_esize, max_esize;
} table_form;

static int table_head(reader *r, const section *s, const table_form *t, uint32_t *count, uint32_t *esize)
{
    const uint8_t *p = r->p + s->off;
    if (short_head(r, s, t->tag, t->head)) return TXLM_ERR_FORMAT;
    *count = txlm_rd32(p), *esize = txlm_rd32(p + 4);
    if (*count > t->max_count)
        return bad(r, TXLM_ERR_FORMAT, "%s at offset %" PRIu64 ": %" PRIu32 " entries exceed the cap of %u", t->tag, s->off,
                   *count, t->max_count);
    if (*esize < t->min_esize || *esize > t->max_esize)
        return bad(r, TXLM_ERR_FORMAT, "%s at offset %" PRIu64 ": entry size %" PRIu32 " out of range [%u, %u]", t->tag,
                   s->off, *esize, t->min_esize, t->max_esize);
    if (s->size != t->head + (uint64_t)*count * *esize)
        return bad(r, TXLM_ERR_FORMAT, "%s at offset %" PRIu64 ": %" PRIu32 " entries of %" PRIu32 " bytes do not fill %" PRIu64
                   " bytes", t->tag, s->off, *count, *esize, s->size);
    return 0;
}

static int read_dtypes(reader *r)
{
    const section *s = r->known[SEC_DTYP];
    static const table_form form = {"DTYP", TXLM_DTYP_HEAD, TXLM_DTYP_MAX, TXLM_DTYP_ENTRY_SIZE, TXLM_SEC_ENTRY_MAX};
    uint32_t count, esize;
    if (table_head(r, s, &form, &count, &esize)) return TXLM_ERR_FORMAT;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t eoff = s->off + TXLM_DTYP_HEAD + (uint64_t)i * esize;
        const uint8_t *e = r->p + eoff;
        uint32_t id = txlm_rd32(e + TXLM_DT_ID), be = txlm_rd32(e + TXLM_DT_BLOCK_ELEMS), bb = txlm_rd32(e + TXLM_DT_BLOCK_BYTES);
        const uint8_t *nm = e + TXLM_DT_NAME;
        if (!memchr(nm, 0, TXLM_DTYP_NAME_LEN))
            return bad(r, TXLM_ERR_FORMAT, "DTYP entry %" PRIu32 " (offset %" PRIu64 "): name is not NUL-terminated", i, eoff);
        char name[TXLM_DTYP_NAME_LEN];
        printable(name, nm, TXLM_DTYP_NAME_LEN - 1);
        const txlm_dtype_info *di = txlm_dtype_get(id);
        if (!di)
            return bad(r, TXLM_ERR_UNSUPPORTED, "DTYP entry %" PRIu32 " (offset %" PRIu64 "): unknown dtype %" PRIu32 " '%s'", i,
                       eoff, id, name);
        if (strcmp((const char *)nm, di->name) != 0 || be != di->block_elems || bb != di->block_bytes)
            return bad(r, TXLM_ERR_UNSUPPORTED, "DTYP entry %" PRIu32 " (offset %" PRIu64 "): dtype %" PRIu32 " is '%s' with %" PRIu32
                       "-element blocks of %" PRIu32 " bytes, this reader knows '%s' with %" PRIu32 "/%" PRIu32, i, eoff, id, name,
                       be, bb, di->name, di->block_elems, di->block_bytes);
        if (r->declared[id])
            return bad(r, TXLM_ERR_FORMAT, "DTYP entry %" PRIu32 " (offset %" PRIu64 "): dtype %" PRIu32 " listed twice", i, eoff, id);
        r->declared[id] = 1;
    }
    return 0;
}

static int read_tensor(reader *r, uint32_t i, uint64_t eoff, txlm_tensor_info *t)
{
    const uint8_t *e = r->p + eoff;
    const uint8_t *nul = memchr(e + TXLM_TE_NAME, 0, TXLM_MAX_NAME);
    if (!nul) return bad(r, TXLM_ERR_FORMAT, "TDIR entry %" PRIu32 " (offset %" PRIu64 "): name is not NUL-terminated", i, eoff);
    size_t len = (size_t)(nul - (e + TXLM_TE_NAME));
    if (len == 0) return bad(r, TXLM_ERR_FORMAT, "TDIR entry %" PRIu32 " (offset %" PRIu64 "): empty name", i, eoff);
    for (size_t k = len; k < TXLM_MAX_NAME; k++)
        if (e[TXLM_TE_NAME + k])
            return bad(r, TXLM_ERR_FORMAT, "TDIR entry %" PRIu32 " (offset %" PRIu64 "): name padding byte %zu is not zero", i,
                       eoff, k);
    if (txlm_utf8_valid_prefix(e + TXLM_TE_NAME, len) != len)
        return bad(r, TXLM_ERR_FORMAT, "TDIR entry %" PRIu32 " (offset %" PRIu64 "): name is not valid UTF-8", i, eoff);
    memcpy(t->name, e + TXLM_TE_NAME, TXLM_MAX_NAME);
    char shown[TXLM_MAX_NAME];
    printable(shown, (const uint8_t *)t->name, TXLM_MAX_NAME - 1);

    t->dtype = txlm_rd32(e + TXLM_TE_DTYPE);
    t->rank = txlm_rd32(e + TXLM_TE_RANK);
    for (int d = 0; d < TXLM_MAX_RANK; d++) t->dims[d] = txlm_rd64(e + TXLM_TE_DIMS + 8 * d);
    t->offset = txlm_rd64(e + TXLM_TE_OFFSET);
    t->nbytes = txlm_rd64(e + TXLM_TE_NBYTES);
    t->hash = txlm_rd64(e + TXLM_TE_HASH);

    if (t->dtype >= TXLM_DT_COUNT || !r->declared[t->dtype])
        return bad(r, TXLM_ERR_FORMAT, "tensor '%s' (TDIR entry at offset %" PRIu64 "): dtype %" PRIu32 " is not listed in DTYP",
                   shown, eoff, t->dtype);
    if (t->rank < 1 || t->rank > TXLM_MAX_RANK)
        return bad(r, TXLM_ERR_FORMAT, "tensor '%s' (TDIR entry at offset %" PRIu64 "): rank %" PRIu32 " out of range [1, %d]",
                   shown, eoff, t->rank, TXLM_MAX_RANK);
    for (uint32_t d = t->rank; d < TXLM_MAX_RANK; d++)
        if (t->dims[d])
            return bad(r, TXLM_ERR_FORMAT, "tensor '%s' (TDIR entry at offset %" PRIu64 "): unused dims[%" PRIu32 "] is not zero",
                       shown, eoff, d);
    txlm_err why = {0, ""};
    uint64_t want = txlm_tensor_nbytes(t->dtype, t->rank, t->dims, &why);
    if (!want)
        return bad(r, why.code ? why.code : TXLM_ERR_FORMAT, "tensor '%s' (TDIR entry at offset %" PRIu64 "): %s", shown, eoff,
                   why.msg);
    if (t->nbytes != want)
        return bad(r, TXLM_ERR_FORMAT, "tensor '%s' (TDIR entry at offset %" PRIu64 "): nbytes %" PRIu64 " but dtype and dims give %" PRIu64,
                   shown, eoff, t->nbytes, want);
    t->n_elems = 1;
    for (uint32_t d = 0; d < t->rank; d++) t->n_elems *= t->dims[d];
    if (t->offset % r->alignment)
        return bad(r, TXLM_ERR_FORMAT, "tensor '%s' (TDIR entry at offset %" PRIu64 "): data offset %" PRIu64
                   " is not aligned to %" PRIu32, shown, eoff, t->offset, r->alignment);
    const section *dat = r->known[SEC_TDAT];
    uint64_t end;
    if (t->offset < dat->off || __builtin_add_overflow(t->offset, t->nbytes, &end) || end > dat->off + dat->size)
        return bad(r, TXLM_ERR_FORMAT, "tensor '%s' (TDIR entry at offset %" PRIu64 "): data [%" PRIu64 ", +%" PRIu64
                   ") lies outside TDAT [%" PRIu64 ", +%" PRIu64 ")", shown, eoff, t->offset, t->nbytes, dat->off, dat->size);
    if (txlm_sym_index_add(&r->f->by_name, i) >= 0)
        return bad(r, TXLM_ERR_FORMAT, "tensor '%s' (TDIR entry at offset %" PRIu64 "): duplicate name", shown, eoff);
    return 0;
}

static int cmp_tensor_off(const void *a, const void *b)
{
    const txlm_tensor_info *x = *(const txlm_tensor_info *const *)a, *y = *(const txlm_tensor_info *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int check_tensor_overlap(reader *r)
{
    txlm_file *f = r->f;
    if (f->n_tensors < 2) return 0;
    const txlm_tensor_info **order = malloc(f->n_tensors * sizeof *order);
    if (!order) return bad(r, TXLM_ERR_OUT_OF_MEMORY, "out of memory sorting %" PRIu32 " tensors", f->n_tensors);
    for (uint32_t i = 0; i < f->n_tensors; i++) order[i] = &f->tensors[i];
    qsort(order, f->n_tensors, sizeof *order, cmp_tensor_off);
    int rc = 0;
    for (uint32_t i = 1; i < f->n_tensors && !rc; i++) {
        const txlm_tensor_info *a = order[i - 1], *b = order[i];
        if (b->offset < a->offset + a->nbytes) {
            char sa[TXLM_MAX_NAME], sb[TXLM_MAX_NAME];
            printable(sa, (const uint8_t *)a->name, TXLM_MAX_NAME - 1);
            printable(sb, (const uint8_t *)b->name, TXLM_MAX_NAME - 1);
            rc = bad(r, TXLM_ERR_FORMAT, "tensor '%s' data [%" PRIu64 ", +%" PRIu64 ") overlaps tensor '%s' [%" PRIu64 ", +%" PRIu64 ")",
                     sb, b->offset, b->nbytes, sa, a->offset, a->nbytes);
        }
    }
    free(order);
    return rc;
}

static const char *tensor_name(const void *ctx, uint32_t id, size_t *len)
{
    const char *name = ((const txlm_file *)ctx)->tensors[id].name;
    *len = strlen(name);
    return name;
}

static int read_tensors(reader *r)
{
    const section *s = r->known[SEC_TDIR];
    static const table_form form = {"TDIR", TXLM_TDIR_HEAD, TXLM_TDIR_MAX, TXLM_TDIR_ENTRY_SIZE, TXLM_TDIR_ENTRY_MAX};
    uint32_t count, esize;
    if (table_head(r, s, &form, &count, &esize)) return TXLM_ERR_FORMAT;
    txlm_file *f = r->f;
    f->tensors = calloc(count ? count : 1, sizeof *f->tensors);
    if (!f->tensors || txlm_sym_index_init(&f->by_name, count, tensor_name, f))
        return bad(r, TXLM_ERR_OUT_OF_MEMORY, "out of memory for %" PRIu32 " tensor infos", count);
    for (uint32_t i = 0; i < count; i++) {
        int rc = read_tensor(r, i, s->off + TXLM_TDIR_HEAD + (uint64_t)i * esize, &f->tensors[i]);
        f->n_tensors = i + 1;
        if (rc) return rc;
    }
    int rc = check_tensor_overlap(r);
    if (rc || (r->flags & TXLM_OPEN_NO_VERIFY)) return rc;
    for (uint32_t i = 0; i < count; i++) {
        const txlm_tensor_info *t = &f->tensors[i];
        uint64_t got = XXH3_64bits(r->p + t->offset, (size_t)t->nbytes);
        if (got != t->hash) {
            char shown[TXLM_MAX_NAME];
            printable(shown, (const uint8_t *)t->name, TXLM_MAX_NAME - 1);
            return bad(r, TXLM_ERR_CHECKSUM, "tensor '%s' data at offset %" PRIu64 ": hash %016" PRIx64 " in TDIR, data hashes to %016" PRIx64,
                       shown, t->offset, t->hash, got);
        }
    }
    return 0;
}

static int parse(reader *r)
{
    int rc;
    if ((rc = check_header(r))) return rc;
    if ((rc = read_table(r))) return rc;
    if ((rc = check_header_checksum(r))) return rc;
    if ((rc = check_sections(r))) return rc;
    if ((rc = read_hparams(r))) return rc;
    if ((rc = read_vocab(r))) return rc;
    if ((rc = read_dtypes(r))) return rc;
    return read_tensors(r);
}

static int open_common(const char *name, const uint8_t *data, size_t size, int mapped, unsigned flags, txlm_file **out,
                       txlm_err *err)
{
    txlm_file *f = calloc(1, sizeof *f);
    if (!f) {
        if (mapped) munmap((void *)data, size);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
    }
    f->base = data;
    f->size = size;
    f->mapped = mapped;
    reader r = {.name = name, .p = data, .size = size, .flags = flags, .err = err, .f = f};
    int rc = parse(&r);
    if (rc) {
        txlm_file_close(f);
        return rc;
    }
    *out = f;
    return 0;
}

int txlm_file_open_memory(const void *data, size_t size, unsigned flags, txlm_file **out, txlm_err *err)
{
    if (!out || (!data && size)) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "txlm_file_open_memory: NULL argument");
    *out = NULL;
    static const uint8_t empty[1];
    return open_common("<memory>", data ? data : empty, size, 0, flags, out, err);
}

int txlm_file_open(const char *path, unsigned flags, txlm_file **out, txlm_err *err)
{
    if (!path || !out) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "txlm_file_open: NULL argument");
    *out = NULL;
    txlm_file_map fm;
    int rc = txlm_file_map_open(path, &fm, err);
    if (rc) return rc;
    /* an empty file is not mapped (fm.data is a static "") */
    return open_common(path, fm.data, (size_t)fm.len, fm.len > 0, flags, out, err);
}

void txlm_file_close(txlm_file *f)
{
    if (!f) return;
    if (f->mapped) munmap((void *)f->base, f->size);
    txlm_sym_index_free(&f->by_name);
    free(f->tensors);
    free(f->offsets);
    free(f);
}

const txlm_hparams *txlm_file_hparams(const txlm_file *f) { return &f->hp; }
const txlm_vocab *txlm_file_vocab(const txlm_file *f) { return &f->vocab; }
uint32_t txlm_file_version_minor(const txlm_file *f) { return f->minor; }
uint64_t txlm_file_size(const txlm_file *f) { return f->size; }
uint32_t txlm_file_tensor_count(const txlm_file *f) { return f->n_tensors; }

const txlm_tensor_info *txlm_file_tensor(const txlm_file *f, uint32_t i)
{
    return i < f->n_tensors ? &f->tensors[i] : NULL;
}

/* Reads only: any number of threads may look up at once. */
const txlm_tensor_info *txlm_file_find(const txlm_file *f, const char *name)
{
    if (!name) return NULL;
    int64_t i = txlm_sym_index_find(&f->by_name, name, strlen(name));
    return i < 0 ? NULL : &f->tensors[i];
}

const void *txlm_file_data(const txlm_file *f, const txlm_tensor_info *t) { return f->base + t->offset; }
