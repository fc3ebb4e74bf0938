/* vocab.txt with a note of what was removed besides the line feeds (a
 * byte-order mark, carriage returns before line feeds), for the packer to
 * show; pack.h declares the forms without it. */
#ifndef TXLM_VOCAB_TXT_H
#define TXLM_VOCAB_TXT_H

#include <stddef.h>
#include <stdint.h>

#include "pack.h"

/* As txlm_vocab_load_txt / txlm_vocab_parse_txt; note (note_cap bytes)
 * receives one line, or "" when the file needed nothing removed. */
int txlm_vocab_load_txt_noted(const char *path, txlm_vocab_buf *out, char *note, size_t note_cap, txlm_err *err);
int txlm_vocab_parse_txt_noted(const char *where, char *text, uint32_t len, txlm_vocab_buf *out, char *note, size_t note_cap,
                               txlm_err *err);

#endif
