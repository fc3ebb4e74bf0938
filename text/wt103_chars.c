/* Strings, UTF-8 and the character classes the wt103 rules test.
 *
 * The classes are sacremoses' (docs/tokenizers.md, "Character classes"):
 * a table generated at build time from ICU (text/gen_wt103_classes.c,
 * read through wt_class() in wt103.h) and the CJK ranges of its detokenizer
 * here. Lower-casing (--lower-case vocabularies) uses the C library's
 * C.UTF-8 locale, opened with newlocale so the process locale is never
 * touched; without one, only ASCII letters are lower-cased. */
#include <locale.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "wt103.h"

int wt_buf_put(wt_buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) return -1;
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
    return 0;
}

int wt_buf_cstr(wt_buf *b)
{
    if (wt_buf_put(b, "", 0)) return -1;
    b->p[b->n] = 0;
    return 0;
}

void wt_buf_free(wt_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

uint32_t wt_utf8_slow(const char *s, size_t n, size_t *len)
{
    const unsigned char *u = (const unsigned char *)s;
    *len = 1;
    if (u[0] < 0x80) return u[0];
    size_t need = u[0] >= 0xF0 && u[0] < 0xF5 ? 4 : u[0] >= 0xE0 ? 3 : u[0] >= 0xC2 && u[0] < 0xE0 ? 2 : 0;
    if (!need || need > n) return 0xFFFD;
    uint32_t c = u[0] & (0x7F >> need);
    for (size_t i = 1; i < need; i++) {
        if ((u[i] & 0xC0) != 0x80) return 0xFFFD;
        c = (c << 6) | (u[i] & 0x3F);
    }
    if ((need == 3 && c < 0x800) || (need == 4 && (c < 0x10000 || c > 0x10FFFF)) || (c >= 0xD800 && c < 0xE000))
        return 0xFFFD;
    *len = need;
    return c;
}

size_t wt_utf8_encode(uint32_t c, char u[4])
{
    size_t k = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    if (k == 1) u[0] = (char)c;
    else {
        for (size_t j = k - 1; j > 0; j--, c >>= 6) u[j] = (char)(0x80 | (c & 0x3F));
        u[0] = (char)((0xF00u >> k) | c);
    }
    return k;
}

static locale_t utf8_locale;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void open_locale(void)
{
    static const char *const names[] = {"C.UTF-8", "C.utf8", "en_US.UTF-8", NULL};
    for (int i = 0; names[i] && !utf8_locale; i++) utf8_locale = newlocale(LC_CTYPE_MASK, names[i], (locale_t)0);
}

/* sacremoses' util.CJKChars.ranges, with is_cjk's test: the first range
 * whose end lies above c decides, and neither end counts (U+1100 and
 * U+11FF are not CJK there, U+1101..U+11FE are). */
static const uint32_t cjk[][2] = {
    {4352, 4607},   {11904, 42191}, {43072, 43135},   {44032, 55215},   {63744, 64255},   {65072, 65103},
    {65381, 65500}, {94208, 101119}, {110592, 110895}, {110960, 111359}, {131072, 196607},
};

int wt_is_cjk(uint32_t c)
{
    for (size_t i = 0; i < sizeof cjk / sizeof *cjk; i++)
        if (c < cjk[i][1]) return c > cjk[i][0];
    return 0;
}

uint32_t wt_to_lower(uint32_t c)
{
    if (c < 0x80) return c >= 'A' && c <= 'Z' ? c + 32 : c;
    pthread_once(&utf8_once, open_locale);
    return utf8_locale ? (uint32_t)towlower_l((wint_t)c, utf8_locale) : c;
}
