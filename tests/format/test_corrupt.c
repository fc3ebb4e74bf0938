/* Damaged files: each class of corruption must be refused with the right
 * status and a message, never a crash. Where a specific check is the
 * target, the checksums are recomputed afterwards (per docs/format.md, with
 * offsets spelled out here independently of the implementation) so that
 * it is that check, not a checksum, which fires. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include <txlm.h>

#include "fmt_common.h"

static uint8_t *orig;
static size_t orig_len;
static fmt_model model;

static uint32_t rd32(const uint8_t *p) { return p[0] | (p[1] << 8) | (p[2] << 16) | ((uint32_t)p[3] << 24); }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | ((uint64_t)rd32(p + 4) << 32); }
static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void wr64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- layout knowledge, from docs/format.md ---- */

/* Offset of the section table entry with this tag (first one), or 0. */
static size_t entry_of(const uint8_t *b, const char *tag)
{
    uint64_t table = rd64(b + 32);
    uint32_t n = rd32(b + 40), es = rd32(b + 44);
    for (uint32_t i = 0; i < n; i++)
        if (!memcmp(b + table + (uint64_t)i * es, tag, 4)) return (size_t)(table + (uint64_t)i * es);
    return 0;
}
static size_t sec_off(const uint8_t *b, const char *tag) { return (size_t)rd64(b + entry_of(b, tag) + 8); }
static size_t tdir_entry(const uint8_t *b, int i) { return sec_off(b, "TDIR") + 8 + 192 * (size_t)i; }
static size_t dtyp_entry_for(const uint8_t *b, uint32_t id)
{
    size_t s = sec_off(b, "DTYP");
    uint32_t n = rd32(b + s);
    for (uint32_t i = 0; i < n; i++)
        if (rd32(b + s + 8 + 32 * i) == id) return s + 8 + 32 * i;
    return 0;
}

static uint8_t *copy(void)
{
    uint8_t *b = malloc(orig_len);
    memcpy(b, orig, orig_len);
    return b;
}

/* Opens an exactly sized copy, so that reading past the end is an error
 * a sanitizer sees. want == 0: must open. */
static void expect(const char *what, const uint8_t *b, size_t len, unsigned flags, int want, const char *needle)
{
    uint8_t *exact = malloc(len ? len : 1);
    memcpy(exact, b, len);
    txlm_file *f = NULL;
    txlm_err err = {0, ""};
    int rc = txlm_file_open_memory(exact, len, flags, &f, &err);
    if (want == 0) {
        CHECK(rc == 0 && f, "%s: expected success, got %d: %s", what, rc, err.msg);
    } else {
        CHECK(rc == want && err.code == want, "%s: expected status %d, got %d: %s", what, want, rc, err.msg);
        CHECK(f == NULL, "%s: handle returned on failure", what);
        CHECK(strncmp(err.msg, "<memory>: ", 10) == 0 && strlen(err.msg) > 12, "%s: message '%s' does not name the input",
              what, err.msg);
        if (needle) CHECK(strstr(err.msg, needle) != NULL, "%s: message '%s' lacks '%s'", what, err.msg, needle);
    }
    txlm_file_close(f);
    free(exact);
}

/* ---- classes ---- */

static void truncations(void)
{
    const uint8_t *b = orig;
    size_t cuts[] = {
        0, 7, 64, 127,                       /* inside the header */
        128 + 40,                            /* inside the section table */
        sec_off(b, "HPRM") + 10,
        sec_off(b, "VOCB") + 30,
        sec_off(b, "DTYP") + 4,
        tdir_entry(b, 1) + 100,              /* inside the directory */
        (size_t)rd64(b + tdir_entry(b, 0) + 168) + 3, /* inside tensor data */
        orig_len - 1,
    };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "truncated to %zu bytes", cuts[i]);
        expect(what, b, cuts[i], 0, TXLM_ERR_FORMAT, cuts[i] < 128 ? "shorter than" : "file size");
    }
    /* Every shorter length too: never a crash, always a format error. */
    size_t meta_end = sec_off(b, "TDAT");
    for (size_t n = 0; n < meta_end + 300 && n < orig_len; n++) {
        txlm_file *f = NULL;
        txlm_err err = {0, ""};
        uint8_t *exact = malloc(n ? n : 1);
        memcpy(exact, b, n);
        int rc = txlm_file_open_memory(exact, n, 0, &f, &err);
        if (rc != TXLM_ERR_FORMAT) CHECK(0, "truncated to %zu: status %d: %s", n, rc, err.msg);
        txlm_file_close(f);
        free(exact);
    }
    /* Extended by trailing bytes: the size field no longer matches. */
    uint8_t *big = malloc(orig_len + 256);
    memcpy(big, orig, orig_len);
    memset(big + orig_len, 0, 256);
    expect("extended by 256 bytes", big, orig_len + 256, 0, TXLM_ERR_FORMAT, "file size");
    free(big);
}

static void header_fields(void)
{
    uint8_t *b = copy();
    b[0] ^= 1;
    expect("wrong magic", b, orig_len, 0, TXLM_ERR_FORMAT, "magic");
    free(b);

    b = copy();
    b[8] = 2;
    fmt_fix_checksums(b, orig_len, 1);
    expect("major version 2", b, orig_len, 0, TXLM_ERR_UNSUPPORTED, "major version 2");
    b[8] = 0;
    fmt_fix_checksums(b, orig_len, 1);
    expect("major version 0", b, orig_len, 0, TXLM_ERR_UNSUPPORTED, "major version 0");
    free(b);

    /* A newer minor version of the same major is read. */
    b = copy();
    b[10] = 3;
    fmt_fix_checksums(b, orig_len, 1);
    txlm_file *f = NULL;
    txlm_err err = {0, ""};
    int rc = txlm_file_open_memory(b, orig_len, 0, &f, &err);
    CHECK(rc == 0 && f && txlm_file_version_minor(f) == 3, "minor version 3: %d %s", rc, err.msg);
    txlm_file_close(f);
    free(b);

    b = copy();
    wr32(b + 12, 0x04030201);
    fmt_fix_checksums(b, orig_len, 1);
    expect("swapped byte-order marker", b, orig_len, 0, TXLM_ERR_FORMAT, "byte-order");
    free(b);

    b = copy();
    wr64(b + 24, orig_len + 1);
    fmt_fix_checksums(b, orig_len, 1);
    expect("file size field + 1", b, orig_len, 0, TXLM_ERR_FORMAT, "file size");
    wr64(b + 24, orig_len - 1);
    fmt_fix_checksums(b, orig_len, 1);
    expect("file size field - 1", b, orig_len, 0, TXLM_ERR_FORMAT, "file size");
    free(b);

    b = copy();
    b[48] ^= 0xFF;
    expect("bad header checksum", b, orig_len, 0, TXLM_ERR_CHECKSUM, "header checksum");
    free(b);

    static const struct {
        size_t off;
        uint32_t value;
        const char *needle;
    } bad32[] = {
        {16, 64, "header size"},     {16, 100000, "header size"}, {20, 100, "alignment"}, {20, 32, "alignment"},
        {40, 0, "section count"},    {40, 1000, "section count"}, {44, 16, "entry size"},
    };
    for (size_t i = 0; i < sizeof bad32 / sizeof bad32[0]; i++) {
        b = copy();
        wr32(b + bad32[i].off, bad32[i].value);
        fmt_fix_checksums(b, orig_len, 1);
        char what[80];
        snprintf(what, sizeof what, "header u32 at %zu = %u", bad32[i].off, bad32[i].value);
        expect(what, b, orig_len, 0, TXLM_ERR_FORMAT, bad32[i].needle);
        free(b);
    }
    b = copy();
    wr64(b + 32, orig_len - 16);
    expect("section table past the end", b, orig_len, 0, TXLM_ERR_FORMAT, "section table");
    wr64(b + 32, UINT64_MAX - 8);
    expect("section table offset overflowing", b, orig_len, 0, TXLM_ERR_FORMAT, "section table");
    free(b);

    /* A 512 alignment: the 256-aligned tensors no longer satisfy it. */
    b = copy();
    wr32(b + 20, 512);
    fmt_fix_checksums(b, orig_len, 1);
    expect("alignment raised to 512", b, orig_len, 0, TXLM_ERR_FORMAT, "aligned");
    /* 128 divides every 256-aligned offset: still fine. */
    wr32(b + 20, 128);
    fmt_fix_checksums(b, orig_len, 1);
    expect("alignment lowered to 128", b, orig_len, 0, 0, NULL);
    free(b);
}

/* One flipped byte in each region, checksums left alone. */
static void flips(void)
{
    const uint8_t *o = orig;
    struct {
        const char *what;
        size_t off;
        const char *needle;
    } cases[] = {
        {"header reserved byte", 100, "header checksum"},
        {"header minor version", 10, "header checksum"},
        {"section table checksum field", entry_of(o, "VOCB") + 24, "header checksum"},
        {"section table tag", entry_of(o, "HPRM") + 3, "header checksum"},
        {"hparams d_model", sec_off(o, "HPRM") + 8, "header checksum"},
        {"vocab blob", sec_off(o, "VOCB") + 24 + 4 * 301 + 5, "header checksum"},
        {"vocab offsets", sec_off(o, "VOCB") + 24 + 4 * 10, "header checksum"},
        {"dtype table", dtyp_entry_for(o, 3) + 8, "header checksum"},
        {"directory name", tdir_entry(o, 2) + 1, "header checksum"},
        {"directory hash", tdir_entry(o, 4) + 184, "header checksum"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t *b = copy();
        b[cases[i].off] ^= 0x10;
        expect(cases[i].what, b, orig_len, 0, TXLM_ERR_CHECKSUM, cases[i].needle);
        free(b);
    }

    /* With the header checksum recomputed, the section's own checksum catches it. */
    static const char *const tags[4] = {"HPRM", "VOCB", "DTYP", "TDIR"};
    for (int s = 0; s < 4; s++) {
        uint8_t *b = copy();
        b[sec_off(b, tags[s]) + 6] ^= 0x01;
        fmt_fix_checksums(b, orig_len, 0);
        char what[64], needle[32];
        snprintf(what, sizeof what, "%s byte, header checksum fixed", tags[s]);
        snprintf(needle, sizeof needle, "section %s", tags[s]);
        expect(what, b, orig_len, 0, TXLM_ERR_CHECKSUM, needle);
        free(b);
    }

    /* Tensor data: caught by the per-tensor hash, and only when verifying. */
    uint8_t *b = copy();
    size_t e = tdir_entry(b, 3);
    size_t data = (size_t)rd64(b + e + 168);
    b[data + 17] ^= 0x40;
    expect("tensor data byte", b, orig_len, 0, TXLM_ERR_CHECKSUM, "'q8'");
    txlm_file *f = NULL;
    txlm_err err = {0, ""};
    int rc = txlm_file_open_memory(b, orig_len, TXLM_OPEN_NO_VERIFY, &f, &err);
    CHECK(rc == 0 && f, "tensor data byte without verification: %d %s", rc, err.msg);
    if (f) {
        const txlm_tensor_info *t = txlm_file_find(f, "q8");
        CHECK(t && ((const uint8_t *)txlm_file_data(f, t))[17] != model.t[3].data[17], "the damage is visible");
        txlm_file_close(f);
    }
    free(b);
}

static void tensor_ranges(void)
{
    uint8_t *b = copy();
    size_t e0 = tdir_entry(b, 0);
    wr64(b + e0 + 168, ((orig_len + 255) & ~(size_t)255) + 256);
    fmt_fix_checksums(b, orig_len, 1);
    expect("tensor offset past the end", b, orig_len, 0, TXLM_ERR_FORMAT, "outside TDAT");
    wr64(b + e0 + 168, 256);
    fmt_fix_checksums(b, orig_len, 1);
    expect("tensor offset inside the metadata", b, orig_len, 0, TXLM_ERR_FORMAT, "outside TDAT");
    wr64(b + e0 + 168, UINT64_MAX - 255);
    fmt_fix_checksums(b, orig_len, 1);
    expect("tensor offset overflowing", b, orig_len, 0, TXLM_ERR_FORMAT, "outside TDAT");
    free(b);

    /* Tensor 1 (384 bytes) placed on top of tensor 0 (12800 bytes). */
    b = copy();
    wr64(b + tdir_entry(b, 1) + 168, rd64(b + tdir_entry(b, 0) + 168));
    fmt_fix_checksums(b, orig_len, 1);
    expect("overlapping tensors", b, orig_len, TXLM_OPEN_NO_VERIFY, TXLM_ERR_FORMAT, "overlaps");
    free(b);
    /* Partial overlap: tensor 2 starting inside tensor 1. */
    b = copy();
    wr64(b + tdir_entry(b, 2) + 168, rd64(b + tdir_entry(b, 1) + 168) + 256);
    fmt_fix_checksums(b, orig_len, 1);
    expect("partly overlapping tensors", b, orig_len, TXLM_OPEN_NO_VERIFY, TXLM_ERR_FORMAT, "overlaps");
    free(b);

    b = copy();
    size_t e2 = tdir_entry(b, 2);
    wr64(b + e2 + 168, rd64(b + e2 + 168) + 64);
    fmt_fix_checksums(b, orig_len, 1);
    expect("misaligned tensor", b, orig_len, 0, TXLM_ERR_FORMAT, "aligned");
    free(b);
}

static void tensor_entries(void)
{
    uint8_t *b = copy();
    size_t e0 = tdir_entry(b, 0);
    wr64(b + e0 + 104, 101);
    fmt_fix_checksums(b, orig_len, 1);
    expect("dims not matching nbytes", b, orig_len, 0, TXLM_ERR_FORMAT, "nbytes");
    free(b);

    b = copy();
    wr64(b + e0 + 176, rd64(b + e0 + 176) + 4);
    fmt_fix_checksums(b, orig_len, 1);
    expect("nbytes not matching dims", b, orig_len, 0, TXLM_ERR_FORMAT, "nbytes");
    free(b);

    b = copy();
    size_t e3 = tdir_entry(b, 3); /* q8_0 [2, 64] */
    wr64(b + e3 + 104, 4);
    wr64(b + e3 + 112, 48);
    fmt_fix_checksums(b, orig_len, 1);
    expect("q8_0 last dim not a block multiple", b, orig_len, 0, TXLM_ERR_FORMAT, "multiple");
    free(b);

    b = copy();
    wr32(b + e0 + 100, 9);
    fmt_fix_checksums(b, orig_len, 1);
    expect("rank 9", b, orig_len, 0, TXLM_ERR_FORMAT, "rank");
    wr32(b + e0 + 100, 0);
    fmt_fix_checksums(b, orig_len, 1);
    expect("rank 0", b, orig_len, 0, TXLM_ERR_FORMAT, "rank");
    free(b);

    b = copy();
    wr64(b + e0 + 104 + 8 * 5, 1);
    fmt_fix_checksums(b, orig_len, 1);
    expect("unused dim not zero", b, orig_len, 0, TXLM_ERR_FORMAT, "unused dims");
    free(b);

    b = copy();
    wr64(b + e0 + 104, 1ull << 41);
    fmt_fix_checksums(b, orig_len, 1);
    expect("dim above 2^40", b, orig_len, 0, TXLM_ERR_FORMAT, "2^40");
    free(b);

    b = copy();
    memcpy(b + tdir_entry(b, 1), b + e0, 96);
    fmt_fix_checksums(b, orig_len, 1);
    expect("duplicate tensor name", b, orig_len, 0, TXLM_ERR_FORMAT, "duplicate");
    free(b);

    b = copy();
    memset(b + e0, 'a', 96);
    fmt_fix_checksums(b, orig_len, 1);
    expect("name without NUL", b, orig_len, 0, TXLM_ERR_FORMAT, "NUL");
    memset(b + e0, 0, 96);
    fmt_fix_checksums(b, orig_len, 1);
    expect("empty name", b, orig_len, 0, TXLM_ERR_FORMAT, "empty");
    free(b);

    b = copy();
    b[e0 + 90] = 'x';
    fmt_fix_checksums(b, orig_len, 1);
    expect("garbage after the name", b, orig_len, 0, TXLM_ERR_FORMAT, "padding");
    free(b);

    b = copy();
    b[e0 + 1] = (char)0xFF;
    fmt_fix_checksums(b, orig_len, 1);
    expect("name not UTF-8", b, orig_len, 0, TXLM_ERR_FORMAT, "UTF-8");
    free(b);

    b = copy();
    size_t tdir = sec_off(b, "TDIR");
    wr32(b + tdir, 70000);
    fmt_fix_checksums(b, orig_len, 1);
    expect("tensor count above the cap", b, orig_len, 0, TXLM_ERR_FORMAT, "cap");
    wr32(b + tdir, model.n_tensors + 1);
    fmt_fix_checksums(b, orig_len, 1);
    expect("tensor count not filling TDIR", b, orig_len, 0, TXLM_ERR_FORMAT, "TDIR");
    free(b);
}

static void dtypes(void)
{
    /* f16 renamed to an id this reader does not know, in the table and in
     * the tensors that use it. */
    uint8_t *b = copy();
    size_t d = dtyp_entry_for(b, 1);
    wr32(b + d, 77);
    for (int i = 0; i < model.n_tensors; i++)
        if (model.t[i].dtype == 1) wr32(b + tdir_entry(b, i) + 96, 77);
    fmt_fix_checksums(b, orig_len, 1);
    expect("unknown dtype", b, orig_len, 0, TXLM_ERR_UNSUPPORTED, "unknown dtype 77");
    free(b);

    b = copy();
    wr32(b + dtyp_entry_for(b, 3) + 8, 36);
    fmt_fix_checksums(b, orig_len, 1);
    expect("q8_0 with another block size", b, orig_len, 0, TXLM_ERR_UNSUPPORTED, "q8_0");
    free(b);

    b = copy();
    memcpy(b + dtyp_entry_for(b, 4) + 16, "q4_1", 4);
    fmt_fix_checksums(b, orig_len, 1);
    expect("dtype with another name", b, orig_len, 0, TXLM_ERR_UNSUPPORTED, "q4_1");
    free(b);

    b = copy();
    wr32(b + tdir_entry(b, 6) + 96, 9);
    fmt_fix_checksums(b, orig_len, 1);
    expect("tensor dtype not declared", b, orig_len, 0, TXLM_ERR_FORMAT, "not listed in DTYP");
    free(b);

    b = copy();
    wr32(b + dtyp_entry_for(b, 2), 0); /* bf16 entry now claims f32 twice */
    fmt_fix_checksums(b, orig_len, 1);
    expect("dtype entry contradicting its id", b, orig_len, 0, TXLM_ERR_UNSUPPORTED, "bf16");
    free(b);
}

static void vocab_and_hparams(void)
{
    size_t v = sec_off(orig, "VOCB"), h = sec_off(orig, "HPRM");
    uint8_t *b = copy();
    wr32(b + v + 12, 300);
    fmt_fix_checksums(b, orig_len, 1);
    expect("eos_id out of range", b, orig_len, 0, TXLM_ERR_FORMAT, "eos_id");
    free(b);

    b = copy();
    wr32(b + v + 16, (uint32_t)-5);
    fmt_fix_checksums(b, orig_len, 1);
    expect("unk_id -5", b, orig_len, 0, TXLM_ERR_FORMAT, "unk_id");
    free(b);

    b = copy();
    uint32_t o5 = rd32(b + v + 24 + 4 * 5), o6 = rd32(b + v + 24 + 4 * 6);
    wr32(b + v + 24 + 4 * 5, o6);
    wr32(b + v + 24 + 4 * 6, o5);
    fmt_fix_checksums(b, orig_len, 1);
    expect("offsets not ascending", b, orig_len, 0, TXLM_ERR_FORMAT, "ascend");
    free(b);

    b = copy();
    b[v + 24 + 4 * 301 + rd32(b + v + 24 + 4 * 2)] = 0xFF; /* first byte of symbol 2, "w2" */
    fmt_fix_checksums(b, orig_len, 1);
    expect("symbol not UTF-8", b, orig_len, 0, TXLM_ERR_FORMAT, "UTF-8");
    free(b);

    /* Symbol 2 takes the rest of the blob (well over 1023 bytes), the others become empty. */
    b = copy();
    uint32_t blob_size = rd32(b + v + 20);
    CHECK(blob_size - rd32(b + v + 24 + 4 * 2) > 1023, "the test vocabulary is too small for the symbol cap");
    for (int i = 3; i < 300; i++) wr32(b + v + 24 + 4 * i, blob_size);
    fmt_fix_checksums(b, orig_len, 1);
    expect("symbol longer than 1023 bytes", b, orig_len, 0, TXLM_ERR_LIMIT, "more than 1023");
    free(b);

    /* Symbol 3 ("w3") made "w2" or "w\0": either hides an entry from the tokenizer. */
    b = copy();
    size_t w3 = v + 24 + 4 * 301 + rd32(b + v + 24 + 4 * 3);
    CHECK(b[w3] == 'w' && b[w3 + 1] == '3', "symbol 3 of the test vocabulary is not w3");
    b[w3 + 1] = '2';
    fmt_fix_checksums(b, orig_len, 1);
    expect("symbol twice", b, orig_len, 0, TXLM_ERR_FORMAT, "'w2' appears twice (ids 2 and 3)");
    b[w3 + 1] = 0;
    fmt_fix_checksums(b, orig_len, 1);
    expect("NUL in a symbol", b, orig_len, 0, TXLM_ERR_FORMAT, "id 3 holds a NUL byte");
    free(b);

    b = copy();
    wr32(b + v + 4, 9);
    fmt_fix_checksums(b, orig_len, 1);
    expect("unknown tokenizer kind", b, orig_len, 0, TXLM_ERR_UNSUPPORTED, "tokenizer kind");
    free(b);

    b = copy();
    wr32(b + v, 299);
    fmt_fix_checksums(b, orig_len, 1);
    expect("vocab n not filling VOCB", b, orig_len, 0, TXLM_ERR_FORMAT, "VOCB");
    wr32(b + v, 1u << 25);
    fmt_fix_checksums(b, orig_len, 1);
    expect("vocab n above 2^24", b, orig_len, 0, TXLM_ERR_FORMAT, "2^24");
    free(b);

    b = copy();
    wr32(b + h + 8, 33);
    fmt_fix_checksums(b, orig_len, 1);
    expect("odd d_model", b, orig_len, 0, TXLM_ERR_FORMAT, "d_model");
    free(b);

    b = copy();
    wr32(b + h + 4, 301); /* n_token no longer matches the vocabulary */
    fmt_fix_checksums(b, orig_len, 1);
    expect("n_token != vocab n", b, orig_len, 0, TXLM_ERR_FORMAT, "n_token");
    free(b);

    b = copy();
    wr32(b + h, 148);
    fmt_fix_checksums(b, orig_len, 1);
    expect("HPRM size field", b, orig_len, 0, TXLM_ERR_FORMAT, "size field");
    free(b);

    b = copy();
    wr32(b + h + 40 + 4 * 14, 5);
    fmt_fix_checksums(b, orig_len, 1);
    expect("unused cutoff not zero", b, orig_len, 0, TXLM_ERR_FORMAT, "unused cutoffs");
    free(b);
}

static void section_table(void)
{
    uint8_t *b = copy();
    wr64(b + entry_of(b, "VOCB") + 8, sec_off(b, "HPRM"));
    fmt_fix_checksums(b, orig_len, 1);
    expect("overlapping sections", b, orig_len, 0, TXLM_ERR_FORMAT, "overlaps");
    free(b);

    b = copy();
    wr64(b + entry_of(b, "HPRM") + 8, 64);
    fmt_fix_checksums(b, orig_len, 1);
    expect("section inside the header", b, orig_len, 0, TXLM_ERR_FORMAT, "overlaps");
    free(b);

    b = copy();
    wr64(b + entry_of(b, "VOCB") + 16, orig_len);
    expect("section past the end", b, orig_len, 0, TXLM_ERR_FORMAT, "outside the file");
    free(b);

    b = copy();
    size_t e = entry_of(b, "TDIR");
    memcpy(b + e, "TDIX", 4);
    wr32(b + e + 4, 0);
    fmt_fix_checksums(b, orig_len, 1);
    expect("TDIR missing", b, orig_len, 0, TXLM_ERR_FORMAT, "missing");
    free(b);

    b = copy();
    memcpy(b + entry_of(b, "DTYP"), "HPRM", 4);
    fmt_fix_checksums(b, orig_len, 1);
    expect("HPRM twice", b, orig_len, 0, TXLM_ERR_FORMAT, "twice");
    free(b);

    b = copy();
    wr32(b + entry_of(b, "HPRM") + 4, 3);
    fmt_fix_checksums(b, orig_len, 1);
    expect("metadata without checksum", b, orig_len, 0, TXLM_ERR_FORMAT, "checksum");
    free(b);

    b = copy();
    b[entry_of(b, "VOCB") + 1] = 0x01;
    fmt_fix_checksums(b, orig_len, 1);
    expect("unprintable tag", b, orig_len, 0, TXLM_ERR_FORMAT, "tag");
    free(b);
}

/* Appends a section and a new 6-entry table at the end of the file. */
static uint8_t *with_extra(const char *tag, uint32_t flags, size_t payload, size_t *len, uint64_t *payload_off)
{
    size_t table_len = 6 * 32, start = (orig_len + 7) & ~(size_t)7;
    size_t n = start + payload + table_len;
    uint8_t *b = calloc(1, n);
    memcpy(b, orig, orig_len);
    for (size_t i = 0; i < payload; i++) b[start + i] = (uint8_t)(i * 7 + 1);
    memcpy(b + start + payload, orig + 128, 5 * 32);
    uint8_t *e = b + start + payload + 5 * 32;
    memcpy(e, tag, 4);
    wr32(e + 4, flags);
    wr64(e + 8, start);
    wr64(e + 16, payload);
    wr64(b + 32, start + payload);
    wr32(b + 40, 6);
    wr64(b + 24, n);
    fmt_fix_checksums(b, n, 1);
    *len = n;
    *payload_off = start;
    return b;
}

static void extra_sections(void)
{
    size_t len;
    uint64_t at;
    uint8_t *b = with_extra("XTRA", 1, 40, &len, &at);
    expect("unknown required section", b, len, 0, TXLM_ERR_UNSUPPORTED, "unknown required section 'XTRA'");
    free(b);

    b = with_extra("XTRA", 0, 40, &len, &at);
    txlm_file *f = NULL;
    txlm_err err = {0, ""};
    int rc = txlm_file_open_memory(b, len, 0, &f, &err);
    CHECK(rc == 0 && f, "unknown optional section: %d %s", rc, err.msg);
    if (f) {
        CHECK(txlm_file_tensor_count(f) == (uint32_t)model.n_tensors, "tensors with an extra section");
        const txlm_tensor_info *t = txlm_file_find(f, "q4");
        CHECK(t && memcmp(txlm_file_data(f, t), model.t[4].data, model.t[4].nbytes) == 0, "data with an extra section");
        txlm_file_close(f);
    }
    /* Skipped means not interpreted: a stale checksum there does no harm. */
    b[at] ^= 1;
    expect("unknown optional section, stale checksum", b, len, 0, 0, NULL);
    free(b);

    b = with_extra("XTRA", 0, 40, &len, &at);
    wr64(b + rd64(b + 32) + 5 * 32 + 8, sec_off(b, "VOCB"));
    fmt_fix_checksums(b, len, 1);
    expect("optional section overlapping VOCB", b, len, 0, TXLM_ERR_FORMAT, "overlaps");
    free(b);
}

/* Random damage to the metadata, with and without repaired checksums:
 * whatever happens, no crash, and a failure always has a status and message. */
static void fuzz(void)
{
    uint32_t seed = 777;
    size_t meta_end = sec_off(orig, "TDAT");
    int opened = 0, refused = 0;
    for (int it = 0; it < 3000; it++) {
        uint8_t *b = copy();
        int nflip = 1 + (int)(fmt_rand(&seed) % 4);
        for (int k = 0; k < nflip; k++) {
            size_t at = fmt_rand(&seed) % meta_end;
            uint32_t r = fmt_rand(&seed);
            if (r % 3 == 0) b[at] ^= (uint8_t)(1u << (r >> 8) % 8);
            else if (r % 3 == 1) b[at] = (uint8_t)(r >> 16);
            else b[at] = (r >> 16) & 1 ? 0xFF : 0x00;
        }
        if (it % 2) fmt_fix_checksums(b, orig_len, 1);
        txlm_file *f = NULL;
        txlm_err err = {0, ""};
        int rc = txlm_file_open_memory(b, orig_len, 0, &f, &err);
        if (rc == 0) {
            opened++;
            CHECK(f != NULL, "fuzz %d: success without a handle", it);
            /* Whatever was accepted must be self-consistent. */
            for (uint32_t i = 0; f && i < txlm_file_tensor_count(f); i++) {
                const txlm_tensor_info *t = txlm_file_tensor(f, i);
                CHECK(t->offset + t->nbytes <= orig_len && txlm_file_find(f, t->name) == t, "fuzz %d: tensor %u", it, i);
            }
        } else {
            refused++;
            CHECK(f == NULL && err.code == rc && err.msg[0], "fuzz %d: status %d without a message", it, rc);
            CHECK(rc == TXLM_ERR_FORMAT || rc == TXLM_ERR_CHECKSUM || rc == TXLM_ERR_UNSUPPORTED || rc == TXLM_ERR_LIMIT, "fuzz %d: status %d: %s", it,
                  rc, err.msg);
        }
        txlm_file_close(f);
        free(b);
    }
    CHECK(refused > 2000, "fuzz: only %d of 3000 damaged files refused", refused);
    printf("fuzz: %d opened, %d refused\n", opened, refused);
}

/* Each class again through a file on disk (the mapped path of
 * txlm_file_open): one flipped byte in the header, the section table, the
 * tensor directory, the vocabulary and the tensor data, and ten cuts. */
static void file_classes(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/damaged.txlm", dir);
    const uint8_t *o = orig;
    size_t data = (size_t)rd64(o + tdir_entry(o, 3) + 168);
    struct {
        const char *what;
        size_t off;
        int want;
    } flips[] = {
        {"header", 100, TXLM_ERR_CHECKSUM},
        {"section table", entry_of(o, "TDIR") + 16, TXLM_ERR_CHECKSUM},
        {"tensor directory", tdir_entry(o, 1) + 104, TXLM_ERR_CHECKSUM},
        {"vocabulary", sec_off(o, "VOCB") + 24 + 4 * 301 + 2, TXLM_ERR_CHECKSUM},
        {"tensor data", data + 5, TXLM_ERR_CHECKSUM},
    };
    for (size_t i = 0; i < sizeof flips / sizeof flips[0]; i++) {
        uint8_t *b = copy();
        b[flips[i].off] ^= 0x08;
        fmt_write_all(path, b, orig_len);
        txlm_file *f = NULL;
        txlm_err err = {0, ""};
        int rc = txlm_file_open(path, 0, &f, &err);
        CHECK(rc == flips[i].want && !f && strstr(err.msg, path), "file with a flipped %s byte: %d %s", flips[i].what, rc,
              err.msg);
        txlm_file_close(f);
        free(b);
    }
    for (int k = 0; k < 10; k++) {
        size_t cut = (size_t)((uint64_t)orig_len * (size_t)(2 * k + 1) / 20);
        fmt_write_all(path, orig, cut);
        txlm_file *f = NULL;
        txlm_err err = {0, ""};
        int rc = txlm_file_open(path, 0, &f, &err);
        CHECK(rc == TXLM_ERR_FORMAT && !f && strstr(err.msg, path), "file cut to %zu of %zu bytes: %d %s", cut, orig_len, rc,
              err.msg);
        txlm_file_close(f);
    }
    unlink(path);
}

static void real_files(const char *dir)
{
    char path[4096];
    txlm_file *f = NULL;
    txlm_err err = {0, ""};
    snprintf(path, sizeof path, "%s/cut.txlm", dir);
    fmt_write_all(path, orig, orig_len / 2);
    CHECK(txlm_file_open(path, 0, &f, &err) == TXLM_ERR_FORMAT && strstr(err.msg, path), "truncated file: %s", err.msg);
    fmt_write_all(path, orig, 0);
    CHECK(txlm_file_open(path, 0, &f, &err) == TXLM_ERR_FORMAT && strstr(err.msg, "shorter"), "empty file: %s", err.msg);
    fmt_write_all(path, orig, 100);
    CHECK(txlm_file_open(path, 0, &f, &err) == TXLM_ERR_FORMAT, "100-byte file: %s", err.msg);
    unlink(path);
    CHECK(txlm_file_open(path, 0, &f, &err) == TXLM_ERR_IO && strstr(err.msg, path), "missing file: %s", err.msg);
    CHECK(txlm_file_open(dir, 0, &f, &err) == TXLM_ERR_IO, "directory: %s", err.msg);
    CHECK(f == NULL, "no handle after failures");
}

int main(void)
{
    char *dir = fmt_mkdtemp();
    if (!dir) return 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/model.txlm", dir);
    fmt_model_build(&model, 42, TXLM_TOK_WORD);
    txlm_err err = {0, ""};
    if (fmt_model_write(&model, path, &err) != 0 || !(orig = fmt_read_all(path, &orig_len))) {
        fprintf(stderr, "cannot write the test model: %s\n", err.msg);
        return 1;
    }
    unlink(path);
    expect("pristine file", orig, orig_len, 0, 0, NULL);

    truncations();
    header_fields();
    flips();
    tensor_ranges();
    tensor_entries();
    dtypes();
    vocab_and_hparams();
    section_table();
    extra_sections();
    real_files(dir);
    file_classes(dir);
    fuzz();

    free(orig);
    fmt_model_free(&model);
    fmt_rmdir(dir);
    if (fmt_failures) fprintf(stderr, "%d checks failed\n", fmt_failures);
    else printf("corruption: all checks passed\n");
    return fmt_failures != 0;
}
