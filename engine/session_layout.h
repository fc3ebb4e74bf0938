/* A session's settings and the table of its device buffers (session_layout.c). */
#ifndef TXLM_SESSION_LAYOUT_H
#define TXLM_SESSION_LAYOUT_H

#include "session.h"

typedef struct txlm_buf_spec {
    txlm_buf *buf;
    uint64_t elems;     /* 4-byte elements; 0: not allocated */
    txlm_buf_kind kind;
    const char *what;   /* named in errors */
    int output;         /* the output layer's: a session allocates them when it first computes output itself */
} txlm_buf_spec;

/* The settings of a batch's shared rows: `rows` of them, no memory. */
static inline txlm_session_options txlm_rows_options(uint32_t rows)
{
    return (txlm_session_options){.mem_len = 1, .max_segment = rows, .same_length = -1};
}

/* Fills the settings of s (calloc'd or zeroed, s->rows_only set as
 * wanted) from the options and the model; allocates nothing. */
int txlm_session_settle(txlm_session *s, txlm_model *m, const txlm_session_options *opts, txlm_err *err);
/* The buffers held once per session, with their sizes for the settings. */
size_t txlm_session_bufs(txlm_session *s, txlm_buf_spec *out);
/* Bytes of a session's scores (its attention's scratch). */
uint64_t txlm_session_scores_bytes(const txlm_session *s);
/* Bytes of those buffers (with or without the output layer's). */
uint64_t txlm_session_fixed_bytes(txlm_session *s, int with_output);
/* Bytes of the memory: every layer's ring and position keys, the sinusoids. */
uint64_t txlm_session_ring_bytes(const txlm_session *s);
/* Allocates the table, the output layer's buffers only when rows_only
 * (txlm_session_need_out allocates them), and the memory unless rows_only. */
int txlm_session_alloc(txlm_session *s, txlm_err *err);
/* One buffer of elems 4-byte elements, refused past one binding's range. */
int txlm_session_alloc_buf(txlm_session *s, txlm_buf *b, uint64_t elems, txlm_buf_kind kind, const char *what,
                           txlm_err *err);

#endif
