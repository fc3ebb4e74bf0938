/* Bytes in, UTF-8 text out, piece by piece: what a byte-level model
 * generates need not be UTF-8 (a character's bytes come in separate
 * tokens, or never make a character), and a GObject string must be. A
 * character split across pieces is held until it is complete; bytes that
 * cannot be UTF-8 become U+FFFD, one each. Put together, the pieces out
 * are g_utf8_make_valid() of all the bytes in. Private. */
#ifndef TXLM_UTF8_OUT_H
#define TXLM_UTF8_OUT_H

#include <glib.h>

typedef struct {
    char held[4]; /* the start of a character not yet complete */
    gsize n_held;
} txlm_utf8_out;

/* Appends to out the text of held + in[0..len) that is final. */
void txlm_utf8_out_push(txlm_utf8_out *u, const char *in, gsize len, GString *out);
/* The end: what was held, each byte as U+FFFD; u starts over. */
void txlm_utf8_out_flush(txlm_utf8_out *u, GString *out);

#endif
