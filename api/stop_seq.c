/* Stop strings over streamed text (txlm_stopper_*). The text stops where a
 * stop string is first complete: at the first end position e where one
 * ends, cut before the longest one ending there. That depends on the text
 * only, not on how it was cut into pieces. Until then the text is let out
 * but for its longest tail that could still grow into a stop string, held
 * until a later push settles it; any stop string that completes later
 * starts inside that tail. Held text is shorter than the longest stop
 * string, so a push costs its length times the stop strings' total
 * length, however long the stream. */
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "txlm.h"
#include "txlm_api_error.h"

struct txlm_stopper {
    char **stop;
    size_t *stop_len, n_stop;
    char *pend;         /* the held tail, then the text pushed */
    char *out;          /* the piece handed out, NUL-terminated */
    size_t held, cap;
    int stopped;
};

void txlm_stopper_free(txlm_stopper *st)
{
    if (!st) return;
    for (size_t i = 0; st->stop && i < st->n_stop; i++) free(st->stop[i]);
    free(st->stop);
    free(st->stop_len);
    free(st->pend);
    free(st->out);
    free(st);
}

static txlm_status oom(void)
{
    txlm_err e = {0};
    txlm_fail(&e, TXLM_ERR_OUT_OF_MEMORY, "stop strings: out of host memory");
    return txlm_api_fail(&e);
}

txlm_status txlm_stopper_create(const char *const *stops, size_t n, txlm_stopper **out)
{
    if (out) *out = NULL;
    if (!out || (!stops && n)) return txlm_api_bad_arg("txlm_stopper_create: NULL argument");
    for (size_t i = 0; i < n; i++)
        if (!stops[i] || !*stops[i]) return txlm_api_bad_arg("txlm_stopper_create: a stop string is NULL or empty");
    txlm_stopper *st = calloc(1, sizeof *st);
    if (!st || !(st->stop = calloc(n + 1, sizeof *st->stop)) || !(st->stop_len = calloc(n + 1, sizeof *st->stop_len)))
        return txlm_stopper_free(st), oom();
    st->n_stop = n;
    for (size_t i = 0; i < n; i++) {
        st->stop_len[i] = strlen(stops[i]);
        if (!(st->stop[i] = malloc(st->stop_len[i] + 1))) return txlm_stopper_free(st), oom();
        memcpy(st->stop[i], stops[i], st->stop_len[i] + 1);
    }
    *out = st;
    return TXLM_OK;
}

/* The start of the longest stop string ending at t[e], or -1. */
static long stop_ending(const txlm_stopper *st, const char *t, size_t e)
{
    long start = -1;
    for (size_t i = 0; i < st->n_stop; i++) {
        size_t l = st->stop_len[i];
        if (l <= e && !memcmp(st->stop[i], t + e - l, l) && (start < 0 || (size_t)start > e - l)) start = (long)(e - l);
    }
    return start;
}

/* Whether t[0..len) is shorter than some stop string and starts it. */
static int starts_stop(const txlm_stopper *st, const char *t, size_t len)
{
    for (size_t i = 0; i < st->n_stop; i++)
        if (len < st->stop_len[i] && !memcmp(st->stop[i], t, len)) return 1;
    return 0;
}

static int reserve(txlm_stopper *st, size_t need)
{
    if (need <= st->cap) return 0;
    size_t cap = st->cap ? st->cap : 64;
    while (cap < need) cap *= 2;
    char *p = realloc(st->pend, cap), *o = p ? realloc(st->out, cap) : NULL;
    if (p) st->pend = p;
    if (o) st->out = o;
    if (!p || !o) return -1;
    st->cap = cap;
    return 0;
}

/* Hands out pend[0..n) and keeps pend[keep..total) held. */
static void hand_out(txlm_stopper *st, size_t n, size_t keep, size_t total, const char **piece, size_t *len)
{
    memcpy(st->out, st->pend, n);
    st->out[n] = 0;
    memmove(st->pend, st->pend + keep, total - keep);
    st->held = total - keep;
    *piece = st->out;
    if (len) *len = n;
}

txlm_status txlm_stopper_push(txlm_stopper *st, const char *text, size_t n, const char **piece, size_t *len, int *stopped)
{
    if (!st || (!text && n) || !piece) return txlm_api_bad_arg("txlm_stopper_push: NULL argument");
    size_t total = st->held;
    if (reserve(st, total + (st->stopped ? 0 : n) + 1)) return oom();
    if (!st->stopped) memcpy(st->pend + total, text, n), total += n;
    size_t out = total, keep = total;
    for (size_t e = st->held + 1; !st->stopped && e <= total; e++) {
        long start = stop_ending(st, st->pend, e);
        if (start >= 0) st->stopped = 1, out = (size_t)start;
    }
    if (!st->stopped)
        for (out = keep = 0; keep < total && !starts_stop(st, st->pend + keep, total - keep);) out = ++keep;
    hand_out(st, out, keep, total, piece, len);
    if (stopped) *stopped = st->stopped;
    return TXLM_OK;
}

txlm_status txlm_stopper_flush(txlm_stopper *st, const char **piece, size_t *len)
{
    if (!st || !piece) return txlm_api_bad_arg("txlm_stopper_flush: NULL argument");
    if (reserve(st, st->held + 1)) return oom();
    size_t held = st->held;
    hand_out(st, held, held, held, piece, len);
    st->stopped = 0;
    return TXLM_OK;
}

void txlm_stopper_reset(txlm_stopper *st)
{
    if (st) st->held = 0, st->stopped = 0;
}
