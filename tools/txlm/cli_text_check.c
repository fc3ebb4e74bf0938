/* Inputs meant as text that are plainly not (cli.h, "text inputs"): a
 * model given where the text goes, an archive, an image. Such a file
 * tokenizes into a long run of <unk> (or of byte symbols) and is scored
 * or fed for minutes before anyone sees that it was the wrong file, so
 * the commands that take a text look at its first block first. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The length of the valid UTF-8 sequence at p[0..n) (1 to 4), 0 when the
 * bytes there are no UTF-8 (an overlong form, a surrogate, past U+10FFFF,
 * a byte that cannot start one), -1 when they are a valid start cut by
 * the end of the block. */
static int utf8_len(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    int len;
    unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) len = 2;
    else if (c >= 0xe0 && c <= 0xef) len = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c >= 0xf0 && c <= 0xf4) len = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    else return 0;
    for (int k = 1; k < len; k++) {
        if ((size_t)k >= n) return -1;
        if (p[k] < (k == 1 ? lo : 0x80) || p[k] > (k == 1 ? hi : 0xbf)) return 0;
    }
    return len;
}

/* A byte no text holds by itself: a control byte other than whitespace
 * (tab, line feed, vertical tab, form feed, carriage return) and escape
 * (terminal colours in a saved log). */
static int control(unsigned char c)
{
    return (c < 0x20 && !(c >= '\t' && c <= '\r') && c != 0x1b) || c == 0x7f;
}

const char *cli_binary_why(const char *text, size_t n, int cut, char *why, size_t cap)
{
    const unsigned char *p = (const unsigned char *)text;
    const unsigned char *nul = memchr(p, 0, n);
    if (nul) {
        snprintf(why, cap, "a NUL byte at byte %zu: a binary file, or UTF-16, where the text must be UTF-8",
                 (size_t)(nul - p));
        return why;
    }
    size_t bad = 0;
    for (size_t i = 0; i < n;) {
        int len = utf8_len(p + i, n - i);
        if (len < 0 && cut) break; /* the block ends inside a character */
        if (len <= 0 || (len == 1 && control(p[i]))) bad++, len = 1;
        i += (size_t)len;
    }
    if (2 * bad <= n) return NULL;
    snprintf(why, cap, "%zu of its first %zu bytes are neither UTF-8 text nor whitespace", bad, n);
    return why;
}

int cli_refuse_binary(const char *path, const char *text, size_t n, int binary_ok)
{
    char why[160];
    if (binary_ok || !cli_binary_why(text, n < CLI_TEXT_BLOCK ? n : CLI_TEXT_BLOCK, n > CLI_TEXT_BLOCK, why, sizeof why))
        return 0;
    return cli_error("%s: not text (%s); --binary-ok reads it anyway", strcmp(path, "-") ? path : "standard input", why);
}

int cli_check_text_file(const char *path, int binary_ok)
{
    if (binary_ok || !strcmp(path, "-")) return 0;
    FILE *f = cli_open_input(path);
    if (!f) return 1;
    char block[CLI_TEXT_BLOCK + 1];
    size_t n = fread(block, 1, sizeof block, f);
    int bad = ferror(f);
    cli_close_input(f);
    if (bad) return cli_error("%s: read error", path);
    return cli_refuse_binary(path, block, n, 0);
}
