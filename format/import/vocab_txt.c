/* vocab.txt: one symbol per line, line i (from 0) is token id i. Bytes are
 * kept exactly as written apart from the line ends (a line feed, or a
 * carriage return and a line feed) and a UTF-8 byte-order mark at the
 * start of the file; what was removed is said in a note. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm_status.h>

#include "open_input.h"
#include "pack.h"
#include "txlm_layout.h"
#include "vocab_check.h"
#include "vocab_txt.h"

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

#define BOM "\xEF\xBB\xBF"

typedef struct line_ends {
    uint32_t crlf; /* lines whose \r before the line feed was removed */
    int bom;
} line_ends;

/* Compacts the lines in place (dropping line ends) and records where each
 * starts. */
static int split_lines(const char *path, char *text, uint32_t len, txlm_vocab_buf *b, line_ends *le, txlm_err *err)
{
    uint32_t from = 0;
    if (len >= 3 && !memcmp(text, BOM, 3)) from = 3, le->bom = 1;
    uint32_t n = 0;
    for (uint32_t i = from; i < len; i++) n += text[i] == '\n';
    if (len > from && text[len - 1] != '\n') n++; /* a last line without its line feed still counts */
    if (n == 0) return txlm_fail(err, TXLM_ERR_FORMAT, "%s: no symbols", path);
    if (n > TXLM_VOCB_MAX_N) return txlm_fail(err, TXLM_ERR_LIMIT, "%s: %" PRIu32 " lines, at most %u", path, n, TXLM_VOCB_MAX_N);
    b->offsets = malloc(((size_t)n + 1) * sizeof *b->offsets);
    if (!b->offsets) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "%s: out of memory", path);

    uint32_t w = 0, line = 0, start = from;
    for (uint32_t i = from; i <= len && line < n; i++) {
        if (i < len && text[i] != '\n') continue;
        uint32_t l = i - start;
        if (l && text[i - 1] == '\r') l--, le->crlf++;
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

static void write_note(const char *where, const line_ends *le, char *note, size_t cap)
{
    if (!note || !cap) return;
    note[0] = 0;
    if (le->bom && le->crlf)
        snprintf(note, cap, "%s: removed the UTF-8 byte-order mark at the start and the carriage return ending %" PRIu32 " lines",
                 where, le->crlf);
    else if (le->bom) snprintf(note, cap, "%s: removed the UTF-8 byte-order mark at the start", where);
    else if (le->crlf) snprintf(note, cap, "%s: removed the carriage return ending %" PRIu32 " lines (CRLF line ends)", where, le->crlf);
}

int txlm_vocab_parse_txt_noted(const char *where, char *text, uint32_t len, txlm_vocab_buf *out, char *note, size_t note_cap,
                               txlm_err *err)
{
    memset(out, 0, sizeof *out);
    if (note && note_cap) note[0] = 0;
    txlm_vocab_buf b;
    memset(&b, 0, sizeof b);
    line_ends le = {0, 0};
    int rc = len > TXLM_VOCB_MAX_BLOB ? txlm_fail(err, TXLM_ERR_LIMIT, "%s: larger than %u bytes", where, TXLM_VOCB_MAX_BLOB)
                                      : split_lines(where, text, len, &b, &le, err);
    if (rc) {
        free(text);
        free(b.offsets);
        return rc;
    }
    b.v.offsets = b.offsets;
    b.v.blob = b.blob;
    b.v.kind = TXLM_TOK_WORD;
    b.v.flags = 0;
    rc = txlm_vocab_check_symbols(&b.v, where, &txlm_vocab_lines, TXLM_ERR_FORMAT, err);
    if (rc) {
        txlm_vocab_buf_free(&b);
        return rc;
    }
    b.v.eos_id = txlm_vocab_find_sym(&b.v, "<eos>");
    b.v.unk_id = txlm_vocab_find_sym(&b.v, "<unk>");
    write_note(where, &le, note, note_cap);
    *out = b;
    return 0;
}

int txlm_vocab_parse_txt(const char *where, char *text, uint32_t len, txlm_vocab_buf *out, txlm_err *err)
{
    return txlm_vocab_parse_txt_noted(where, text, len, out, NULL, 0, err);
}

int txlm_vocab_load_txt_noted(const char *path, txlm_vocab_buf *out, char *note, size_t note_cap, txlm_err *err)
{
    memset(out, 0, sizeof *out);
    if (note && note_cap) note[0] = 0;
    char *text = NULL;
    uint32_t len = 0;
    int rc = read_file(path, &text, &len, err);
    if (rc) return rc;
    return txlm_vocab_parse_txt_noted(path, text, len, out, note, note_cap, err);
}

int txlm_vocab_load_txt(const char *path, txlm_vocab_buf *out, txlm_err *err)
{
    return txlm_vocab_load_txt_noted(path, out, NULL, 0, err);
}
