/* safetensors reader: an 8-byte little-endian header length, a JSON header
 * {name: {dtype, shape, data_offsets}}, then the data area. Every field is
 * checked against the file before a tensor is handed out. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <txlm_status.h>

#include "checkpoint.h"
#include "file_map.h"

#define HEADER_CAP (100u * 1000u * 1000u)
#define TENSOR_CAP (1u << 20)
#define RANK_CAP 8
/* Offsets and dims travel as JSON numbers (doubles): beyond 2^53 they are
 * not exact, and no real file comes close. */
#define JSON_INT_CAP 9007199254740992.0

static void unmap(void *impl)
{
    txlm_file_map *m = impl;
    if (!m) return;
    txlm_file_map_close(m);
    free(m);
}

static int json_uint(const cJSON *j, uint64_t *out)
{
    if (!cJSON_IsNumber(j)) return 0;
    double d = j->valuedouble;
    if (!(d >= 0.0 && d <= JSON_INT_CAP) || d != floor(d)) return 0;
    *out = (uint64_t)d;
    return 1;
}

static int parse_dtype(const char *where, const char *name, const cJSON *j, uint32_t *dtype, uint32_t *esize,
                       txlm_err *err)
{
    if (!cJSON_IsString(j))
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: tensor '%s': dtype is missing or not a string", where, name);
    const char *s = j->valuestring;
    if (strcmp(s, "F32") == 0) *dtype = TXLM_DT_F32, *esize = 4;
    else if (strcmp(s, "F16") == 0) *dtype = TXLM_DT_F16, *esize = 2;
    else if (strcmp(s, "BF16") == 0) *dtype = TXLM_DT_BF16, *esize = 2;
    else
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "%s: tensor '%s': dtype '%.32s' is not supported (F32, F16, BF16)",
                         where, name, s);
    return 0;
}

static int parse_shape(const char *where, txlm_src_tensor *t, const cJSON *j, txlm_err *err)
{
    if (!cJSON_IsArray(j))
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: tensor '%s': shape is missing or not an array", where, t->name);
    int rank = cJSON_GetArraySize(j);
    if (rank > RANK_CAP)
        return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "%s: tensor '%s': rank %d exceeds %d", where, t->name, rank, RANK_CAP);
    t->rank = (uint32_t)rank;
    t->n_elems = 1;
    uint32_t i = 0;
    for (const cJSON *d = j->child; d; d = d->next, i++) {
        if (!json_uint(d, &t->dims[i]))
            return txlm_fail(err, TXLM_ERR_FORMAT, "%s: tensor '%s': shape[%" PRIu32 "] is not a non-negative integer",
                             where, t->name, i);
        if (__builtin_mul_overflow(t->n_elems, t->dims[i], &t->n_elems))
            return txlm_fail(err, TXLM_ERR_FORMAT, "%s: tensor '%s': element count overflows", where, t->name);
    }
    return 0;
}

/* Fills t from one header entry; begin/end are relative to the data area. */
static int parse_entry(const char *where, const cJSON *e, uint64_t data_size, txlm_src_tensor *t, uint64_t *begin,
                       txlm_err *err)
{
    if (!cJSON_IsObject(e)) return txlm_fail(err, TXLM_ERR_FORMAT, "%s: tensor '%s': entry is not an object", where, t->name);
    uint32_t esize = 0;
    int rc = parse_dtype(where, t->name, cJSON_GetObjectItemCaseSensitive(e, "dtype"), &t->dtype, &esize, err);
    if (rc) return rc;
    rc = parse_shape(where, t, cJSON_GetObjectItemCaseSensitive(e, "shape"), err);
    if (rc) return rc;
    if (__builtin_mul_overflow(t->n_elems, (uint64_t)esize, &t->nbytes))
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: tensor '%s': byte size overflows", where, t->name);

    const cJSON *off = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    uint64_t b, en;
    if (!cJSON_IsArray(off) || cJSON_GetArraySize(off) != 2 || !json_uint(off->child, &b) || !json_uint(off->child->next, &en))
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: tensor '%s': data_offsets is not [begin, end] of non-negative integers",
                         where, t->name);
    if (b > en)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] end before begin",
                         where, t->name, b, en);
    if (en > data_size)
        return txlm_fail(err, TXLM_ERR_FORMAT,
                         "%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] beyond the data area of %" PRIu64 " bytes",
                         where, t->name, b, en, data_size);
    if (en - b != t->nbytes)
        return txlm_fail(err, TXLM_ERR_FORMAT,
                         "%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] hold %" PRIu64
                         " bytes, shape and dtype need %" PRIu64,
                         where, t->name, b, en, en - b, t->nbytes);
    *begin = b;
    return 0;
}

static int check_metadata(const char *where, const cJSON *m, txlm_err *err)
{
    if (!cJSON_IsObject(m)) return txlm_fail(err, TXLM_ERR_FORMAT, "%s: __metadata__ is not an object", where);
    for (const cJSON *c = m->child; c; c = c->next)
        if (!cJSON_IsString(c))
            return txlm_fail(err, TXLM_ERR_FORMAT, "%s: __metadata__ value '%s' is not a string", where, c->string);
    return 0;
}

typedef struct span {
    uint64_t begin, end;
    uint32_t idx;
} span;

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

static int cmp_name(const void *a, const void *b)
{
    const txlm_src_tensor *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

/* Names unique and data ranges disjoint, both by sorting (headers may
 * list up to TENSOR_CAP tensors). */
static int check_unique_disjoint(const char *where, txlm_checkpoint *c, const uint64_t *begins, txlm_err *err)
{
    uint32_t n = c->n_tensors;
    if (n < 2) return 0;
    span *s = malloc(n * sizeof *s);
    const txlm_src_tensor **p = malloc(n * sizeof *p);
    int rc = 0;
    if (!s || !p) {
        rc = txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory checking %" PRIu32 " tensors", where, n);
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        s[i] = (span){begins[i], begins[i] + c->tensors[i].nbytes, i};
        p[i] = &c->tensors[i];
    }
    qsort(p, n, sizeof *p, cmp_name);
    for (uint32_t i = 1; i < n; i++)
        if (strcmp(p[i - 1]->name, p[i]->name) == 0) {
            rc = txlm_fail(err, TXLM_ERR_FORMAT, "%s: tensor '%s' appears twice in the header", where, p[i]->name);
            goto out;
        }
    qsort(s, n, sizeof *s, cmp_span);
    /* Empty tensors occupy no bytes, so they cannot overlap anything. */
    uint64_t far = 0;
    uint32_t far_idx = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++) {
        if (s[i].begin == s[i].end) continue;
        if (far_idx != UINT32_MAX && s[i].begin < far) {
            rc = txlm_fail(err, TXLM_ERR_FORMAT,
                           "%s: tensors '%s' [%" PRIu64 ", %" PRIu64 ") and '%s' [%" PRIu64 ", %" PRIu64 ") overlap", where,
                           c->tensors[far_idx].name, begins[far_idx], begins[far_idx] + c->tensors[far_idx].nbytes,
                           c->tensors[s[i].idx].name, s[i].begin, s[i].end);
            goto out;
        }
        if (s[i].end > far) far = s[i].end, far_idx = s[i].idx;
    }
out:
    free(s);
    free(p);
    return rc;
}

static int parse_header(const char *where, const cJSON *root, const uint8_t *data_area, uint64_t data_size,
                        txlm_checkpoint *c, txlm_err *err)
{
    if (!cJSON_IsObject(root)) return txlm_fail(err, TXLM_ERR_FORMAT, "%s: header is not a JSON object", where);
    uint32_t n = 0;
    for (const cJSON *e = root->child; e; e = e->next) {
        if (strcmp(e->string, "__metadata__") == 0) {
            int rc = check_metadata(where, e, err);
            if (rc) return rc;
        } else if (++n > TENSOR_CAP) {
            return txlm_fail(err, TXLM_ERR_LIMIT, "%s: more than %u tensors", where, TENSOR_CAP);
        }
    }
    c->tensors = calloc(n ? n : 1, sizeof *c->tensors);
    uint64_t *begins = malloc((n ? n : 1) * sizeof *begins);
    if (!c->tensors || !begins) {
        free(begins);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory for %" PRIu32 " tensors", where, n);
    }
    int rc = 0;
    for (const cJSON *e = root->child; e; e = e->next) {
        if (strcmp(e->string, "__metadata__") == 0) continue;
        txlm_src_tensor *t = &c->tensors[c->n_tensors];
        t->name = strdup(e->string);
        if (!t->name) {
            rc = txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
            break;
        }
        c->n_tensors++;
        rc = parse_entry(where, e, data_size, t, &begins[c->n_tensors - 1], err);
        if (rc) break;
        t->data = data_area + begins[c->n_tensors - 1];
    }
    if (!rc) rc = check_unique_disjoint(where, c, begins, err);
    free(begins);
    return rc;
}

static int parse(const char *where, const uint8_t *data, uint64_t size, txlm_checkpoint *c, txlm_err *err)
{
    if (size < 8)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: %" PRIu64 " bytes, too short for the 8-byte header length", where, size);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | data[i];
    if (hlen > size - 8)
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: header length %" PRIu64 " runs past the end of the file (%" PRIu64 " bytes)",
                         where, hlen, size);
    if (hlen > HEADER_CAP)
        return txlm_fail(err, TXLM_ERR_LIMIT, "%s: header length %" PRIu64 " exceeds %u bytes", where, hlen, HEADER_CAP);
    const uint8_t *hdr = data + 8;
    if (hlen < 2 || hdr[0] != '{')
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: header (byte 8) does not start with '{'", where);
    if (memchr(hdr, 0, hlen))
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: header contains a NUL byte at offset %" PRIu64, where,
                         (uint64_t)((const uint8_t *)memchr(hdr, 0, hlen) - data));

    /* A private NUL-terminated copy: the parser then never depends on the
     * bytes after the header. */
    char *text = malloc(hlen + 1);
    if (!text) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory for a %" PRIu64 "-byte header", where, hlen);
    memcpy(text, hdr, hlen);
    text[hlen] = 0;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 0);
    int rc = 0;
    if (!root) {
        uint64_t at = end ? (uint64_t)(end - text) : 0;
        rc = txlm_fail(err, TXLM_ERR_FORMAT, "%s: header is not valid JSON (near byte %" PRIu64 ")", where, 8 + at);
    } else {
        /* The format pads the header with spaces; anything else is junk. */
        for (const char *p = end; *p; p++)
            if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
                rc = txlm_fail(err, TXLM_ERR_FORMAT, "%s: trailing bytes after the JSON header (byte %" PRIu64 ")", where,
                               (uint64_t)(8 + (p - text)));
                break;
            }
        if (!rc) rc = parse_header(where, root, hdr + hlen, size - 8 - hlen, c, err);
    }
    cJSON_Delete(root);
    free(text);
    return rc;
}

static int open_common(const char *where, const void *data, uint64_t size, txlm_file_map *m, txlm_checkpoint **out,
                       txlm_err *err)
{
    txlm_checkpoint *c = calloc(1, sizeof *c);
    if (!c) {
        unmap(m);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", where);
    }
    c->format = "safetensors";
    c->impl = m;
    c->free_impl = unmap;
    int rc = parse(where, data, size, c, err);
    if (rc) {
        txlm_checkpoint_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int txlm_safetensors_open_memory(const void *data, uint64_t size, txlm_checkpoint **out, txlm_err *err)
{
    *out = NULL;
    if (!data && size) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "safetensors: NULL buffer");
    return open_common("safetensors", data ? data : "", size, NULL, out, err);
}

int txlm_safetensors_open(const char *path, txlm_checkpoint **out, txlm_err *err)
{
    *out = NULL;
    txlm_file_map fm;
    int rc = txlm_file_map_open(path, &fm, err);
    if (rc) return rc;
    if (fm.len < 8) {
        unsigned long long len = fm.len;
        txlm_file_map_close(&fm);
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: %llu bytes, too short for the 8-byte header length", path, len);
    }
    txlm_file_map *m = malloc(sizeof *m);
    if (!m) {
        txlm_file_map_close(&fm);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    *m = fm;
    return open_common(path, fm.data, fm.len, m, out, err);
}
