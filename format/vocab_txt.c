/* vocab.txt: one symbol per line, line i (from 0) is token id i. Bytes are
 * kept exactly as written apart from the line feed. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm.h>

#include "open_input.h"
#include "pack.h"
#include "txlm_layout.h"

void txlm_vocab_buf_free(txlm_vocab_buf *b)
{
    if (!b) return;
    free(b->offsets);
    free(b->blob);
    memset(b, 0, sizeof *b);
}

static int read_file(const char *path, char **out, uint32_t *len, txlm_err *err)
{
    FILE *f;
    int open_rc = txlm_fopen_input(path, &f, err);
    if (open_rc) return open_rc;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    int rc = 0;
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (ferror(f)) {
            rc = txlm_fail(err, TXLM_ERR_IO, "%s: read error", path);
            break;
        }
        if (n < cap) break;
        if (cap > TXLM_VOCB_MAX_BLOB) {
            rc = txlm_fail(err, TXLM_ERR_LIMIT, "%s: larger than %u bytes", path, TXLM_VOCB_MAX_BLOB);
            break;
        }
        char *nb = realloc(buf, cap * 2);
        if (!nb) free(buf);
        buf = nb;
        cap *= 2;
    }
    fclose(f);
    if (buf && !rc && n > TXLM_VOCB_MAX_BLOB)
        rc = txlm_fail(err, TXLM_ERR_LIMIT, "%s: larger than %u bytes", path, TXLM_VOCB_MAX_BLOB);
    if (!buf && !rc) rc = txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    *len = (uint32_t)n;
    return 0;
}

/* The tokenizer maps symbols to ids, so two lines with the same symbol
 * would make one of them unreachable. */
static int check_unique(const char *path, const txlm_vocab *v, txlm_err *err)
{
    uint32_t a = 0, b = 0;
    int dup = txlm_vocab_find_duplicate(v, &a, &b);
    if (dup < 0) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    if (!dup) return 0;
    uint32_t len;
    const char *s = txlm_vocab_sym(v, a, &len);
    return txlm_fail(err, TXLM_ERR_FORMAT, "%s: symbol '%.*s' appears on lines %" PRIu32 " and %" PRIu32, path,
                     (int)(len > 64 ? 64 : len), s, a + 1, b + 1);
}

static int split_lines(const char *path, char *text, uint32_t len, txlm_vocab_buf *b, txlm_err *err)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < len; i++) n += text[i] == '\n';
    if (len && text[len - 1] != '\n') n++; /* a last line without its line feed still counts */
    if (n == 0) return txlm_fail(err, TXLM_ERR_FORMAT, "%s: no symbols", path);
    if (n > TXLM_VOCB_MAX_N) return txlm_fail(err, TXLM_ERR_LIMIT, "%s: %" PRIu32 " lines, at most %u", path, n, TXLM_VOCB_MAX_N);
    b->offsets = malloc(((size_t)n + 1) * sizeof *b->offsets);
    if (!b->offsets) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);

    /* Compact in place: drop each line feed, keep every other byte. */
    uint32_t w = 0, line = 0, start = 0;
    for (uint32_t i = 0; i <= len && line < n; i++) {
        if (i < len && text[i] != '\n') continue;
        uint32_t l = i - start;
        if (l == 0) return txlm_fail(err, TXLM_ERR_FORMAT, "%s: line %" PRIu32 " is empty", path, line + 1);
        if (l > TXLM_VOCB_MAX_SYM)
            return txlm_fail(err, TXLM_ERR_LIMIT, "%s: line %" PRIu32 " is %" PRIu32 " bytes long, more than %u", path, line + 1, l,
                             TXLM_VOCB_MAX_SYM);
        uint64_t ok = txlm_utf8_valid_prefix((const uint8_t *)text + start, l);
        if (ok != l)
            return txlm_fail(err, TXLM_ERR_FORMAT, "%s: line %" PRIu32 " is not valid UTF-8 (byte offset %" PRIu64 ")", path,
                             line + 1, (uint64_t)start + ok);
        b->offsets[line++] = w;
        memmove(text + w, text + start, l);
        w += l;
        start = i + 1;
    }
    b->offsets[n] = w;
    b->blob = text;
    b->v.n = n;
    b->v.blob_size = w;
    return 0;
}

int txlm_vocab_parse_txt(const char *where, char *text, uint32_t len, txlm_vocab_buf *out, txlm_err *err)
{
    memset(out, 0, sizeof *out);
    txlm_vocab_buf b;
    memset(&b, 0, sizeof b);
    int rc = len > TXLM_VOCB_MAX_BLOB ? txlm_fail(err, TXLM_ERR_LIMIT, "%s: larger than %u bytes", where, TXLM_VOCB_MAX_BLOB)
                                      : split_lines(where, text, len, &b, err);
    if (rc) {
        free(text);
        free(b.offsets);
        return rc;
    }
    b.v.offsets = b.offsets;
    b.v.blob = b.blob;
    b.v.kind = TXLM_TOK_WORD;
    b.v.flags = 0;
    rc = check_unique(where, &b.v, err);
    if (rc) {
        txlm_vocab_buf_free(&b);
        return rc;
    }
    b.v.eos_id = txlm_vocab_find_sym(&b.v, "<eos>");
    b.v.unk_id = txlm_vocab_find_sym(&b.v, "<unk>");
    *out = b;
    return 0;
}

int txlm_vocab_load_txt(const char *path, txlm_vocab_buf *out, txlm_err *err)
{
    memset(out, 0, sizeof *out);
    char *text = NULL;
    uint32_t len = 0;
    int rc = read_file(path, &text, &len, err);
    if (rc) return rc;
    return txlm_vocab_parse_txt(path, text, len, out, err);
}
