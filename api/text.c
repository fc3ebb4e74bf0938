/* The public text API: the model's tokenizer, built on first use. */
#include <stdlib.h>
#include <string.h>

#include "detok_stream.h"
#include "model_load.h"
#include "token_spans.h"
#include "tokenizer.h"
#include "txlm.h"
#include "txlm_api_error.h"

static int get_tokenizer(txlm_model *m, txlm_tokenizer **out, txlm_err *err)
{
    pthread_mutex_lock(&m->tok_lock);
    int rc = m->tok ? 0 : txlm_tok_create(&m->vocab, &m->tok, err);
    m->tok_free = txlm_tok_free;
    *out = m->tok;
    pthread_mutex_unlock(&m->tok_lock);
    return rc;
}

txlm_status txlm_tokenize(txlm_model *m, const char *text, size_t len, int32_t **ids, size_t *n)
{
    if (!m || (!text && len) || !ids || !n) return txlm_api_bad_arg("txlm_tokenize: NULL argument");
    txlm_err e = {0};
    txlm_tokenizer *t;
    if (get_tokenizer(m, &t, &e) || txlm_tok_encode(t, text ? text : "", len, ids, n, &e)) return txlm_api_fail(&e);
    return TXLM_OK;
}

txlm_status txlm_tokenize_spans(txlm_model *m, const char *text, size_t len, txlm_token_spans *out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!m || (!text && len) || !out) return txlm_api_bad_arg("txlm_tokenize_spans: NULL argument");
    txlm_err e = {0};
    txlm_tokenizer *t;
    if (get_tokenizer(m, &t, &e) || txlm_tok_spans(t, text ? text : "", len, out, &e)) return txlm_api_fail(&e);
    return TXLM_OK;
}

void txlm_token_spans_free(txlm_token_spans *t)
{
    if (t) txlm_tok_spans_free(t);
}

txlm_status txlm_detokenize(txlm_model *m, const int32_t *ids, size_t n, char **text)
{
    if (!m || (!ids && n) || !text) return txlm_api_bad_arg("txlm_detokenize: NULL argument");
    txlm_err e = {0};
    txlm_tokenizer *t;
    if (get_tokenizer(m, &t, &e) || txlm_tok_decode(t, ids, n, text, &e)) return txlm_api_fail(&e);
    return TXLM_OK;
}

const char *txlm_token_symbol(const txlm_model *m, int32_t id, size_t *len)
{
    if (!m || id < 0 || (uint32_t)id >= m->vocab.n) return NULL;
    uint32_t l;
    const char *s = txlm_vocab_sym(&m->vocab, (uint32_t)id, &l);
    if (len) *len = l;
    return s;
}

txlm_status txlm_token_id(txlm_model *m, const char *sym, size_t len, int32_t *id)
{
    if (id) *id = -1;
    if (!m || (!sym && len) || !id) return txlm_api_bad_arg("txlm_token_id: NULL argument");
    txlm_err e = {0};
    txlm_tokenizer *t;
    if (get_tokenizer(m, &t, &e)) return txlm_api_fail(&e);
    *id = txlm_tok_find(t, sym ? sym : "", len);
    return TXLM_OK;
}

uint32_t txlm_vocab_size(const txlm_model *m) { return m ? m->vocab.n : 0; }

void txlm_free(void *p) { free(p); }

txlm_status txlm_detokenizer_create(txlm_model *m, txlm_detokenizer **out)
{
    if (out) *out = NULL;
    if (!m || !out) return txlm_api_bad_arg("txlm_detokenizer_create: NULL argument");
    txlm_err e = {0};
    txlm_tokenizer *t;
    if (get_tokenizer(m, &t, &e) || txlm_detok_create(t, out, &e)) return txlm_api_fail(&e);
    return TXLM_OK;
}

static txlm_status piece_out(int rc, const txlm_err *e, const char *p, size_t l, const char **piece, size_t *len)
{
    if (rc) return txlm_api_fail(e);
    *piece = p;
    if (len) *len = l;
    return TXLM_OK;
}

txlm_status txlm_detokenizer_push(txlm_detokenizer *d, int32_t id, const char **piece, size_t *len)
{
    if (!d || !piece) return txlm_api_bad_arg("txlm_detokenizer_push: NULL argument");
    txlm_err e = {0};
    const char *p = NULL;
    size_t l = 0;
    int rc = txlm_detok_push(d, id, &p, &l, &e);
    return piece_out(rc, &e, p, l, piece, len);
}

txlm_status txlm_detokenizer_flush(txlm_detokenizer *d, const char **piece, size_t *len)
{
    if (!d || !piece) return txlm_api_bad_arg("txlm_detokenizer_flush: NULL argument");
    txlm_err e = {0};
    const char *p = NULL;
    size_t l = 0;
    int rc = txlm_detok_flush(d, &p, &l, &e);
    return piece_out(rc, &e, p, l, piece, len);
}

void txlm_detokenizer_reset(txlm_detokenizer *d)
{
    if (d) txlm_detok_reset(d);
}

void txlm_detokenizer_free(txlm_detokenizer *d) { txlm_detok_free(d); }
