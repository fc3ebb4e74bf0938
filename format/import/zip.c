/* Zip directory reader (zip.h). Offsets and sizes come from the central
 * directory (torch.save writes data descriptors, so local headers may hold
 * zeros), and each is checked against the file before use. */
#include "zip.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm_status.h>

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOC64 0x07064b50u
#define EOCD_SIZE 22u
#define LOC64_SIZE 20u
#define EOCD64_SIZE 56u
#define CENTRAL_SIZE 46u
#define LOCAL_SIZE 30u
#define MAX_COMMENT 65535u
#define MAX_ENTRIES (1u << 24)

static uint64_t rd(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static uint32_t crc_table[8][256];

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++) crc_table[t][i] = crc_table[0][crc_table[t - 1][i] & 0xff] ^ (crc_table[t - 1][i] >> 8);
}

/* Slicing by 8: the storages of a large checkpoint are checked at a few
 * GB/s instead of a few hundred MB/s. */
uint32_t txlm_crc32(uint32_t crc, const void *data, size_t len)
{
    if (!crc_table[0][1]) crc_init();
    const uint8_t *p = data;
    crc = ~crc;
    while (len >= 8) {
        uint32_t a = crc ^ (uint32_t)rd(p, 4), b = (uint32_t)rd(p + 4, 4);
        crc = crc_table[7][a & 0xff] ^ crc_table[6][(a >> 8) & 0xff] ^ crc_table[5][(a >> 16) & 0xff] ^
              crc_table[4][a >> 24] ^ crc_table[3][b & 0xff] ^ crc_table[2][(b >> 8) & 0xff] ^
              crc_table[1][(b >> 16) & 0xff] ^ crc_table[0][b >> 24];
        p += 8;
        len -= 8;
    }
    while (len--) crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

typedef struct dir_info {
    uint64_t n, size, offset, end; /* end: where the directory must stop (the EOCD record) */
} dir_info;

static int find_eocd(const char *where, const uint8_t *d, uint64_t len, uint64_t *at, txlm_err *err)
{
    if (len < EOCD_SIZE)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: %" PRIu64 " bytes, too short for a zip file (truncated?)", where, len);
    uint64_t lo = len - EOCD_SIZE > MAX_COMMENT ? len - EOCD_SIZE - MAX_COMMENT : 0;
    for (uint64_t p = len - EOCD_SIZE + 1; p-- > lo;)
        if (rd(d + p, 4) == SIG_EOCD && p + EOCD_SIZE + rd(d + p + 20, 2) <= len) {
            *at = p;
            return 0;
        }
    return txlm_fail(err, TXLM_ERR_FORMAT,
                     "%s: no zip end-of-central-directory record in the last %" PRIu64 " bytes (truncated zip?)", where,
                     len - lo);
}

/* Where the end record and its zip64 twin keep the same four things: the
 * two disk numbers (side by side, disk_w bytes each), the entry count and
 * the directory's size and offset (the last two num_w bytes each). */
typedef struct end_fields {
    uint8_t disk, disk_w, n, n_w, size, offset, num_w;
} end_fields;

static const end_fields EOCD_FIELDS = {.disk = 4, .disk_w = 2, .n = 10, .n_w = 2, .size = 12, .offset = 16, .num_w = 4};
static const end_fields EOCD64_FIELDS = {.disk = 16, .disk_w = 4, .n = 32, .n_w = 8, .size = 40, .offset = 48, .num_w = 8};

/* The directory an end record at byte `at` describes. */
static int read_end(const char *where, const uint8_t *d, uint64_t at, const end_fields *f, dir_info *di, txlm_err *err)
{
    const uint8_t *p = d + at;
    if (rd(p + f->disk, f->disk_w) != 0 || rd(p + f->disk + f->disk_w, f->disk_w) != 0)
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "%s: multi-disk zip files are not supported", where);
    di->n = rd(p + f->n, f->n_w);
    di->size = rd(p + f->size, f->num_w);
    di->offset = rd(p + f->offset, f->num_w);
    di->end = at;
    return 0;
}

static int read_eocd64(const char *where, const uint8_t *d, uint64_t eocd, dir_info *di, txlm_err *err)
{
    uint64_t loc = eocd - LOC64_SIZE;
    if (rd(d + loc + 4, 4) != 0 || rd(d + loc + 16, 4) > 1)
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "%s: multi-disk zip files are not supported", where);
    uint64_t at = rd(d + loc + 8, 8);
    if (at > loc || loc - at < EOCD64_SIZE || rd(d + at, 4) != SIG_EOCD64)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: zip64 end-of-central-directory locator points to byte %" PRIu64
                                               ", where there is no zip64 record",
                         where, at);
    return read_end(where, d, at, &EOCD64_FIELDS, di, err);
}

static int read_dir_info(const char *where, const uint8_t *d, uint64_t len, dir_info *di, txlm_err *err)
{
    uint64_t eocd = 0;
    int rc = find_eocd(where, d, len, &eocd, err);
    if (!rc) rc = read_end(where, d, eocd, &EOCD_FIELDS, di, err);
    if (rc) return rc;
    if (eocd >= LOC64_SIZE && rd(d + eocd - LOC64_SIZE, 4) == SIG_LOC64) {
        rc = read_eocd64(where, d, eocd, di, err);
        if (rc) return rc;
    } else if (di->n == 0xffff || di->size == 0xffffffffu || di->offset == 0xffffffffu) {
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: zip end record needs a zip64 record, which is missing", where);
    }
    if (di->offset > di->end || di->size > di->end - di->offset)
        return txlm_fail(err, TXLM_ERR_FORMAT,
                         "%s: zip central directory [%" PRIu64 ", +%" PRIu64 ") runs past its end record at byte %" PRIu64,
                         where, di->offset, di->size, di->end);
    if (di->n > MAX_ENTRIES || di->n > di->size / CENTRAL_SIZE)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: zip directory claims %" PRIu64 " entries in %" PRIu64 " bytes", where,
                         di->n, di->size);
    return 0;
}

/* Replaces the 0xffffffff fields of a central entry by their zip64 values. */
static int apply_zip64(const char *where, const uint8_t *extra, uint64_t elen, uint64_t *usize, uint64_t *csize,
                       uint64_t *local, uint64_t entry_at, txlm_err *err)
{
    for (uint64_t p = 0; p + 4 <= elen;) {
        uint64_t id = rd(extra + p, 2), n = rd(extra + p + 2, 2);
        if (p + 4 + n > elen) break;
        if (id == 1) {
            const uint8_t *f = extra + p + 4;
            uint64_t k = 0;
            uint64_t *fields[3] = {usize, csize, local};
            for (int i = 0; i < 3; i++) {
                if (*fields[i] != 0xffffffffu) continue;
                if (k + 8 > n) break;
                *fields[i] = rd(f + k, 8);
                k += 8;
            }
            break;
        }
        p += 4 + n;
    }
    if (*usize == 0xffffffffu || *csize == 0xffffffffu || *local == 0xffffffffu)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: zip directory entry at byte %" PRIu64 " lacks its zip64 sizes", where,
                         entry_at);
    return 0;
}

static void name_str(char *out, size_t cap, const char *s, uint64_t n)
{
    size_t k = 0;
    for (uint64_t i = 0; i < n && k + 1 < cap; i++) out[k++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    out[k] = 0;
}

static int read_entry(const char *where, const uint8_t *d, const dir_info *di, uint64_t *pos, txlm_zip_entry *e,
                      txlm_err *err)
{
    uint64_t p = *pos, stop = di->offset + di->size;
    if (stop - p < CENTRAL_SIZE || rd(d + p, 4) != SIG_CENTRAL)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: bad zip central directory entry at byte %" PRIu64, where, p);
    uint64_t flags = rd(d + p + 8, 2), method = rd(d + p + 10, 2);
    uint64_t csize = rd(d + p + 20, 4), usize = rd(d + p + 24, 4);
    uint64_t nlen = rd(d + p + 28, 2), elen = rd(d + p + 30, 2), clen = rd(d + p + 32, 2);
    uint64_t local = rd(d + p + 42, 4);
    if (stop - p - CENTRAL_SIZE < nlen + elen + clen)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: zip central directory entry at byte %" PRIu64 " runs past the directory",
                         where, p);
    const char *name = (const char *)d + p + CENTRAL_SIZE;
    char shown[128];
    name_str(shown, sizeof shown, name, nlen);
    int rc = apply_zip64(where, d + p + CENTRAL_SIZE + nlen, elen, &usize, &csize, &local, p, err);
    if (rc) return rc;
    if (flags & 1) return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "%s: zip entry '%s' is encrypted", where, shown);
    if (method != 0)
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED,
                         "%s: zip entry '%s' is compressed (method %" PRIu64
                         "); torch.save stores entries uncompressed: save the checkpoint again with torch.save",
                         where, shown, method);
    if (csize != usize)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: stored zip entry '%s' has sizes %" PRIu64 " and %" PRIu64 " that differ",
                         where, shown, csize, usize);
    if (local > di->offset || di->offset - local < LOCAL_SIZE || rd(d + local, 4) != SIG_LOCAL)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: zip entry '%s': no local header at byte %" PRIu64, where, shown, local);
    uint64_t lnlen = rd(d + local + 26, 2), lelen = rd(d + local + 28, 2);
    uint64_t data = local + LOCAL_SIZE + lnlen + lelen;
    if (lnlen != nlen || data > di->offset || memcmp(d + local + LOCAL_SIZE, name, nlen) != 0)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: zip entry '%s': local header at byte %" PRIu64 " does not match the directory",
                         where, shown, local);
    if (usize > di->offset - data)
        return txlm_fail(err, TXLM_ERR_FORMAT,
                         "%s: zip entry '%s': %" PRIu64 " bytes at byte %" PRIu64 " run into the central directory at %" PRIu64
                         " (truncated or corrupt)",
                         where, shown, usize, data, di->offset);
    e->name = name;
    e->name_len = (uint32_t)nlen;
    e->crc = (uint32_t)rd(d + p + 16, 4);
    e->offset = data;
    e->size = usize;
    e->crc_checked = 0;
    *pos = p + CENTRAL_SIZE + nlen + elen + clen;
    return 0;
}

static int cmp_name(const char *a, size_t an, const char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c) return c;
    return an < bn ? -1 : an > bn;
}

static int cmp_entry(const void *x, const void *y)
{
    const txlm_zip_entry *a = x, *b = y;
    return cmp_name(a->name, a->name_len, b->name, b->name_len);
}

int txlm_zip_open(const char *where, const uint8_t *data, uint64_t len, txlm_zip *z, txlm_err *err)
{
    memset(z, 0, sizeof *z);
    dir_info di = {0, 0, 0, 0};
    int rc = read_dir_info(where, data, len, &di, err);
    if (rc) return rc;
    z->entries = calloc(di.n ? di.n : 1, sizeof *z->entries);
    if (!z->entries) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory for %" PRIu64 " zip entries", where, di.n);
    uint64_t pos = di.offset;
    for (uint64_t i = 0; i < di.n && !rc; i++) rc = read_entry(where, data, &di, &pos, &z->entries[i], err);
    if (rc) {
        txlm_zip_free(z);
        return rc;
    }
    z->n = (uint32_t)di.n;
    qsort(z->entries, z->n, sizeof *z->entries, cmp_entry);
    for (uint32_t i = 1; i < z->n; i++)
        if (!cmp_entry(&z->entries[i - 1], &z->entries[i])) {
            char shown[128];
            name_str(shown, sizeof shown, z->entries[i].name, z->entries[i].name_len);
            txlm_zip_free(z);
            return txlm_fail(err, TXLM_ERR_FORMAT, "%s: zip entry '%s' appears twice", where, shown);
        }
    return 0;
}

void txlm_zip_free(txlm_zip *z)
{
    free(z->entries);
    memset(z, 0, sizeof *z);
}

txlm_zip_entry *txlm_zip_find(const txlm_zip *z, const char *name, size_t name_len)
{
    size_t lo = 0, hi = z->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = cmp_name(z->entries[mid].name, z->entries[mid].name_len, name, name_len);
        if (!c) return &z->entries[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

int txlm_zip_check_crc(const char *where, const uint8_t *data, txlm_zip_entry *e, txlm_err *err)
{
    if (e->crc_checked) return 0;
    uint32_t got = txlm_crc32(0, data + e->offset, e->size);
    if (got != e->crc) {
        char shown[128];
        name_str(shown, sizeof shown, e->name, e->name_len);
        return txlm_fail(err, TXLM_ERR_CHECKSUM, "%s: zip entry '%s' fails its CRC-32 check (stored %08x, computed %08x)",
                         where, shown, e->crc, got);
    }
    e->crc_checked = 1;
    return 0;
}
