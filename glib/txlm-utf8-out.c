/* Incremental UTF-8 with g_utf8_make_valid()'s replacements (txlm-utf8-out.h). */
#include <string.h>

#include "txlm-utf8-out.h"

#define REPLACEMENT "\xEF\xBF\xBD" /* U+FFFD */

/* buf[0..len) as make_valid would write it; unless final, a character that
 * may still be completed at the end is held instead. */
static void convert(txlm_utf8_out *u, const char *buf, gsize len, gboolean final, GString *out)
{
    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *valid_end;
        g_utf8_validate_len(p, (gsize)(end - p), &valid_end);
        g_string_append_len(out, p, valid_end - p);
        p = valid_end;
        if (p == end) break;
        /* a character is at most 4 bytes: with fewer left, the first bytes of
         * one the next piece may complete (glib also says -2 for the 5- and
         * 6-byte forms of old, which are never valid, and for a NUL) */
        if (!final && *p && end - p < 4 && g_utf8_get_char_validated(p, end - p) == (gunichar)-2) {
            u->n_held = (gsize)(end - p);
            memmove(u->held, p, u->n_held);
            return;
        }
        g_string_append(out, REPLACEMENT);
        p++;
    }
}

void txlm_utf8_out_push(txlm_utf8_out *u, const char *in, gsize len, GString *out)
{
    if (!u->n_held) {
        convert(u, in, len, FALSE, out);
        return;
    }
    char *buf = g_malloc(u->n_held + len);
    memcpy(buf, u->held, u->n_held);
    if (len) memcpy(buf + u->n_held, in, len);
    gsize n = u->n_held + len;
    u->n_held = 0;
    convert(u, buf, n, FALSE, out);
    g_free(buf);
}

void txlm_utf8_out_flush(txlm_utf8_out *u, GString *out)
{
    char held[4];
    gsize n = u->n_held;
    memcpy(held, u->held, n);
    u->n_held = 0;
    convert(u, held, n, TRUE, out);
}
