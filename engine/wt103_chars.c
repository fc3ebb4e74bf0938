/* Strings, UTF-8 and the character classes the wt103 rules test.
 *
 * Letters come from the C library's C.UTF-8 locale, whose classes glibc
 * derives from Unicode's DerivedCoreProperties (alpha = Alphabetic plus the
 * non-ASCII decimal digits, alnum = Alphabetic + Nd: exactly Perl's
 * XPosixAlnum). It is opened with newlocale, so the process locale is never
 * touched. Where no UTF-8 locale exists, non-ASCII code points outside the
 * punctuation and symbol blocks count as letters. Numbers and currency
 * signs are small tables here: the C library has no class for them. */
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

static locale_t utf8_locale;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void open_locale(void)
{
    static const char *const names[] = {"C.UTF-8", "C.utf8", "en_US.UTF-8", NULL};
    for (int i = 0; names[i] && !utf8_locale; i++) utf8_locale = newlocale(LC_CTYPE_MASK, names[i], (locale_t)0);
}

static locale_t loc(void)
{
    pthread_once(&utf8_once, open_locale);
    return utf8_locale;
}

typedef struct range {
    uint32_t lo, hi;
} range;

static int in_ranges(uint32_t c, const range *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (c >= r[i].lo && c <= r[i].hi) return 1;
    return 0;
}
#define IN(c, table) in_ranges(c, table, sizeof table / sizeof *table)

static const range nd[] = {
    {0x30, 0x39},     {0x660, 0x669},   {0x6F0, 0x6F9},   {0x7C0, 0x7C9},   {0x966, 0x96F},   {0x9E6, 0x9EF},
    {0xA66, 0xA6F},   {0xAE6, 0xAEF},   {0xB66, 0xB6F},   {0xBE6, 0xBEF},   {0xC66, 0xC6F},   {0xCE6, 0xCEF},
    {0xD66, 0xD6F},   {0xDE6, 0xDEF},   {0xE50, 0xE59},   {0xED0, 0xED9},   {0xF20, 0xF29},   {0x1040, 0x1049},
    {0x1090, 0x1099}, {0x17E0, 0x17E9}, {0x1810, 0x1819}, {0x1946, 0x194F}, {0xFF10, 0xFF19},
};
/* Nl and No: superscripts, fractions, Roman numerals, circled numbers, ... */
static const range n_other[] = {
    {0xB2, 0xB3},     {0xB9, 0xB9},     {0xBC, 0xBE},     {0x9F4, 0x9F9},   {0xF2A, 0xF33},   {0x16EE, 0x16F0},
    {0x2070, 0x2070}, {0x2074, 0x2079}, {0x2080, 0x2089}, {0x2150, 0x2182}, {0x2185, 0x2189}, {0x2460, 0x249B},
    {0x24EA, 0x24FF}, {0x2776, 0x2793}, {0x3007, 0x3007}, {0x3021, 0x3029}, {0x3038, 0x303A}, {0x3192, 0x3195},
    {0x3220, 0x3229}, {0x3248, 0x324F}, {0x3251, 0x325F}, {0x3280, 0x3289}, {0x32B1, 0x32BF},
};
static const range sc[] = {
    {0x24, 0x24},       {0xA2, 0xA5},       {0x58F, 0x58F},     {0x60B, 0x60B},   {0x7FE, 0x7FF},
    {0x9F2, 0x9F3},     {0x9FB, 0x9FB},     {0xAF1, 0xAF1},     {0xBF9, 0xBF9},   {0xE3F, 0xE3F},
    {0x17DB, 0x17DB},   {0x20A0, 0x20C0},   {0xA838, 0xA838},   {0xFDFC, 0xFDFC}, {0xFE69, 0xFE69},
    {0xFF04, 0xFF04},   {0xFFE0, 0xFFE1},   {0xFFE5, 0xFFE6},   {0x11FDD, 0x11FE0}, {0x1E2FF, 0x1E2FF},
    {0x1ECB0, 0x1ECB0},
};
static const range cjk[] = {
    {4352, 4607},   {11904, 42191}, {43072, 43135}, {44032, 55215},
    {63744, 64255}, {65072, 65103}, {65381, 65500}, {131072, 196607},
};
/* Without a UTF-8 locale: the blocks of punctuation and symbols. */
static const range not_letters[] = {
    {0x80, 0xBF},     {0xD7, 0xD7},     {0xF7, 0xF7},     {0x2000, 0x2BFF}, {0x3000, 0x303F},
    {0xFE30, 0xFE6F}, {0xFF00, 0xFF20}, {0xFFF0, 0xFFFF},
};

int wt_is_space(uint32_t c)
{
    return (c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

int wt_is_digit(uint32_t c) { return c < 0x80 ? c >= '0' && c <= '9' : IN(c, nd); }
int wt_is_number(uint32_t c) { return wt_is_digit(c) || (c >= 0x80 && IN(c, n_other)); }
int wt_is_currency(uint32_t c) { return IN(c, sc); }
int wt_is_cjk(uint32_t c) { return IN(c, cjk); }

static int ascii_alpha(uint32_t c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }

int wt_is_alpha(uint32_t c)
{
    if (c < 0x80) return ascii_alpha(c);
    locale_t l = loc();
    /* The Moses tables used for English have no CJK letters: they are split off. */
    if (wt_is_cjk(c)) return 0;
    if (!l) return !IN(c, not_letters) && !wt_is_number(c);
    return iswalpha_l((wint_t)c, l) && !wt_is_digit(c);
}

int wt_is_alnum(uint32_t c)
{
    if (c < 0x80) return ascii_alpha(c) || (c >= '0' && c <= '9');
    return wt_is_alpha(c) || wt_is_digit(c);
}

int wt_is_lower(uint32_t c)
{
    if (c < 0x80) return c >= 'a' && c <= 'z';
    locale_t l = loc();
    return l ? iswlower_l((wint_t)c, l) : 0;
}

uint32_t wt_to_lower(uint32_t c)
{
    if (c < 0x80) return c >= 'A' && c <= 'Z' ? c + 32 : c;
    locale_t l = loc();
    return l ? (uint32_t)towlower_l((wint_t)c, l) : c;
}
