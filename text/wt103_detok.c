/* WikiText-103 tokens -> text: the Moses English detokenizer as
 * sacremoses implements it (what HuggingFace's TransfoXLTokenizer uses),
 * then the number joins ("1 @,@ 000" -> "1,000"). */
#include <stdlib.h>
#include <string.h>

#include "wt103.h"

typedef struct span {
    const char *p;
    size_t n;
} span;

static int all_of(span t, int (*ok)(uint32_t))
{
    size_t len;
    for (size_t i = 0; i < t.n; i += len)
        if (!ok(wt_utf8(t.p + i, t.n - i, &len))) return 0;
    return t.n > 0;
}

static int opener(uint32_t c) { return wt_is_currency(c) || (c < 0x80 && strchr("([{", (int)c) && c) || c == 0xBF || c == 0xA1; }
static int closer(uint32_t c) { return c && c < 0x80 && strchr(",.?!:;\\%}])", (int)c); }
static int quote(uint32_t c) { return (c && c < 0x80 && strchr("'\"`", (int)c)) || c == 0x201E || c == 0x201C; }
static int curly(uint32_t c) { return c == 0x201E || c == 0x201C || c == 0x201D; }

static int strstr_n(const char *s, size_t n, const char *pat)
{
    size_t m = strlen(pat);
    for (size_t i = 0; i + m <= n; i++)
        if (!memcmp(s + i, pat, m)) return 1;
    return 0;
}

static uint32_t last_cp(span t)
{
    size_t k = t.n - 1, len;
    while (k > 0 && ((unsigned char)t.p[k] & 0xC0) == 0x80) k--;
    return wt_utf8(t.p + k, t.n - k, &len);
}

static int *quote_count(wt_quotes *q, span t)
{
    for (int i = 0; i < q->n; i++)
        if (strlen(q->key[i]) == t.n && !memcmp(q->key[i], t.p, t.n)) return &q->count[i];
    if (q->n == 8 || t.n >= sizeof q->key[0]) return &q->count[7]; /* long runs of quotes share one count */
    memcpy(q->key[q->n], t.p, t.n);
    q->key[q->n][t.n] = 0;
    q->count[q->n] = 0;
    return &q->count[q->n++];
}

void wt_moses_init(wt_moses *m)
{
    memset(m, 0, sizeof *m);
    m->pre = " ";
}

int wt_moses_token(wt_moses *m, const char *p, size_t n, wt_buf *out)
{
    span k = {p, n};
    size_t len;
    uint32_t first = wt_utf8(k.p, k.n, &len);
    int glue_left = 0; /* no space before this token */
    const char *next_pre = " ";
    if (wt_is_cjk(first)) {
        glue_left = m->i > 0 && wt_is_cjk(m->prev_last);
    } else if (all_of(k, opener)) {
        next_pre = "";
    } else if (all_of(k, closer)) {
        glue_left = 1;
    } else if (m->i > 0 && k.p[0] == '\'' && k.n > 1 && wt_is_detok_alpha(wt_utf8(k.p + 1, k.n - 1, &len))) {
        glue_left = 1; /* English contractions: 's, 're, ... */
    } else if (all_of(k, quote)) {
        span key = all_of(k, curly) ? (span){"\"", 1} : k;
        int *c = quote_count(&m->q, key);
        if (*c % 2 == 0) {
            if (k.n == 1 && k.p[0] == '\'' && m->i > 0 && m->prev_byte == 's') {
                glue_left = 1; /* the Joneses' house */
            } else {
                next_pre = "";
                (*c)++;
            }
        } else {
            glue_left = 1;
            (*c)++;
        }
    }
    if ((!glue_left && wt_buf_put(out, m->pre, strlen(m->pre))) || wt_buf_put(out, k.p, k.n)) return -1;
    m->pre = next_pre;
    m->prev_last = last_cp(k);
    m->prev_byte = k.p[k.n - 1];
    m->i++;
    return 0;
}

static int replace_all(wt_buf *s, const char *from, const char *to)
{
    size_t fl = strlen(from), tl = strlen(to);
    wt_buf o = {0};
    size_t i = 0;
    while (i < s->n) {
        if (i + fl <= s->n && !memcmp(s->p + i, from, fl)) {
            if (wt_buf_put(&o, to, tl)) return wt_buf_free(&o), -1;
            i += fl;
        } else if (wt_buf_putc(&o, s->p[i++])) return wt_buf_free(&o), -1;
    }
    wt_buf_free(s);
    *s = o;
    return 0;
}

const char *const wt_unescape[WT_UNESCAPE_N][2] = {
    {" @-@ ", "-"}, {"&bar;", "|"}, {"&#124;", "|"}, {"&lt;", "<"},  {"&gt;", ">"},   {"&bra;", "["},
    {"&ket;", "]"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&#91;", "["}, {"&#93;", "]"}, {"&amp;", "&"},
};

int txlm_wt103_detokenize(const char *const *tok, const size_t *tok_len, size_t n, wt_buf *out)
{
    wt_buf text = {0}, res = {0};
    span *t = NULL;
    int rc = -1;
    if (wt_buf_putc(&text, ' ')) goto done;
    for (size_t i = 0; i < n; i++)
        if ((i && wt_buf_putc(&text, ' ')) || wt_buf_put(&text, tok[i], tok_len[i])) goto done;
    if (wt_buf_putc(&text, ' ')) goto done;
    for (size_t k = 0; k < WT_UNESCAPE_N; k++)
        if (replace_all(&text, wt_unescape[k][0], wt_unescape[k][1])) goto done;

    /* split on whitespace */
    size_t nt = 0, len;
    t = malloc((text.n / 2 + 1) * sizeof *t);
    if (!t) goto done;
    for (size_t i = 0; i < text.n;) {
        while (i < text.n && wt_is_space(wt_utf8(text.p + i, text.n - i, &len))) i += len;
        size_t b = i;
        while (i < text.n && !wt_is_space(wt_utf8(text.p + i, text.n - i, &len))) i += len;
        if (i > b) t[nt++] = (span){text.p + b, i - b};
    }

    wt_moses m;
    wt_moses_init(&m);
    for (size_t i = 0; i < nt; i++)
        if (wt_moses_token(&m, t[i].p, t[i].n, &res)) goto done;
    /* " {2,}" -> " ", strip, then the number joins, strip */
    while (strstr_n(res.p, res.n, "  "))
        if (replace_all(&res, "  ", " ")) goto done;
    while (res.n && res.p[0] == ' ') memmove(res.p, res.p + 1, --res.n);
    while (res.n && res.p[res.n - 1] == ' ') res.n--;
    if (replace_all(&res, " @,@ ", ",") || replace_all(&res, " @.@ ", ".")) goto done;
    while (res.n && res.p[0] == ' ') memmove(res.p, res.p + 1, --res.n);
    while (res.n && res.p[res.n - 1] == ' ') res.n--;
    rc = wt_buf_put(out, res.p, res.n);
done:
    free(t);
    wt_buf_free(&text);
    wt_buf_free(&res);
    return rc;
}
