/* Tokens with where they came from in the text, and the text's words
 * (the public txlm_tokenize_spans; token_spans.c). */
#ifndef TXLM_TOKEN_SPANS_H
#define TXLM_TOKEN_SPANS_H

#include "errmsg.h"
#include "tokenizer.h"
#include "txlm.h"

/* Fills *out (zeroed on failure; arrays malloc'd). */
int txlm_tok_spans(txlm_tokenizer *t, const char *text, size_t len, txlm_token_spans *out, txlm_err *err);
void txlm_tok_spans_free(txlm_token_spans *o);

#endif
