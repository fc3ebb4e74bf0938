/* Tokenizers: whitespace-separated words (with <unk> and <eos>), one
 * symbol per byte (enwik8), one symbol per character with '_' for space
 * (text8). Symbols are looked up in an index filled once when the
 * tokenizer is built and only read afterwards, so one tokenizer serves any
 * number of threads at once. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sym_index.h"
#include "tokenizer.h"
#include "txlm_layout.h"
#include "wt103.h"
#include "txlm.h"

struct txlm_tokenizer {
    const txlm_vocab *v;
    txlm_sym_index index;   /* symbol -> id (the first of equal symbols) */
    int32_t byte_id[256];   /* character models: byte -> id, -1 if absent */
    int decimal;            /* character symbols are decimal byte values */
};

typedef struct id_list {
    int32_t *a;
    size_t n, cap;
} id_list;

static int push(id_list *l, int32_t id, txlm_err *err)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        int32_t *a = realloc(l->a, cap * sizeof *a);
        if (!a) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "tokenizer: out of memory");
        l->a = a;
        l->cap = cap;
    }
    l->a[l->n++] = id;
    return 0;
}

/* Which byte a character-model symbol stands for: the byte itself, or (as
 * the enwik8 preprocessing writes them) its decimal value; -1 if neither.
 * In a vocabulary of decimal values ("decimal") "7" is byte 7, not '7'. */
static int symbol_byte(const char *s, uint32_t len, int text8, int decimal)
{
    int b = 0, digits = len > 0 && len <= 3;
    for (uint32_t i = 0; digits && i < len; i++) {
        digits = isdigit((unsigned char)s[i]);
        b = b * 10 + (s[i] - '0');
    }
    if (digits && (decimal || len > 1)) return b < 256 ? b : -1;
    if (len == 1) return text8 && s[0] == '_' ? ' ' : (unsigned char)s[0];
    return -1;
}

static int is_decimal_vocab(const txlm_vocab *v)
{
    for (uint32_t i = 0; i < v->n; i++) {
        uint32_t len;
        const char *s = txlm_vocab_sym(v, i, &len);
        if (len >= 2 && len <= 3 && isdigit((unsigned char)s[0]) && symbol_byte(s, len, 0, 1) >= 0) return 1;
    }
    return 0;
}

static const char *vocab_key(const void *ctx, uint32_t id, size_t *len)
{
    uint32_t l;
    const char *s = txlm_vocab_sym(ctx, id, &l);
    *len = l;
    return s;
}

int txlm_tok_create(const txlm_vocab *v, txlm_tokenizer **out, txlm_err *err)
{
    txlm_tokenizer *t = calloc(1, sizeof *t);
    if (!t || txlm_sym_index_init(&t->index, v->n, vocab_key, v)) {
        free(t);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "tokenizer: out of memory");
    }
    t->v = v;
    for (int b = 0; b < 256; b++) t->byte_id[b] = -1;
    t->decimal = v->kind != TXLM_TOK_WORD && is_decimal_vocab(v);
    for (uint32_t i = 0; i < v->n; i++) {
        txlm_sym_index_add(&t->index, i); /* a repeated symbol keeps its first id */
        if (v->kind != TXLM_TOK_WORD) {
            uint32_t len;
            const char *s = txlm_vocab_sym(v, i, &len);
            int b = symbol_byte(s, len, v->kind == TXLM_TOK_CHAR_TEXT8, t->decimal);
            if (b >= 0 && t->byte_id[b] < 0) t->byte_id[b] = (int32_t)i;
        }
    }
    *out = t;
    return 0;
}

void txlm_tok_free(txlm_tokenizer *t)
{
    if (!t) return;
    txlm_sym_index_free(&t->index);
    free(t);
}

int32_t txlm_tok_find(const txlm_tokenizer *t, const char *s, size_t len)
{
    return (int32_t)txlm_sym_index_find(&t->index, s, len);
}

size_t txlm_tok_host_bytes(const txlm_tokenizer *t) { return sizeof *t + (size_t)(t->index.mask + 1) * sizeof *t->index.slot; }

static int32_t lookup(const txlm_tokenizer *t, const char *w, size_t len)
{
    char key[TXLM_VOCB_MAX_SYM + 1];
    if (len >= sizeof key) return t->v->unk_id;
    if (t->v->flags & TXLM_VOCAB_LOWER_CASE) {
        for (size_t i = 0; i < len; i++) key[i] = (char)tolower((unsigned char)w[i]);
        w = key;
    }
    int64_t id = txlm_sym_index_find(&t->index, w, len);
    return id >= 0 ? (int32_t)id : t->v->unk_id;
}

/* isspace() of the C locale, without the call. */
static int blank(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

static int encode_words(const txlm_tokenizer *t, const char *s, size_t len, id_list *l, txlm_err *err)
{
    size_t i = 0;
    /* lm1b's <S> words <S>: a line's first byte opens it (a last line without \n stays open) */
    int opens = (t->v->flags & TXLM_VOCAB_LINE_START_EOS) && t->v->eos_id >= 0, line_start = 1;
    while (i < len) {
        if (opens && line_start && push(l, t->v->eos_id, err)) return -1;
        line_start = s[i] == '\n';
        if (s[i] == '\n') {
            if (t->v->eos_id >= 0 && push(l, t->v->eos_id, err)) return -1;
            i++;
            continue;
        }
        if (blank((unsigned char)s[i])) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < len && !blank((unsigned char)s[j])) j++;
        int32_t id = lookup(t, s + i, j - i);
        if (id < 0)
            return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "word \"%.*s\" at byte %zu is not in the vocabulary, which has no <unk>",
                             (int)(j - i > 64 ? 64 : j - i), s + i, i);
        if (push(l, id, err)) return -1;
        i = j;
    }
    return 0;
}

/* wt103 vocabularies: each line goes through the WikiText-103 rules first. */
static int encode_wt103(const txlm_tokenizer *t, const char *s, size_t len, id_list *l, txlm_err *err)
{
    wt_buf toks = {0};
    int rc = 0;
    for (size_t i = 0; i < len && !rc;) {
        const char *nl = memchr(s + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - s) : len;
        if (txlm_wt103_tokenize(s + i, e - i, (t->v->flags & TXLM_VOCAB_LOWER_CASE) != 0, &toks)) {
            rc = txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "tokenizer: out of memory");
            break;
        }
        for (size_t a = 0; a < toks.n && !rc;) {
            size_t b = a;
            while (b < toks.n && toks.p[b] != ' ') b++;
            int32_t id = lookup(t, toks.p + a, b - a);
            if (id < 0)
                rc = txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT,
                               "word \"%.*s\" of the line at byte %zu is not in the vocabulary, which has no <unk>",
                               (int)(b - a > 64 ? 64 : b - a), toks.p + a, i);
            else rc = push(l, id, err);
            a = b + 1;
        }
        if (!rc && nl && t->v->eos_id >= 0) rc = push(l, t->v->eos_id, err);
        i = e + 1;
    }
    wt_buf_free(&toks);
    return rc ? -1 : 0;
}

static int encode_chars(const txlm_tokenizer *t, const char *s, size_t len, id_list *l, txlm_err *err)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char b = (unsigned char)s[i];
        int32_t id = t->byte_id[b];
        if (b == '\n' && id < 0) id = t->v->eos_id;
        if (id < 0) id = t->v->unk_id;
        if (id < 0)
            return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "byte 0x%02x at offset %zu has no symbol in the vocabulary", b, i);
        if (push(l, id, err)) return -1;
    }
    return 0;
}

int txlm_tok_encode(txlm_tokenizer *t, const char *text, size_t len, int32_t **ids, size_t *n, txlm_err *err)
{
    id_list l = {0};
    int rc = t->v->kind != TXLM_TOK_WORD          ? encode_chars(t, text, len, &l, err)
             : t->v->flags & TXLM_VOCAB_WT103_NORM ? encode_wt103(t, text, len, &l, err)
                                                   : encode_words(t, text, len, &l, err);
    if (rc) {
        free(l.a);
        return err && err->code ? err->code : TXLM_ERR_INVALID_ARGUMENT;
    }
    *ids = l.a;
    *n = l.n;
    return 0;
}

/* wt103: each line's tokens go through the reverse rules. */
static int decode_wt103(const txlm_vocab *v, const int32_t *ids, size_t n, char **text, txlm_err *err)
{
    wt_buf out = {0};
    const char **sym = malloc((n ? n : 1) * sizeof *sym);
    size_t *len = malloc((n ? n : 1) * sizeof *len), k = 0;
    int bad = !sym || !len;
    for (size_t i = 0; i <= n && !bad; i++) {
        if (i < n && ids[i] != v->eos_id) {
            uint32_t l;
            sym[k] = txlm_vocab_sym(v, (uint32_t)ids[i], &l);
            len[k++] = l;
            continue;
        }
        bad = txlm_wt103_detokenize(sym, len, k, &out) || (i < n && wt_buf_putc(&out, '\n'));
        k = 0;
    }
    free(sym);
    free(len);
    if (bad || wt_buf_cstr(&out)) {
        wt_buf_free(&out);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "detokenize: out of memory");
    }
    *text = out.p;
    return 0;
}

const txlm_vocab *txlm_tok_vocab(const txlm_tokenizer *t) { return t->v; }

int txlm_tok_char_byte(const txlm_tokenizer *t, int32_t id)
{
    uint32_t len;
    const char *s = txlm_vocab_sym(t->v, (uint32_t)id, &len);
    return id == t->v->eos_id ? '\n' : symbol_byte(s, len, t->v->kind == TXLM_TOK_CHAR_TEXT8, t->decimal);
}

int txlm_tok_decode(txlm_tokenizer *t, const int32_t *ids, size_t n, char **text, txlm_err *err)
{
    const txlm_vocab *v = t->v;
    size_t cap = 1;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || (uint32_t)ids[i] >= v->n)
            return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "token %d at position %zu is outside the vocabulary [0, %u)",
                             ids[i], i, v->n);
        cap += (size_t)(v->offsets[ids[i] + 1] - v->offsets[ids[i]]) + 1;
    }
    if (v->kind == TXLM_TOK_WORD && (v->flags & TXLM_VOCAB_WT103_NORM)) return decode_wt103(v, ids, n, text, err);
    char *out = malloc(cap), *w = out;
    if (!out) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "detokenize: out of memory");
    int open = 0; /* TXLM_VOCAB_LINE_START_EOS: <eos> alternately opens a line (nothing written) and ends it */
    for (size_t i = 0; i < n; i++) {
        uint32_t len;
        const char *s = txlm_vocab_sym(v, (uint32_t)ids[i], &len);
        if (v->kind == TXLM_TOK_WORD) {
            if (ids[i] == v->eos_id && (v->flags & TXLM_VOCAB_LINE_START_EOS) && !open) {
                open = 1;
                continue;
            }
            if (ids[i] == v->eos_id) {
                *w++ = '\n';
                open = 0;
                continue;
            }
            if (w > out && w[-1] != '\n') *w++ = ' ';
            memcpy(w, s, len);
            w += len;
        } else {
            int b = txlm_tok_char_byte(t, ids[i]);
            if (b >= 0) *w++ = (char)b;
            else {
                memcpy(w, s, len);
                w += len;
            }
        }
    }
    *w = 0;
    *text = out;
    return 0;
}
