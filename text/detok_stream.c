/* Streaming detokenization. Word and character models write each token's
 * text at once (a word model's space before it depends only on the last
 * byte written). wt103 models hold text back: a line's tokens go through
 * the same stages as txlm_wt103_detokenize, each one fed as its input
 * arrives and holding only what the next bytes can still change:
 *
 *   " " + symbol per token, " " at the line's end
 *   -> the dash joins and XML entities (at most one pattern's length held)
 *   -> whitespace-separated tokens (the token being read held: the next
 *      token may be "@-@", which joins it to the one after)
 *   -> the Moses pass, one token at a time (wt_moses_token, shared with the
 *      batch form), the line's leading space dropped
 *   -> " @,@ " -> ",", then " @.@ " -> "." (four bytes held each).
 *
 * <eos> ends the line: everything held is written, then "\n". */
#include <stdlib.h>
#include <string.h>

#include "detok_stream.h"
#include "txlm.h"
#include "wt103.h"

/* Bytes that may still begin a pattern. */
typedef struct held {
    char b[8];
    size_t n;
} held;

struct txlm_detokenizer {
    const txlm_tokenizer *t;
    const txlm_vocab *v;
    int wt103;
    wt_buf out;   /* the piece of this call */
    int wrote;    /* word models: anything written yet, and its last byte */
    char last;
    int open;     /* TXLM_VOCAB_LINE_START_EOS: an <eos> opened the line (txlm_tok_decode) */
    /* wt103 models, within one line */
    held esc;     /* dash joins and entities */
    char raw[4];  /* a code point's bytes until all have come */
    size_t raw_n;
    wt_buf tok;   /* the token being read */
    wt_buf spaced; /* the Moses pass's output for one token */
    wt_moses moses;
    int started;  /* the line's text has begun */
    held num[2];  /* " @,@ ", " @.@ " */
    uint64_t work; /* bytes the stages examined (txlm_detok_work) */
};

static const char *const num_pat[2][2] = {{" @,@ ", ","}, {" @.@ ", "."}};

typedef int (*sink)(txlm_detok *d, char c);

static int put_all(txlm_detok *d, const char *s, sink next)
{
    for (; *s; s++)
        if (next(d, *s)) return -1;
    return 0;
}

/* Replaces whole patterns as they complete, passes on every byte that can
 * no longer begin one; with `final` (no more input) nothing waits. */
static int held_run(txlm_detok *d, held *h, const char *const (*pat)[2], size_t np, int final, sink next)
{
    while (h->n) {
        d->work += h->n * np;
        int prefix = 0;
        for (size_t k = 0; k < np; k++) {
            size_t m = strlen(pat[k][0]);
            if (h->n > m || memcmp(h->b, pat[k][0], h->n)) continue;
            if (h->n == m) {
                h->n = 0;
                return put_all(d, pat[k][1], next);
            }
            prefix = 1;
        }
        if (prefix && !final) return 0;
        char first = h->b[0];
        memmove(h->b, h->b + 1, --h->n);
        if (next(d, first)) return -1;
    }
    return 0;
}

static int out_byte(txlm_detok *d, char c) { return d->work++, wt_buf_putc(&d->out, c); }

static int num1_byte(txlm_detok *d, char c)
{
    d->num[1].b[d->num[1].n++] = c;
    return held_run(d, &d->num[1], num_pat + 1, 1, 0, out_byte);
}

static int num0_byte(txlm_detok *d, char c)
{
    d->num[0].b[d->num[0].n++] = c;
    return held_run(d, &d->num[0], num_pat, 1, 0, num1_byte);
}

/* The token read so far is complete: its spacing, then the number joins. */
static int end_token(txlm_detok *d)
{
    if (!d->tok.n) return 0;
    d->spaced.n = 0;
    if (wt_moses_token(&d->moses, d->tok.p, d->tok.n, &d->spaced)) return -1;
    d->work += d->tok.n + d->spaced.n;
    d->tok.n = 0;
    for (size_t i = 0; i < d->spaced.n; i++) {
        if (!d->started && d->spaced.p[i] == ' ') continue;
        d->started = 1;
        if (num0_byte(d, d->spaced.p[i])) return -1;
    }
    return 0;
}

/* Whole code points split the text into tokens at whitespace. */
static int cp_run(txlm_detok *d, int final)
{
    while (d->raw_n) {
        unsigned char u = (unsigned char)d->raw[0];
        size_t need = u < 0x80 ? 1 : u >= 0xF0 && u < 0xF5 ? 4 : u >= 0xE0 ? 3 : u >= 0xC2 ? 2 : 1, len;
        if (d->raw_n < need && !final) return 0;
        uint32_t c = wt_utf8(d->raw, d->raw_n, &len);
        d->work += len;
        if (wt_is_space(c) ? end_token(d) : wt_buf_put(&d->tok, d->raw, len)) return -1;
        memmove(d->raw, d->raw + len, d->raw_n -= len);
    }
    return 0;
}

static int cp_byte(txlm_detok *d, char c)
{
    d->raw[d->raw_n++] = c;
    return cp_run(d, 0);
}

static int esc_byte(txlm_detok *d, char c)
{
    d->esc.b[d->esc.n++] = c;
    return held_run(d, &d->esc, wt_unescape, WT_UNESCAPE_N, 0, cp_byte);
}

static void new_line(txlm_detok *d)
{
    d->esc.n = d->raw_n = d->tok.n = d->num[0].n = d->num[1].n = 0;
    d->started = 0;
    wt_moses_init(&d->moses);
}

/* The line's closing space, then everything held, in stage order. */
static int end_line(txlm_detok *d)
{
    int rc = esc_byte(d, ' ') || held_run(d, &d->esc, wt_unescape, WT_UNESCAPE_N, 1, cp_byte) || cp_run(d, 1) ||
             end_token(d) || held_run(d, &d->num[0], num_pat, 1, 1, num1_byte) ||
             held_run(d, &d->num[1], num_pat + 1, 1, 1, out_byte);
    new_line(d);
    return rc ? -1 : 0;
}

static int push_wt103(txlm_detok *d, int32_t id, const char *s, uint32_t len)
{
    if (id == d->v->eos_id) return end_line(d) || out_byte(d, '\n') ? -1 : 0;
    if (esc_byte(d, ' ')) return -1;
    for (uint32_t i = 0; i < len; i++)
        if (esc_byte(d, s[i])) return -1;
    return 0;
}

/* As txlm_tok_decode: <eos> is "\n", a space before a word unless it starts the text or a line. */
static int push_word(txlm_detok *d, int32_t id, const char *s, uint32_t len)
{
    if (id == d->v->eos_id && (d->v->flags & TXLM_VOCAB_LINE_START_EOS) && !d->open) return d->open = 1, 0;
    if (id == d->v->eos_id) {
        d->wrote = 1, d->last = '\n', d->open = 0;
        return out_byte(d, '\n');
    }
    if (d->wrote && d->last != '\n') {
        if (out_byte(d, ' ')) return -1;
        d->last = ' ';
    }
    if (len) d->wrote = 1, d->last = s[len - 1];
    d->work += len;
    return wt_buf_put(&d->out, s, len);
}

int txlm_detok_create(const txlm_tokenizer *t, txlm_detok **out, txlm_err *err)
{
    txlm_detok *d = calloc(1, sizeof *d);
    if (!d) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "detokenizer: out of memory");
    d->t = t;
    d->v = txlm_tok_vocab(t);
    d->wt103 = d->v->kind == TXLM_TOK_WORD && (d->v->flags & TXLM_VOCAB_WT103_NORM);
    new_line(d);
    *out = d;
    return 0;
}

static int finish(txlm_detok *d, int rc, const char **piece, size_t *len, txlm_err *err)
{
    if (rc || wt_buf_cstr(&d->out)) {
        txlm_detok_reset(d);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "detokenizer: out of memory (the stream starts again)");
    }
    *piece = d->out.p;
    *len = d->out.n;
    return 0;
}

int txlm_detok_push(txlm_detok *d, int32_t id, const char **piece, size_t *len, txlm_err *err)
{
    if (id < 0 || (uint32_t)id >= d->v->n)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "token %d is outside the vocabulary [0, %u)", id, d->v->n);
    uint32_t sl;
    const char *s = txlm_vocab_sym(d->v, (uint32_t)id, &sl);
    d->out.n = 0;
    int rc;
    if (d->v->kind != TXLM_TOK_WORD) {
        int b = txlm_tok_char_byte(d->t, id);
        rc = b >= 0 ? out_byte(d, (char)b) : wt_buf_put(&d->out, s, sl);
    } else rc = d->wt103 ? push_wt103(d, id, s, sl) : push_word(d, id, s, sl);
    return finish(d, rc, piece, len, err);
}

int txlm_detok_flush(txlm_detok *d, const char **piece, size_t *len, txlm_err *err)
{
    d->out.n = 0;
    int rc = d->wt103 ? end_line(d) : 0;
    d->wrote = 0, d->last = 0;
    return finish(d, rc, piece, len, err);
}

void txlm_detok_reset(txlm_detok *d)
{
    d->wrote = 0, d->last = 0, d->open = 0;
    new_line(d);
}

uint64_t txlm_detok_work(const txlm_detok *d) { return d->work; }

size_t txlm_detok_held(const txlm_detok *d) { return d->out.cap + d->tok.cap + d->spaced.cap; }

void txlm_detok_free(txlm_detok *d)
{
    if (!d) return;
    wt_buf_free(&d->out);
    wt_buf_free(&d->tok);
    wt_buf_free(&d->spaced);
    free(d);
}
