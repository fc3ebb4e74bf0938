/* The embeddable API around text: session state save -> restore ->
 * continue (buffer and file) against an uninterrupted run, restoring into
 * another model's session, reset, the progress/cancel callbacks of model
 * loading and long feeds, and the wt103 flag set by txlm-pack.
 * usage: test_text_api TXLM_PACK GOLDEN_DIR */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text_util.h"
#include "txlm.h"

#define SEG 8

static txlm_context *ctx;

static txlm_session *new_session(txlm_model *m)
{
    txlm_session_options so = {.same_length = -1, .max_segment = SEG};
    txlm_session *s = NULL;
    txlm_status st = txlm_session_create(m, &so, &s);
    if (st) fprintf(stderr, "session: %s\n", txlm_last_error());
    TCHECK(st == TXLM_OK);
    return s;
}

static int same(const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fabsf(a[i] - b[i]) > 1e-6f) return 0;
    return 1;
}

typedef struct calls {
    int n, cancel_at;
    double last;
    int monotone;
} calls;

static int on_progress(void *user, double f)
{
    calls *c = user;
    c->n++;
    if (f < c->last || f > 1.0) c->monotone = 0;
    c->last = f;
    return c->cancel_at && c->n >= c->cancel_at;
}

static void state_round_trips(txlm_model *a, txlm_model *other, const char *dir)
{
    int32_t tok[4 * SEG];
    uint32_t x = 12345;
    for (int i = 0; i < 4 * SEG; i++) tok[i] = (int32_t)((x = x * 1103515245u + 12345u) >> 8) % 1000;
    size_t V = 1000, rows = (size_t)SEG * V;
    float *ref1 = malloc(rows * sizeof *ref1), *ref3 = malloc(rows * sizeof *ref3), *got = malloc(rows * sizeof *got);

    /* uninterrupted */
    txlm_session *u = new_session(a);
    TCHECK(txlm_session_feed(u, tok, SEG, ref1) == TXLM_OK);
    TCHECK(txlm_session_feed(u, tok + SEG, SEG, NULL) == TXLM_OK);
    TCHECK(txlm_session_feed(u, tok + 2 * SEG, SEG, ref3) == TXLM_OK);

    /* buffer form: save after two segments, restore into a fresh session */
    txlm_session *s = new_session(a);
    TCHECK(txlm_session_feed(s, tok, SEG, NULL) == TXLM_OK);
    TCHECK(txlm_session_feed(s, tok + SEG, SEG, NULL) == TXLM_OK);
    size_t size = txlm_session_state_size(s), written = 0;
    void *buf = malloc(size);
    TCHECK(txlm_session_save(s, buf, size, &written) == TXLM_OK && written <= size);
    TCHECK(txlm_session_save(s, buf, written - 1, &written) != TXLM_OK); /* too small */
    TCHECK(txlm_session_save(s, buf, size, &written) == TXLM_OK);
    txlm_session *r = new_session(a);
    TCHECK(txlm_session_restore(r, buf, written) == TXLM_OK);
    TCHECK(txlm_session_memory_len(r) == txlm_session_memory_len(s));
    TCHECK(txlm_session_feed(r, tok + 2 * SEG, SEG, got) == TXLM_OK && same(got, ref3, rows));
    /* and the saving session itself goes on identically */
    TCHECK(txlm_session_feed(s, tok + 2 * SEG, SEG, got) == TXLM_OK && same(got, ref3, rows));

    /* file form */
    char path[1100];
    snprintf(path, sizeof path, "%s/state.bin", dir);
    txlm_session *f = new_session(a);
    TCHECK(txlm_session_feed(f, tok, SEG, NULL) == TXLM_OK && txlm_session_feed(f, tok + SEG, SEG, NULL) == TXLM_OK);
    TCHECK(txlm_session_save_file(f, path) == TXLM_OK);
    txlm_session *g = new_session(a);
    TCHECK(txlm_session_restore_file(g, path) == TXLM_OK);
    TCHECK(txlm_session_feed(g, tok + 2 * SEG, SEG, got) == TXLM_OK && same(got, ref3, rows));

    /* a state is bound to its model: another model refuses it, and its
     * session is untouched */
    txlm_session *o = new_session(other);
    TCHECK(txlm_session_restore(o, buf, written) != TXLM_OK);
    TCHECK(strlen(txlm_last_error()) > 0);
    TCHECK(txlm_session_restore_file(o, path) != TXLM_OK);
    TCHECK(txlm_session_memory_len(o) == 0);
    TCHECK(txlm_session_feed(o, tok, SEG, NULL) == TXLM_OK);
    /* a corrupted state is refused too */
    ((unsigned char *)buf)[written / 2] ^= 0x40;
    TCHECK(txlm_session_restore(r, buf, written) != TXLM_OK);

    /* reset: the next segment starts a new text */
    TCHECK(txlm_session_memory_len(s) > 0);
    txlm_session_reset(s);
    TCHECK(txlm_session_memory_len(s) == 0);
    TCHECK(txlm_session_feed(s, tok, SEG, got) == TXLM_OK && same(got, ref1, rows));

    /* feed_long: 3 segments and a part, with progress, then the same as by hand */
    calls c = {.monotone = 1};
    txlm_session *l = new_session(a);
    size_t fed = 0;
    TCHECK(txlm_session_feed_long(l, tok, 3 * SEG + 5, on_progress, &c, &fed) == TXLM_OK);
    TCHECK(fed == 3 * SEG + 5 && c.n == 4 && c.monotone && c.last == 1.0);
    txlm_session *h = new_session(a);
    for (int i = 0; i < 3; i++) TCHECK(txlm_session_feed(h, tok + i * SEG, SEG, NULL) == TXLM_OK);
    TCHECK(txlm_session_feed(h, tok + 3 * SEG, 5, NULL) == TXLM_OK);
    float *g1 = malloc(3 * V * sizeof *g1), *g2 = malloc(3 * V * sizeof *g2);
    TCHECK(txlm_session_feed(l, tok + 29, 3, g1) == TXLM_OK && txlm_session_feed(h, tok + 29, 3, g2) == TXLM_OK);
    TCHECK(same(g1, g2, 3 * V));
    /* cancelled after the second segment: exactly 16 tokens went in */
    calls k = {.monotone = 1, .cancel_at = 2};
    txlm_session_reset(l);
    TCHECK(txlm_session_feed_long(l, tok, 4 * SEG, on_progress, &k, &fed) == TXLM_ERR_CANCELLED);
    TCHECK(fed == 2 * SEG && k.n == 2 && strstr(txlm_last_error(), "cancelled"));
    TCHECK(txlm_session_memory_len(l) == 2 * SEG);
    /* feed_text: "w5 w9 w12\nw7" is 5 tokens */
    TCHECK(txlm_session_feed_text(l, "w5 w9 w12\nw7", 12, NULL, NULL, &fed) == TXLM_OK && fed == 5);
    TCHECK(txlm_session_feed_long(NULL, tok, 1, NULL, NULL, &fed) == TXLM_ERR_INVALID_ARGUMENT);

    txlm_session *all[] = {u, s, r, f, g, o, l, h};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) txlm_session_free(all[i]);
    free(buf);
    free(ref1);
    free(ref3);
    free(got);
    free(g1);
    free(g2);
}

static void load_progress(const char *path)
{
    calls c = {.monotone = 1};
    txlm_model_options mo = {.progress = on_progress, .progress_user = &c};
    txlm_model *m = NULL;
    TCHECK(txlm_model_load(ctx, path, &mo, &m) == TXLM_OK && m);
    TCHECK(c.n > 3 && c.monotone && c.last == 1.0);
    txlm_model_free(m);
    calls k = {.monotone = 1, .cancel_at = 2};
    mo.progress_user = &k;
    m = (txlm_model *)1;
    TCHECK(txlm_model_load(ctx, path, &mo, &m) == TXLM_ERR_CANCELLED);
    TCHECK(m == NULL && k.n == 2 && strstr(txlm_last_error(), "cancelled"));
}

static void wt103_flag(txlm_model *plain, txlm_model *wt)
{
    const char *text = "w5-w9, w12.";
    int32_t *ids = NULL;
    size_t n = 0;
    TCHECK(txlm_tokenize(wt, text, strlen(text), &ids, &n) == TXLM_OK);
    static const int32_t want[] = {5, 1, 9, 1, 12, 1}; /* @-@ , . are <unk> here */
    TCHECK(n == 6 && !memcmp(ids, want, sizeof want));
    txlm_free(ids);
    TCHECK(txlm_tokenize(plain, text, strlen(text), &ids, &n) == TXLM_OK && n == 2 && ids[0] == 1 && ids[1] == 1);
    txlm_free(ids);
    static const int32_t back[] = {5, 9, 0, 12};
    char *s = NULL;
    TCHECK(txlm_detokenize(wt, back, 4, &s) == TXLM_OK && !strcmp(s, "w5 w9\nw12"));
    txlm_free(s);
}

/* The public streaming detokenizer: pieces put together equal
 * txlm_detokenize, on the plain and the wt103 model, stream after stream. */
static void detokenizer_api(txlm_model *m)
{
    txlm_detokenizer *d = NULL;
    TCHECK(txlm_detokenizer_create(m, &d) == TXLM_OK && d);
    if (!d) return;
    uint32_t x = 777;
    for (int round = 0; round < 20; round++) {
        int32_t ids[60];
        size_t n = 10 + round * 2;
        for (size_t i = 0; i < n; i++) ids[i] = (int32_t)((x = x * 1103515245u + 12345u) >> 8) % 30; /* <eos> included */
        char got[4096] = "", *want = NULL;
        size_t w = 0;
        for (size_t i = 0; i <= n; i++) {
            const char *p = NULL;
            size_t len = 0;
            txlm_status st = i < n ? txlm_detokenizer_push(d, ids[i], &p, &len) : txlm_detokenizer_flush(d, &p, &len);
            TCHECK(st == TXLM_OK && p && strlen(p) == len && w + len < sizeof got);
            if (st || !p || w + len >= sizeof got) break;
            memcpy(got + w, p, len + 1);
            w += len;
        }
        TCHECK(txlm_detokenize(m, ids, n, &want) == TXLM_OK && !strcmp(got, want));
        txlm_free(want);
    }
    const char *p;
    TCHECK(txlm_detokenizer_push(d, 1000, &p, NULL) == TXLM_ERR_INVALID_ARGUMENT && strstr(txlm_last_error(), "outside"));
    TCHECK(txlm_detokenizer_push(d, 5, NULL, NULL) == TXLM_ERR_INVALID_ARGUMENT);
    TCHECK(txlm_detokenizer_push(d, 5, &p, NULL) == TXLM_OK);
    txlm_detokenizer_reset(d); /* drops what is held (the wt103 model holds "w5") */
    size_t len = 1;
    TCHECK(txlm_detokenizer_flush(d, &p, &len) == TXLM_OK && len == 0 && !strcmp(p, ""));
    txlm_detokenizer_free(d);
    txlm_detokenizer_free(NULL);
    TCHECK(txlm_detokenizer_create(NULL, &d) == TXLM_ERR_INVALID_ARGUMENT && d == NULL);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s TXLM_PACK GOLDEN_DIR\n", argv[0]);
        return 2;
    }
    char *dir = make_tmp_dir();
    char a[1100], d[1100], w[1100];
    snprintf(a, sizeof a, "%s/a.txlm", dir);
    snprintf(d, sizeof d, "%s/d.txlm", dir);
    snprintf(w, sizeof w, "%s/w.txlm", dir);
    if (!dir || pack_case(argv[1], argv[2], "adaptive_word", a, NULL) || pack_case(argv[1], argv[2], "decode_steps", d, NULL) ||
        pack_case(argv[1], argv[2], "adaptive_word", w, "wt103")) {
        rm_tree(dir);
        return 1;
    }
    txlm_model *ma = NULL, *md = NULL, *mw = NULL;
    if (txlm_context_create(NULL, &ctx) || txlm_model_load(ctx, a, NULL, &ma) || txlm_model_load(ctx, d, NULL, &md) ||
        txlm_model_load(ctx, w, NULL, &mw)) {
        fprintf(stderr, "setup: %s\n", txlm_last_error());
        rm_tree(dir);
        return 1;
    }
    load_progress(a);
    state_round_trips(ma, md, dir);
    wt103_flag(ma, mw);
    detokenizer_api(ma);
    detokenizer_api(mw);
    uint64_t vm = txlm_context_validation_messages(ctx);
    TCHECK(vm == 0);
    txlm_model_free(ma);
    txlm_model_free(md);
    txlm_model_free(mw);
    txlm_context_destroy(ctx);
    rm_tree(dir);
    free(dir);
    printf("%d failures\n", text_failures);
    return text_failures != 0;
}
