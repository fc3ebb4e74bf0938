/* Raw text -> WikiText-103 tokens: what HuggingFace's TransfoXLTokenizer
 * does to a line (sacremoses' English punctuation normaliser, its English
 * tokenizer with aggressive dash splits and no XML escaping, then number
 * splitting), rule for rule and in the same order. Each rule is one pass
 * over the line that behaves as Python's re.sub does: leftmost matches, no
 * overlaps, scanning on after what a match consumed. docs/tokenizers.md
 * lists the rules. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "wt103.h"

#define NBSP "\xC2\xA0"

typedef struct line {
    wt_buf a, b;   /* the text is in a; passes write b and swap */
} line;

/* Pass results: written into the second buffer, or nothing to change. */
enum { WROTE = 0, SAME = 1, NOMEM = -1 };

static int run(line *L, int rc)
{
    if (rc == WROTE) {
        wt_buf t = L->a;
        L->a = L->b;
        L->b = t;
    }
    return rc == NOMEM ? -1 : 0;
}

static uint32_t cp(const wt_buf *s, size_t i, size_t *len) { return wt_utf8(s->p + i, s->n - i, len); }

/* Copies one code point (len bytes at p). */
static inline int put_cp(wt_buf *o, const char *p, size_t len) { return len == 1 ? wt_buf_putc(o, *p) : wt_buf_put(o, p, len); }

static const char *find(const char *s, size_t n, const char *pat, size_t m)
{
    if (m == 0 || m > n) return NULL;
    for (const char *p = s; (p = memchr(p, pat[0], (size_t)(s + n - p) - m + 1)) != NULL; p++)
        if (!memcmp(p, pat, m)) return p;
    return NULL;
}

/* Literal replacement of every occurrence, left to right. */
static int lit(line *L, const char *from, const char *to)
{
    const wt_buf *s = &L->a;
    size_t fl = strlen(from), tl = strlen(to);
    const char *p = find(s->p, s->n, from, fl);
    if (!p) return run(L, SAME);
    wt_buf *o = &L->b;
    o->n = 0;
    const char *at = s->p, *end = s->p + s->n;
    while (p) {
        if (wt_buf_put(o, at, (size_t)(p - at)) || wt_buf_put(o, to, tl)) return run(L, NOMEM);
        at = p + fl;
        p = find(at, (size_t)(end - at), from, fl);
    }
    return run(L, wt_buf_put(o, at, (size_t)(end - at)) ? NOMEM : WROTE);
}

/* " +" -> " " */
static int squeeze(line *L)
{
    if (!find(L->a.p, L->a.n, "  ", 2)) return run(L, SAME);
    wt_buf *o = &L->b;
    o->n = 0;
    for (size_t i = 0; i < L->a.n; i++)
        if (!(L->a.p[i] == ' ' && i && L->a.p[i - 1] == ' ') && wt_buf_putc(o, L->a.p[i])) return run(L, NOMEM);
    return run(L, WROTE);
}

/* Runs of whitespace (str.isspace) -> one space; with strip, none at the ends. */
static int spaces(line *L, int strip)
{
    wt_buf *o = &L->b;
    o->n = 0;
    int pending = 0;
    for (size_t i = 0, len; i < L->a.n; i += len) {
        uint32_t c = cp(&L->a, i, &len);
        if (wt_is_space(c)) {
            pending = 1;
            continue;
        }
        if (c < 0x20) continue; /* the control characters that are not whitespace */
        if (pending && (o->n || !strip) && wt_buf_putc(o, ' ')) return run(L, NOMEM);
        pending = 0;
        if (put_cp(o, L->a.p + i, len)) return run(L, NOMEM);
    }
    if (pending && !strip && wt_buf_putc(o, ' ')) return run(L, NOMEM);
    return run(L, WROTE);
}

/* str.strip(): whitespace off both ends. */
static void strip(wt_buf *s)
{
    size_t b = 0, len;
    while (b < s->n && wt_is_space(wt_utf8(s->p + b, s->n - b, &len))) b += len;
    size_t e = s->n;
    while (e > b) {
        size_t k = e - 1;
        while (k > b && ((unsigned char)s->p[k] & 0xC0) == 0x80) k--;
        if (!wt_is_space(wt_utf8(s->p + k, e - k, &len))) break;
        e = k;
    }
    if (b) memmove(s->p, s->p + b, e - b);
    s->n = e - b;
}

/* A class of code points, for the patterns that test one. */
typedef int (*cls)(uint32_t);
static int not_number(uint32_t c) { return !wt_is_number(c); }
static int not_alpha(uint32_t c) { return !wt_is_alpha(c); }
static int not_alpha_number(uint32_t c) { return !wt_is_alpha(c) && !wt_is_number(c); }
static int is_s(uint32_t c) { return c == 's'; }

/* The pattern ([A]) MID ([C]) (either class may be absent, MID is one ASCII
 * character) -> A + before + MID + after + C. */
static int window(line *L, cls a, char mid, cls c, const char *before, const char *after)
{
    if (!memchr(L->a.p, mid, L->a.n)) return run(L, SAME);
    wt_buf *o = &L->b;
    o->n = 0;
    const wt_buf *s = &L->a;
    for (size_t i = 0, la; i < s->n;) {
        uint32_t x = cp(s, i, &la);
        size_t j = a ? i + la : i; /* where MID must be */
        int ok = (!a || a(x)) && j < s->n && s->p[j] == mid;
        size_t lc = 0;
        if (ok && c) {
            if (j + 1 >= s->n) ok = 0;
            else ok = c(cp(s, j + 1, &lc));
        }
        if (!ok) {
            if (put_cp(o, s->p + i, la)) return run(L, NOMEM);
            i += la;
            continue;
        }
        if ((a && wt_buf_put(o, s->p + i, la)) || wt_buf_put(o, before, strlen(before)) || wt_buf_putc(o, mid) ||
            wt_buf_put(o, after, strlen(after)) || (c && wt_buf_put(o, s->p + j + 1, lc)))
            return run(L, NOMEM);
        i = j + 1 + lc;
    }
    return run(L, WROTE);
}

/* The normaliser's "(\d) %" -> "\1%" (next NULL) and "(\d)NBSP(\d)" ->
 * "\1.\2": a digit, gap, then (if next) one code point of class next. */
static int digit_gap(line *L, const char *gap, cls next, const char *with)
{
    size_t gl = strlen(gap);
    if (!find(L->a.p, L->a.n, gap, gl)) return run(L, SAME);
    wt_buf *o = &L->b;
    o->n = 0;
    const wt_buf *s = &L->a;
    for (size_t i = 0, la; i < s->n;) {
        uint32_t x = cp(s, i, &la);
        size_t j = i + la, lc = 0;
        int ok = wt_is_digit(x) && j + gl <= s->n && !memcmp(s->p + j, gap, gl);
        if (ok && next) ok = j + gl < s->n && next(cp(s, j + gl, &lc));
        if (ok) {
            if (wt_buf_put(o, s->p + i, la) || wt_buf_put(o, with, strlen(with)) || wt_buf_put(o, s->p + j + gl, lc))
                return run(L, NOMEM);
            i = j + gl + lc;
            continue;
        }
        if (put_cp(o, s->p + i, la)) return run(L, NOMEM);
        i = j;
    }
    return run(L, WROTE);
}

/* A rule that rewrites a match starting at byte i into o and returns the
 * bytes it consumed, 0 where none starts (the byte is then copied as it
 * is), or -1 when out of memory. */
typedef ptrdiff_t (*byte_rule)(const wt_buf *s, size_t i, wt_buf *o);

/* One pass of rule over the line; a line without the byte every match
 * starts with is left as it is without one. */
static int byte_pass(line *L, char first, byte_rule rule)
{
    if (!memchr(L->a.p, first, L->a.n)) return run(L, SAME);
    wt_buf *o = &L->b;
    o->n = 0;
    const wt_buf *s = &L->a;
    for (size_t i = 0; i < s->n;) {
        ptrdiff_t used = rule(s, i, o);
        if (used < 0 || (used == 0 && wt_buf_putc(o, s->p[i]))) return run(L, NOMEM);
        i += used ? (size_t)used : 1;
    }
    return run(L, WROTE);
}

/* ") [.!:?;,]" -> ")\1" */
static ptrdiff_t close_paren(const wt_buf *s, size_t i, wt_buf *o)
{
    if (!(s->p[i] == ')' && i + 2 < s->n && s->p[i + 1] == ' ' && strchr(".!:?;,", s->p[i + 2]) && s->p[i + 2])) return 0;
    return wt_buf_putc(o, ')') || wt_buf_putc(o, s->p[i + 2]) ? -1 : 3;
}

/* '"([,.]+)' -> '\1"' */
static ptrdiff_t quote_commas(const wt_buf *s, size_t i, wt_buf *o)
{
    size_t j = i + 1;
    while (s->p[i] == '"' && j < s->n && (s->p[j] == ',' || s->p[j] == '.')) j++;
    if (j == i + 1) return 0;
    return wt_buf_put(o, s->p + i + 1, j - i - 1) || wt_buf_putc(o, '"') ? -1 : (ptrdiff_t)(j - i);
}

static int normalise(line *L)
{
    static const char *const reps[][2] = {
        {"\r", ""}, {"(", " ("}, {")", ") "}, {NULL, NULL}, {"( ", "("}, {" )", ")"},
    };
    for (size_t i = 0; i < sizeof reps / sizeof *reps; i++) {
        int rc = reps[i][0] ? lit(L, reps[i][0], reps[i][1]) : squeeze(L) || byte_pass(L, ')', close_paren);
        if (rc) return -1;
    }
    if (digit_gap(L, " %", NULL, "%")) return -1;
    /* The later rules of the script, in its order. The two rules for a
     * curly quote between ASCII letters are left out: the unconditional
     * ones after them produce the same text. */
    static const char *const more[][2] = {
        {" :", ":"},
        {" ;", ";"},
        {"`", "'"},
        {"''", " \" "},
        {"\xE2\x80\x9E", "\""},
        {"\xE2\x80\x9C", "\""},
        {"\xE2\x80\x9D", "\""},
        {"\xE2\x80\x93", "-"},
        {"\xE2\x80\x94", " - "},
        {NULL, NULL},
        {"\xC2\xB4", "'"},
        {"\xE2\x80\x98", "'"},
        {"\xE2\x80\x9A", "'"},
        {"\xE2\x80\x99", "'"},
        {"''", "\""},
        {"\xE2\x80\xA6", "..."},
        {NBSP "\xC2\xAB" NBSP, "\""},
        {"\xC2\xAB" NBSP, "\""},
        {"\xC2\xAB", "\""},
        {NBSP "\xC2\xBB" NBSP, "\""},
        {NBSP "\xC2\xBB", "\""},
        {"\xC2\xBB", "\""},
        {NBSP "%", "%"},
        {"n\xC2\xBA" NBSP, "n\xC2\xBA "},
        {NBSP ":", ":"},
        {NBSP "\xC2\xBA" "C", " \xC2\xBA" "C"},
        {NBSP "cm", " cm"},
        {NBSP "?", "?"},
        {NBSP "!", "!"},
        {NBSP ";", ";"},
        {"," NBSP, ", "},
        {NULL, NULL},
    };
    for (size_t i = 0; i < sizeof more / sizeof *more; i++)
        if (more[i][0] ? lit(L, more[i][0], more[i][1]) : squeeze(L)) return -1;
    if (byte_pass(L, '"', quote_commas) || digit_gap(L, NBSP, wt_is_digit, ".")) return -1;
    strip(&L->a);
    return 0;
}

/* ---- the tokenizer ------------------------------------------------------ */

static const char *const protected_pat[] = {"<unk>", "<eos>", "<formula>"};
#define MAX_PROTECTED 64

typedef struct protect {
    char tok[MAX_PROTECTED][16];
    size_t n;
} protect;

static int ieq(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char x = a[i] >= 'A' && a[i] <= 'Z' ? (char)(a[i] + 32) : a[i];
        if (x != b[i]) return 0;
    }
    return 1;
}

/* Special symbols stay whole: each spelling found (any case) becomes an
 * alphanumeric placeholder until the end. */
static int protect_specials(line *L, protect *P)
{
    P->n = 0;
    for (size_t k = 0; k < sizeof protected_pat / sizeof *protected_pat; k++) {
        size_t m = strlen(protected_pat[k]);
        for (size_t i = 0; i + m <= L->a.n; i++) {
            if (!ieq(L->a.p + i, protected_pat[k], m)) continue;
            size_t j = 0;
            while (j < P->n && !(strlen(P->tok[j]) == m && !memcmp(P->tok[j], L->a.p + i, m))) j++;
            if (j < P->n) continue;
            if (P->n == MAX_PROTECTED) continue;
            memcpy(P->tok[P->n], L->a.p + i, m);
            P->tok[P->n++][m] = 0;
        }
    }
    for (size_t i = 0; i < P->n; i++) {
        char ph[40];
        snprintf(ph, sizeof ph, "THISISPROTECTED%03zu", i);
        if (lit(L, P->tok[i], ph)) return -1;
    }
    return 0;
}

static int restore_specials(line *L, const protect *P)
{
    for (size_t i = 0; i < P->n; i++) {
        char ph[40];
        snprintf(ph, sizeof ph, "THISISPROTECTED%03zu", i);
        if (lit(L, ph, P->tok[i])) return -1;
    }
    return 0;
}

static int ctrl_and_pad(line *L)
{
    wt_buf *o = &L->b;
    o->n = 0;
    const wt_buf *s = &L->a;
    for (size_t i = 0, len; i < s->n; i += len) {
        uint32_t c = cp(s, i, &len);
        int pad = !wt_is_alnum(c) && !wt_is_space(c) && !(c < 0x80 && strchr(".'`,-", (int)c));
        if ((pad && wt_buf_putc(o, ' ')) || put_cp(o, s->p + i, len) || (pad && wt_buf_putc(o, ' ')))
            return run(L, NOMEM);
    }
    return run(L, WROTE);
}

/* "([alnum])-(?=[alnum])" -> "\1 @-@ " */
static int dash_split(line *L)
{
    if (!memchr(L->a.p, '-', L->a.n)) return run(L, SAME);
    wt_buf *o = &L->b;
    o->n = 0;
    const wt_buf *s = &L->a;
    uint32_t prev = ' ';
    for (size_t i = 0, len, ln; i < s->n; i += len) {
        uint32_t c = cp(s, i, &len);
        int split = c == '-' && wt_is_alnum(prev) && i + 1 < s->n && wt_is_alnum(cp(s, i + 1, &ln));
        if (split ? wt_buf_put(o, " @-@ ", 5) : put_cp(o, s->p + i, len)) return run(L, NOMEM);
        prev = c;
    }
    return run(L, WROTE);
}

/* Runs of dots become placeholders (so the prefix rule leaves them alone)
 * with a space on each side, exactly as the script's loop does. */
static int multidots(line *L)
{
    if (!find(L->a.p, L->a.n, "..", 2)) return 0;
    wt_buf *o = &L->b;
    o->n = 0;
    const wt_buf *s = &L->a;
    for (size_t i = 0; i < s->n; i++) {
        size_t j = i;
        while (j < s->n && s->p[j] == '.') j++;
        if (j - i >= 2) {
            if (wt_buf_put(o, " DOTMULTI", 9) || wt_buf_put(o, s->p + i + 1, j - i - 1)) return run(L, NOMEM);
            i = j - 1;
        } else if (wt_buf_putc(o, s->p[i])) return run(L, NOMEM);
    }
    if (run(L, WROTE)) return -1;
    while (find(L->a.p, L->a.n, "DOTMULTI.", 9)) {
        /* DOTMULTI\.([^\.]) -> DOTDOTMULTI \1 */
        o = &L->b;
        o->n = 0;
        s = &L->a;
        for (size_t i = 0, len; i < s->n;) {
            if (i + 9 < s->n && !memcmp(s->p + i, "DOTMULTI.", 9) && s->p[i + 9] != '.') {
                cp(s, i + 9, &len);
                if (wt_buf_put(o, "DOTDOTMULTI ", 12) || wt_buf_put(o, s->p + i + 9, len)) return run(L, NOMEM);
                i += 9 + len;
            } else {
                if (wt_buf_putc(o, s->p[i])) return run(L, NOMEM);
                i++;
            }
        }
        if (run(L, WROTE) || lit(L, "DOTMULTI.", "DOTDOTMULTI")) return -1;
    }
    return 0;
}

static int restore_multidots(line *L)
{
    while (find(L->a.p, L->a.n, "DOTDOTMULTI", 11))
        if (lit(L, "DOTDOTMULTI", "DOTMULTI.")) return -1;
    return lit(L, "DOTMULTI", ".");
}

static const char *const nonbreaking[] = {
    "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N", "O", "P", "Q", "R", "S", "T", "U",
    "V", "W", "X", "Y", "Z", "Adj", "Adm", "Adv", "Asst", "Bart", "Bldg", "Brig", "Bros", "Capt", "Cmdr", "Col",
    "Comdr", "Con", "Corp", "Cpl", "DR", "Dr", "Drs", "Ens", "Gen", "Gov", "Hon", "Hr", "Hosp", "Insp", "Lt",
    "MM", "MR", "MRS", "MS", "Maj", "Messrs", "Mlle", "Mme", "Mr", "Mrs", "Ms", "Msgr", "Op", "Ord", "Pfc", "Ph",
    "Prof", "Pvt", "Rep", "Reps", "Res", "Rev", "Rt", "Sen", "Sens", "Sfc", "Sgt", "Sr", "St", "Supt", "Surg",
    "v", "vs", "i.e", "rev", "e.g", "Rs", "Nos", "Nr", "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep",
    "Oct", "Nov", "Dec",
};
static const char *const numeric_only[] = {"No", "Art", "pp"};

static int in_list(const char *const *list, size_t n, const char *s, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(list[i]) == len && !memcmp(list[i], s, len)) return 1;
    return 0;
}

/* A word ending in '.' keeps it unless nothing says it is an abbreviation. */
static int prefixes(line *L)
{
    if (!memchr(L->a.p, '.', L->a.n)) return run(L, SAME);
    wt_buf *o = &L->b;
    o->n = 0;
    const wt_buf *s = &L->a;
    size_t i = 0;
    while (i < s->n && s->p[i] == ' ') i++;
    while (i < s->n) {
        size_t e = i, len;
        while (e < s->n && s->p[e] != ' ') e++;
        size_t nx = e;
        while (nx < s->n && s->p[nx] == ' ') nx++;
        int last = nx >= s->n;
        size_t pl = e - i - 1; /* the prefix: the word without its final dot */
        int split = 0;
        if (e - i >= 2 && s->p[e - 1] == '.') {
            const char *p = s->p + i;
            int dot = memchr(p, '.', pl) != NULL, alpha = 0;
            for (size_t k = 0; k < pl; k += len) alpha |= wt_is_alpha(wt_utf8(p + k, pl - k, &len));
            int keep = (dot && alpha) || in_list(nonbreaking, sizeof nonbreaking / sizeof *nonbreaking, p, pl) ||
                       (!last && wt_is_lower(cp(s, nx, &len)));
            if (!keep && in_list(numeric_only, 3, p, pl) && !last && s->p[nx] >= '0' && s->p[nx] <= '9') keep = 1;
            split = !keep;
        }
        if (o->n && wt_buf_putc(o, ' ')) return run(L, NOMEM);
        if (split ? wt_buf_put(o, s->p + i, pl) || wt_buf_put(o, " .", 2) : wt_buf_put(o, s->p + i, e - i))
            return run(L, NOMEM);
        i = nx;
    }
    return run(L, WROTE);
}

static int tokenize_line(line *L, protect *P)
{
    if (spaces(L, 0)) return -1;
    if (protect_specials(L, P)) return -1;
    strip(&L->a);
    if (ctrl_and_pad(L) || dash_split(L) || multidots(L)) return -1;
    if (window(L, not_number, ',', NULL, " ", " ") || window(L, NULL, ',', not_number, " ", " ")) return -1;
    if (L->a.n >= 2 && L->a.p[L->a.n - 1] == ',') {
        /* ([N]),$ -> "\1 , " */
        size_t k = L->a.n - 2, len;
        while (k > 0 && ((unsigned char)L->a.p[k] & 0xC0) == 0x80) k--;
        if (wt_is_number(wt_utf8(L->a.p + k, L->a.n - 1 - k, &len))) {
            L->a.n--;
            if (wt_buf_put(&L->a, " , ", 3)) return -1;
        }
    }
    if (window(L, not_alpha, '\'', not_alpha, " ", " ") || window(L, not_alpha_number, '\'', wt_is_alpha, " ", " ") ||
        window(L, wt_is_alpha, '\'', not_alpha, " ", " ") || window(L, wt_is_alpha, '\'', wt_is_alpha, " ", "") ||
        window(L, wt_is_number, '\'', is_s, " ", ""))
        return -1;
    if (prefixes(L) || spaces(L, 1)) return -1;
    if (L->a.n >= 2 && !memcmp(L->a.p + L->a.n - 2, ".'", 2)) {
        L->a.n -= 2;
        if (wt_buf_put(&L->a, " . ' ", 5)) return -1;
    }
    return restore_specials(L, P) || restore_multidots(L) ? -1 : 0;
}

/* Splits the tokens at ',' and '.' between two digits ("1,000.5" ->
 * "1 @,@ 000 @.@ 5") and joins them with single spaces into out. */
static int split_numbers(const wt_buf *s, wt_buf *out)
{
    out->n = 0;
    uint32_t prev = ' ';
    int gap = 1;
    for (size_t i = 0, len, ln; i < s->n; i += len) {
        uint32_t c = cp(s, i, &len);
        if (c == ' ') {
            gap = 1;
            prev = c;
            continue;
        }
        if (gap && out->n && wt_buf_putc(out, ' ')) return -1;
        gap = 0;
        if ((c == ',' || c == '.') && wt_is_digit(prev) && i + 1 < s->n && wt_is_digit(cp(s, i + 1, &ln))) {
            char sep[5] = {' ', '@', (char)c, '@', ' '};
            if (wt_buf_put(out, sep, 5)) return -1;
        } else if (put_cp(out, s->p + i, len)) return -1;
        prev = c;
    }
    return 0;
}

/* Lines of ASCII letters, digits and blanks only: no rule but the
 * whitespace ones applies, so the tokens are the words. */
static int plain(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && !(c >= '0' && c <= '9') && c != ' ' && c != '\t') return 0;
    }
    return 1;
}

int txlm_wt103_tokenize(const char *text, size_t len, int lower_case, wt_buf *out)
{
    if (!lower_case && plain(text, len)) {
        out->n = 0;
        for (size_t i = 0; i < len;) {
            while (i < len && (text[i] == ' ' || text[i] == '\t')) i++;
            size_t b = i;
            while (i < len && text[i] != ' ' && text[i] != '\t') i++;
            if (i > b && ((out->n && wt_buf_putc(out, ' ')) || wt_buf_put(out, text + b, i - b))) return -1;
        }
        return 0;
    }
    line L = {{0}, {0}};
    protect P;
    int rc = -1;
    if (wt_buf_put(&L.a, text, len)) goto done;
    strip(&L.a);
    if (L.a.n == 0) { /* nothing left (and, for an empty line, no buffer: the rules' memchr must not see NULL) */
        out->n = 0;
        rc = 0;
        goto done;
    }
    if (lower_case) {
        wt_buf *o = &L.b;
        for (size_t i = 0, l; i < L.a.n; i += l) {
            char u[4];
            if (wt_buf_put(o, u, wt_utf8_encode(wt_to_lower(cp(&L.a, i, &l)), u))) goto done;
        }
        run(&L, WROTE);
    }
    if (normalise(&L) || tokenize_line(&L, &P) || split_numbers(&L.a, out)) goto done;
    rc = 0;
done:
    wt_buf_free(&L.a);
    wt_buf_free(&L.b);
    return rc;
}
