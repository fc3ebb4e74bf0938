/* Where each wt103 token came from in the raw line (txlm_tokenize_spans).
 *
 * The rules of wt103_norm.c change characters in few ways, and only these
 * (docs/tokenizers.md lists the rules):
 *   - whitespace and control characters vanish (a no-break space between
 *     two digits becomes "." first: "1 000" -> 1 @.@ 000);
 *   - a few characters are spelt another way: ` ´ ‘ ‚ ’ as ', „ “ ” « »
 *     as ", – — as -, … as ..., and with --lower-case every letter;
 *   - two adjacent apostrophes become one " (`` '' ‘’);
 *   - a " followed by commas and dots moves after them ("no". -> "no.");
 *   - the number and dash splits write @-@, @,@ and @.@ around - , .
 * Nothing else is added, removed or moved. So the tokens' characters, read
 * in order, are the line's characters with those changes, and each token's
 * characters can be walked back onto the line's: at every step exactly one
 * of the changes explains the next character of the tokens, decided by
 * that character itself (a " where the line has ' is a pair, a , where it
 * has " is a moved quote). Every character of the tokens is accounted for
 * or the walk stops; what it could not account for is reported, and those
 * tokens get the rest of the line (a guess). The 60 sentences of
 * tests/text/test_wt103.c and random lines of every rule's characters
 * (tests/text/test_spans.c) are traced exactly. */
#include <stdlib.h>
#include <string.h>

#include "wt103.h"

enum { TEXT, BLANK, QUOTE1, QUOTE2 }; /* QUOTE1: spelt ', QUOTE2: spelt " */

typedef struct unit {
    size_t b, e;    /* its bytes in the line */
    uint32_t c;     /* the code point as read (U+FFFD for a malformed byte) */
    int kind;
    char f[4];      /* what the rules make of it (lower-cased, respelt) */
    size_t fl;
} unit;

/* The characters the normaliser respells, and how. */
static const struct {
    uint32_t c;
    const char *to;
} respell[] = {
    {'`', "'"},    {0xB4, "'"},   {0x2018, "'"}, {0x201A, "'"}, {0x2019, "'"}, {0x201E, "\""},
    {0x201C, "\""}, {0x201D, "\""}, {0xAB, "\""},  {0xBB, "\""},  {0x2013, "-"}, {0x2014, "-"}, {0x2026, "..."},
};

static void read_unit(const char *line, size_t len, size_t at, int lower_case, unit *u)
{
    size_t l;
    uint32_t c = wt_utf8(line + at, len - at, &l);
    *u = (unit){.b = at, .e = at + l, .c = c, .kind = TEXT};
    if (lower_case) u->fl = wt_utf8_encode(wt_to_lower(c), u->f); /* as the rules re-encode it */
    else memcpy(u->f, line + at, u->fl = l);
    if (wt_is_space(c) || c < 0x20) u->kind = BLANK;
    for (size_t k = 0; k < sizeof respell / sizeof *respell; k++)
        if (respell[k].c == c) memcpy(u->f, respell[k].to, u->fl = strlen(respell[k].to));
    if (u->fl == 1 && u->f[0] == '\'') u->kind = QUOTE1;
    if (u->fl == 1 && u->f[0] == '"') u->kind = QUOTE2;
}

typedef struct walk {
    const unit *u;
    size_t nu;
    const char *ob;      /* the tokens' characters, without the @ of @-@ @,@ @.@ */
    const size_t *ot;    /* the token of each */
    size_t on;
    size_t *begin, *end; /* per token */
} walk;

static void mark(walk *w, size_t j, const unit *u)
{
    size_t k = w->ot[j];
    if (u->b < w->begin[k]) w->begin[k] = u->b;
    if (u->e > w->end[k]) w->end[k] = u->e;
}

/* The next unit after i that the rules keep next to it (a \r is removed first). */
static size_t next_kept(const walk *w, size_t i)
{
    do i++;
    while (i < w->nu && w->u[i].c == '\r');
    return i;
}

static int spelt(const unit *u, const char *o, size_t n) { return u->fl <= n && !memcmp(u->f, o, u->fl); }

static int commas_dots(const unit *u)
{
    for (size_t q = 0; q < u->fl; q++)
        if (u->f[q] != ',' && u->f[q] != '.') return 0;
    return 1;
}

/* The second apostrophe of a pair starting at unit i, or nu. */
static size_t partner(const walk *w, size_t i)
{
    if (w->u[i].kind != QUOTE1) return w->nu;
    size_t k = next_kept(w, i);
    return k < w->nu && w->u[k].kind == QUOTE1 ? k : w->nu;
}

/* A quote (unit i, or the pair i..p) that the tokens show after the run
 * of commas and dots that follows it in the line ("no". -> no . "). The
 * French quotes' no-break spaces are removed before the move. */
static int moved_quote(walk *w, size_t *i, size_t p, size_t *j)
{
    size_t k = *j;
    while (k < w->on && (w->ob[k] == ',' || w->ob[k] == '.')) k++;
    if (k == *j || k >= w->on || w->ob[k] != '"') return 0;
    size_t s = (p < w->nu ? p : *i) + 1;
    while (s < w->nu && (w->u[s].c == '\r' || w->u[s].c == 0xA0)) s++;
    for (size_t o = *j; o < k; s++) {
        if (s >= w->nu || !spelt(&w->u[s], w->ob + o, k - o) || !commas_dots(&w->u[s])) return 0;
        for (size_t q = 0; q < w->u[s].fl; q++) mark(w, o + q, &w->u[s]);
        o += w->u[s].fl;
    }
    mark(w, k, &w->u[*i]);
    if (p < w->nu) mark(w, k, &w->u[p]);
    *i = s;
    *j = k + 1;
    return 1;
}

/* One step: accounts for the next character(s) of the tokens, or returns 0. */
static int step(walk *w, size_t *i, size_t *j)
{
    const unit *u = &w->u[*i];
    if (u->kind == BLANK) {
        size_t n = next_kept(w, *i);
        if (u->c == 0xA0 && w->ob[*j] == '.' && n < w->nu && wt_is_digit(w->u[n].c)) mark(w, (*j)++, u);
        ++*i;
        return 1;
    }
    if (spelt(u, w->ob + *j, w->on - *j)) {
        for (size_t q = 0; q < u->fl; q++) mark(w, *j + q, u);
        *j += u->fl;
        ++*i;
        return 1;
    }
    size_t p = partner(w, *i);
    if (w->ob[*j] == '"' && p < w->nu) {
        mark(w, *j, u);
        mark(w, (*j)++, &w->u[p]);
        *i = p + 1;
        return 1;
    }
    if ((u->kind == QUOTE2 || p < w->nu) && moved_quote(w, i, p, j)) return 1;
    return 0;
}

/* The tokens' characters: each token's bytes, but a split's @-@, @,@ or
 * @.@ counts as its middle character only. */
static size_t token_chars(const char *toks, size_t tn, char *ob, size_t *ot)
{
    size_t on = 0, k = 0;
    for (size_t a = 0; a < tn; k++) {
        size_t b = a;
        while (b < tn && toks[b] != ' ') b++;
        int split = b - a == 3 && toks[a] == '@' && toks[a + 2] == '@' && strchr("-,.", toks[a + 1]);
        for (size_t q = split ? a + 1 : a; q < (split ? a + 2 : b); q++) ob[on] = toks[q], ot[on++] = k;
        a = b + 1;
    }
    return on;
}

long txlm_wt103_spans(const char *line, size_t len, int lower_case, const char *toks, size_t tn, size_t n, size_t *begin,
                      size_t *end)
{
    unit *u = malloc((len ? len : 1) * sizeof *u);
    char *ob = malloc(tn ? tn : 1);
    size_t *ot = malloc((tn ? tn : 1) * sizeof *ot);
    if (!u || !ob || !ot) {
        free(u), free(ob), free(ot);
        return -1;
    }
    walk w = {u, 0, ob, ot, token_chars(toks, tn, ob, ot), begin, end};
    for (size_t at = 0; at < len; at = u[w.nu++].e) read_unit(line, len, at, lower_case, &u[w.nu]);
    for (size_t k = 0; k < n; k++) begin[k] = len, end[k] = 0;
    size_t i = 0, j = 0;
    while (j < w.on && i < w.nu && step(&w, &i, &j)) {}
    /* What the walk could not account for goes to the tokens from there
     * on: the rest of the line. Characters left over after the last token
     * (which no rule removes) go to the last one. */
    while (j == w.on && i < w.nu && u[i].kind == BLANK) i++;
    size_t from = i < w.nu ? u[i].b : len, first = j < w.on ? ot[j] : i < w.nu && n ? n - 1 : n;
    long guessed = 0;
    for (size_t k = first; k < n; k++, guessed++) {
        if (begin[k] > from) begin[k] = from;
        end[k] = len;
    }
    free(u), free(ob), free(ot);
    return guessed;
}
