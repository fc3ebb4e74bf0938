/* The wt103 rules on every code point: txlm's character classes against
 * those of sacremoses 0.1.1 (tests/text/sacremoses_classes.txt, written by
 * gen_sacremoses_classes.py from sacremoses' own lists), then what they
 * decide, swept over U+0021..U+FFFF: which characters stay inside a word,
 * which apostrophes start a contraction, which commas stay between
 * numbers, which dots stay after a word, which tokens take no space after
 * them or before them when detokenized.
 * usage: test_wt103_sweep sacremoses_classes.txt */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wt103.h"

enum { T_ALNUM, T_ALPHA, D_ALPHA, NUMBER, LOWER, CURRENCY, DIGIT, SPACE, CJK, N_CLASSES };
static const char *const names[N_CLASSES] = {"t_alnum", "t_alpha", "d_alpha", "number", "lower",
                                             "currency", "digit",   "space",   "cjk"};
#define N_CP 0x110000
static unsigned short want[N_CP]; /* bit k: class k */
static int failures;

static int load(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return perror(path), -1;
    char line[256], name[32];
    unsigned lo, hi, lines = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        int k = 0;
        if (sscanf(line, "%31s %x %x", name, &lo, &hi) != 3 || hi >= N_CP || lo > hi) break;
        while (k < N_CLASSES && strcmp(names[k], name)) k++;
        if (k == N_CLASSES) break;
        for (unsigned c = lo; c <= hi; c++) want[c] |= (unsigned short)(1u << k);
        lines++;
    }
    int bad = !feof(f) || lines < 100;
    fclose(f);
    if (bad) fprintf(stderr, "%s: malformed near \"%s\"\n", path, line);
    return bad ? -1 : 0;
}

static int got_class(int k, uint32_t c)
{
    switch (k) {
    case T_ALNUM: return wt_is_alnum(c);
    case T_ALPHA: return wt_is_alpha(c);
    case D_ALPHA: return wt_is_detok_alpha(c);
    case NUMBER: return wt_is_number(c);
    case LOWER: return wt_is_lower(c);
    case CURRENCY: return wt_is_currency(c);
    case DIGIT: return wt_is_digit(c);
    case SPACE: return wt_is_space(c);
    default: return wt_is_cjk(c);
    }
}

static int has(int k, uint32_t c) { return (want[c] >> k) & 1; }

/* Every class on every code point; \d beyond the BMP follows the Python
 * release (Unicode 15 added digits there), so only the BMP is compared. */
static void sweep_classes(void)
{
    for (int k = 0; k < N_CLASSES; k++) {
        uint32_t end = k == DIGIT ? 0x10000 : N_CP;
        int bad = 0;
        for (uint32_t c = 0; c < end; c++) {
            if (c >= 0xD800 && c < 0xE000) continue;
            if (!got_class(k, c) == !has(k, c)) continue;
            if (bad++ < 10) fprintf(stderr, "class %s: U+%04X is %d, sacremoses says %d\n", names[k], c, got_class(k, c), has(k, c));
        }
        if (bad) fprintf(stderr, "class %s: %d code points differ\n", names[k], bad);
        failures += bad != 0;
    }
}

static size_t utf8(uint32_t c, char *o)
{
    if (c < 0x80) return o[0] = (char)c, 1;
    if (c < 0x800) return o[0] = (char)(0xC0 | c >> 6), o[1] = (char)(0x80 | (c & 63)), 2;
    o[0] = (char)(0xE0 | c >> 12), o[1] = (char)(0x80 | ((c >> 6) & 63)), o[2] = (char)(0x80 | (c & 63));
    return 3;
}

/* Expands "%c" in a pattern to the code point. */
static void expand(const char *pat, uint32_t c, char *out)
{
    char u[4];
    size_t n = utf8(c, u);
    for (; *pat; pat++) {
        if (pat[0] == '%' && pat[1] == 'c') memcpy(out, u, n), out += n, pat++;
        else *out++ = *pat;
    }
    *out = 0;
}

static int tokenize_is(const char *pat, uint32_t c, const char *want_pat)
{
    char in[32], expect[64];
    expand(pat, c, in);
    expand(want_pat, c, expect);
    wt_buf out = {0};
    int ok = txlm_wt103_tokenize(in, strlen(in), 0, &out) == 0 && out.n == strlen(expect) && !memcmp(out.p, expect, out.n);
    if (!ok) fprintf(stderr, "U+%04X: tokenize \"%s\" gave \"%.*s\", sacremoses gives \"%s\"\n", c, in, (int)out.n, out.p, expect);
    wt_buf_free(&out);
    return ok;
}

/* Detokenizes the space-separated tokens of a pattern. */
static int detokenize_is(const char *pat, uint32_t c, const char *want_pat)
{
    char in[32], expect[64];
    expand(pat, c, in);
    expand(want_pat, c, expect);
    const char *tok[4];
    size_t len[4], n = 0;
    for (char *p = in; *p && n < 4;) {
        tok[n] = p;
        while (*p && *p != ' ') p++;
        len[n] = (size_t)(p - tok[n]);
        n++;
        if (*p) p++;
    }
    wt_buf out = {0};
    int ok = txlm_wt103_detokenize(tok, len, n, &out) == 0 && out.n == strlen(expect) && !memcmp(out.p, expect, out.n);
    if (!ok) fprintf(stderr, "U+%04X: detokenize \"%s\" gave \"%.*s\", sacremoses gives \"%s\"\n", c, in, (int)out.n, out.p, expect);
    wt_buf_free(&out);
    return ok;
}

/* Characters that rules other than the classes' rewrite (the normaliser's
 * quotes, dashes, ellipsis and no-break space; the detokenizer's quote
 * spellings and openers): the hand-written cases of test_wt103 cover them. */
static int rewritten(uint32_t c)
{
    static const uint32_t special[] = {0xA0, 0xA1, 0xAB, 0xB4, 0xBB, 0xBF, 0x2013, 0x2014, 0x2018, 0x2019,
                                       0x201A, 0x201C, 0x201D, 0x201E, 0x2026};
    if (c < 0x80) return !((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && !(c >= '0' && c <= '9');
    for (size_t i = 0; i < sizeof special / sizeof *special; i++)
        if (special[i] == c) return 1;
    return 0;
}

static int sweep_one(uint32_t c)
{
    int alnum = has(T_ALNUM, c), ok = 1;
    if (has(SPACE, c)) return tokenize_is("a%ca", c, "a a");
    /* a letter or digit stays inside the word; anything else is split off */
    ok &= tokenize_is("a%ca", c, alnum ? "a%ca" : "a %c a");
    /* letter ' letter starts a contraction; a digit or a symbol does not */
    ok &= tokenize_is("a'%c", c, has(T_ALPHA, c) ? "a '%c" : "a ' %c");
    /* a comma stays between numbers (and the number splits join two digits) */
    const char *comma = !(alnum && has(NUMBER, c)) ? "%c , 1" : has(DIGIT, c) ? "%c @,@ 1" : "%c,1";
    ok &= tokenize_is("%c,1", c, comma);
    /* a final dot stays when the next word starts lower-case */
    ok &= tokenize_is("x. %cy", c, has(LOWER, c) ? (alnum ? "x. %cy" : "x. %c y") : (alnum ? "x . %cy" : "x . %c y"));
    /* detokenizing: CJK joins CJK, a currency sign takes no space after it */
    ok &= detokenize_is("%c %c", c, has(CJK, c) || has(CURRENCY, c) ? "%c%c" : "%c %c");
    ok &= detokenize_is("x '%c", c, has(D_ALPHA, c) ? "x'%c" : "x '%c");
    return ok;
}

static void sweep_rules(void)
{
    int bad = 0;
    for (uint32_t c = 0x21; c < 0x10000; c++) {
        if ((c >= 0xD800 && c < 0xE000) || rewritten(c)) continue;
        if (!sweep_one(c) && ++bad >= 20) break;
    }
    if (bad) fprintf(stderr, "rules: %d code points%s differ\n", bad, bad >= 20 ? " (at least)" : "");
    failures += bad != 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s sacremoses_classes.txt\n", argv[0]);
        return 2;
    }
    if (load(argv[1])) return 1;
    sweep_classes();
    sweep_rules();
    printf("%d failures\n", failures);
    return failures != 0;
}
