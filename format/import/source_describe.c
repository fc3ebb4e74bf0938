/* Telling a user what the file they gave looks like when no source reads
 * it: the commonest mistakes are a file given in the wrong place (a
 * config.json or a vocabulary as the checkpoint), an empty or truncated
 * download, and a compressed archive. */
#include "source_describe.h"

#include <stdio.h>
#include <string.h>

#include "open_input.h"

/* Printable ASCII or UTF-8 text with line ends and tabs (a multi-byte
 * character cut by the end of the head counts as text). */
static int looks_like_text(const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = b[i];
        size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        if (!len || (c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c == 0x7f) return 0;
        for (size_t k = 1; k < len; k++)
            if (i + k < n && (b[i + k] & 0xc0) != 0x80) return 0;
        i += len;
    }
    return n > 0;
}

static const unsigned char *skip_space(const unsigned char *b, size_t n, size_t *left)
{
    size_t i = 0;
    while (i < n && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t')) i++;
    *left = n - i;
    return b + i;
}

static void describe_bytes(const txlm_probe *p, char *out, size_t cap)
{
    const unsigned char *h = p->head;
    size_t n = p->head_len, left;
    const unsigned char *t = skip_space(h, n, &left);
    if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b) {
        snprintf(out, cap, "is a gzip-compressed file (unpack it first)");
    } else if (n >= 6 && !memcmp(h, "\xfd" "7zXZ", 5)) {
        snprintf(out, cap, "is an xz-compressed file (unpack it first)");
    } else if (n >= 8 && !memcmp(h, "\x89HDF\r\n\x1a\n", 8)) {
        snprintf(out, cap, "is an HDF5 file (Keras weights), which no source reads");
    } else if (n >= 1 && h[0] == 0x80) {
        snprintf(out, cap, "is a pickle but not a torch.save checkpoint (a pickled vocabulary? give it with --vocab)");
    } else if (left && (t[0] == '{' || t[0] == '[') && looks_like_text(h, n)) {
        snprintf(out, cap, "is a JSON file (a config.json? give it with --config)");
    } else if (looks_like_text(h, n)) {
        size_t line = 0;
        while (line < n && line < 24 && h[line] != '\n' && h[line] != '\r') line++;
        snprintf(out, cap, "is a text file starting \"%.*s\" (a vocab.txt? give it with --vocab)", (int)line, (const char *)h);
    } else {
        size_t k = n < 8 ? n : 8, at = (size_t)snprintf(out, cap, "is binary data no source recognises (first bytes");
        for (size_t i = 0; i < k && at < cap; i++) at += (size_t)snprintf(out + at, cap - at, " %02x", h[i]);
        if (at < cap) snprintf(out + at, cap - at, ")");
    }
}

void txlm_describe_input(const txlm_probe *p, char *out, size_t cap)
{
    if (!p->exists) snprintf(out, cap, "does not exist");
    else if (!p->is_dir && !p->is_file) snprintf(out, cap, "is %s, not a checkpoint file or folder", txlm_file_kind(p->mode));
    else if (p->is_file && p->size == 0) snprintf(out, cap, "is an empty file");
    else if (p->is_file && p->head_len == 0) snprintf(out, cap, "cannot be read");
    else if (p->is_file) describe_bytes(p, out, cap);
    else snprintf(out, cap, "is a folder no source reads");
}
