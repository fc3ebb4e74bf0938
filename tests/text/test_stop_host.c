/* Host-only checks of generation's text side, against direct computations:
 *   stop strings (txlm_stopper_*): random texts over a small alphabet, cut
 *   into random pieces, with random sets of stop strings; the pieces out
 *   must be the text up to where a stop string is first complete (the
 *   first end position where one ends, before the longest ending there),
 *   whatever the cut, and nothing held once stopped;
 *   the repetition penalty's arithmetic (llama.cpp: positive values
 *   divided, negative multiplied, each distinct token once), on values of
 *   both signs, which the model's log-probabilities (<= 0) never reach. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample.h"
#include "txlm.h"

static int failures;
#define CHECK(c)                                                                  \
    do {                                                                          \
        if (!(c)) failures++, fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #c); \
    } while (0)

static uint64_t rng = 88172645463325252ull;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* Where the text stops: the first end position with a stop string ending
 * there, cut before the longest of them; len when none. */
static size_t direct_cut(const char *t, size_t len, char stops[][8], int n, int *stopped)
{
    for (size_t e = 1; e <= len; e++) {
        size_t best = 0;
        for (int i = 0; i < n; i++) {
            size_t l = strlen(stops[i]);
            if (l <= e && !memcmp(t + e - l, stops[i], l) && l > best) best = l;
        }
        if (best) return *stopped = 1, e - best;
    }
    return *stopped = 0, len;
}

static void random_cases(void)
{
    static const char alpha[] = "ab \n";
    int bad = 0, stops_seen = 0;
    for (int round = 0; round < 4000; round++) {
        char stops[4][8], text[64], got[80];
        int n = 1 + rnd(3);
        const char *ptrs[4];
        for (int i = 0; i < n; i++) {
            int l = 1 + rnd(4);
            for (int k = 0; k < l; k++) stops[i][k] = alpha[rnd(4)];
            stops[i][l] = 0;
            ptrs[i] = stops[i];
        }
        size_t len = rnd(40);
        for (size_t k = 0; k < len; k++) text[k] = alpha[rnd(4)];
        txlm_stopper *st = NULL;
        CHECK(txlm_stopper_create(ptrs, (size_t)n, &st) == TXLM_OK);
        if (!st) return;
        size_t at = 0, got_len = 0;
        int stopped = 0, want_stopped;
        while (at < len || rnd(3) == 0) { /* pieces of 0..5 bytes, some empty */
            size_t k = rnd(6);
            if (k > len - at) k = len - at;
            const char *piece;
            size_t pl;
            int now = 0;
            CHECK(txlm_stopper_push(st, text + at, k, &piece, &pl, &now) == TXLM_OK);
            CHECK(strlen(piece) == pl && (!stopped || pl == 0) && (now || !stopped));
            memcpy(got + got_len, piece, pl), got_len += pl;
            stopped = now;
            at += k;
            if (at == len && rnd(2)) break;
        }
        const char *rest;
        size_t rl;
        CHECK(txlm_stopper_flush(st, &rest, &rl) == TXLM_OK);
        CHECK(!stopped || rl == 0);
        memcpy(got + got_len, rest, rl), got_len += rl;
        size_t cut = direct_cut(text, len, stops, n, &want_stopped);
        stops_seen += want_stopped;
        if (got_len != cut || memcmp(got, text, cut) || stopped != want_stopped) {
            if (bad++ < 3) fprintf(stderr, "round %d: got %zu bytes (stopped %d), want %zu (%d)\n", round, got_len, stopped, cut, want_stopped);
        }
        /* after a flush it starts over: the whole text again, in one piece */
        const char *again;
        size_t al;
        int s2 = 0;
        CHECK(txlm_stopper_push(st, text, len, &again, &al, &s2) == TXLM_OK);
        CHECK(s2 == want_stopped && al <= cut && !memcmp(again, text, al));
        txlm_stopper_free(st);
    }
    printf("stop strings: 4000 random texts, %d stopped, %d differ from the direct computation\n", stops_seen, bad);
    CHECK(bad == 0 && stops_seen > 1000 && stops_seen < 3900);
}

static void refused(void)
{
    txlm_stopper *st = (txlm_stopper *)1;
    const char *empty[] = {"ok", ""}, *null[] = {NULL};
    CHECK(txlm_stopper_create(empty, 2, &st) == TXLM_ERR_INVALID_ARGUMENT && st == NULL);
    CHECK(txlm_stopper_create(null, 1, &st) == TXLM_ERR_INVALID_ARGUMENT);
    CHECK(txlm_stopper_create(NULL, 0, &st) == TXLM_OK && st);
    const char *p;
    size_t l = 9;
    CHECK(txlm_stopper_push(st, "abc", 3, &p, &l, NULL) == TXLM_OK && l == 3 && !strcmp(p, "abc"));
    CHECK(txlm_stopper_push(st, NULL, 3, &p, &l, NULL) == TXLM_ERR_INVALID_ARGUMENT);
    txlm_stopper_free(st);
    txlm_stopper_free(NULL);
}

static void penalty(void)
{
    float lp[6] = {2.0f, -2.0f, 0.0f, 3.0f, -0.5f, 1.0f}, want[6] = {2.0f / 1.5f, -3.0f, 0.0f, 3.0f, -0.75f, 1.0f};
    int32_t window[] = {0, 1, 1, 4, 2, 0, 4};
    txlm_sampling o = {.temperature = 1};
    txlm_repeat_penalty pen = {.penalty = 1.5f, .tokens = window, .n = 7};
    txlm_err err = {0};
    CHECK(txlm_sampling_check(&o, &pen, 6, &err) == 0 && txlm_sampling_penalized(&pen));
    CHECK(txlm_apply_penalty(lp, 6, &pen, &err) == 0);
    for (int i = 0; i < 6; i++) CHECK(lp[i] == want[i]);
    pen.penalty = 1;
    CHECK(!txlm_sampling_penalized(&pen));
    pen.penalty = 0;
    CHECK(!txlm_sampling_penalized(&pen) && !txlm_sampling_penalized(NULL));
}

int main(void)
{
    random_cases();
    refused();
    penalty();
    printf("%d failures\n", failures);
    return failures != 0;
}
