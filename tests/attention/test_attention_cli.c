/* `txlm attention` end to end on a golden model: the PNGs decode (with
 * stb_image) to the size the layout gives for the asked-for panels, the
 * float32 dump is the API's matrices, the CSV has one line per entry, and
 * bad options give one line on stderr, a non-zero exit and no file.
 *
 * usage: test_attention_cli TXLM MODEL.txlm WORK_DIR   (MODEL: adaptive_word) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attn.h"
#include "plot/font.h"
#include "plot/heatmap.h"
#include "../common/check.h"
#include "../common/slurp.h"
#include "txlm.h"

#include "../common/stb_png.h"

static const char *txlm, *model, *work;
static char errfile[1024];

/* Runs `txlm attention -m MODEL ARGS` with stderr to errfile; the exit status. */
static int attention(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' attention -m '%s' %s 2>'%s'", txlm, model, args, errfile);
    int st = system(cmd);
    return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

static const char *path(const char *name)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", work, name);
    return buf[k];
}


/* Decodes a PNG and checks its size and that it is not one flat colour. */
static void expect_png(const char *what, const char *file, int w, int h)
{
    int pw = 0, ph = 0, comp = 0;
    unsigned char *px = stbi_load(file, &pw, &ph, &comp, 3);
    CHECK(px != NULL, "%s: %s does not decode: %s", what, file, stbi_failure_reason());
    if (!px) return;
    CHECK(pw == w && ph == h && comp == 3, "%s: %dx%d (%d channels), expected %dx%d RGB", what, pw, ph, comp, w, h);
    size_t colours = 0;
    for (size_t e = 3; e < (size_t)pw * ph * 3 && colours < 20; e += 3) colours += memcmp(px + e, px + e - 3, 3) != 0;
    CHECK(colours >= 20, "%s: the picture is nearly blank", what);
    stbi_image_free(px);
    printf("%s: %dx%d\n", what, pw, ph);
}

static void run_png(const char *what, const char *args, const char *out, const attn_layout *l)
{
    remove(out);
    int st = attention(args);
    CHECK(st == 0, "%s: exit status %d", what, st);
    if (!st) expect_png(what, out, l->w, l->h);
}

static void expect_failure(const char *args, const char *out)
{
    remove(out);
    int st = attention(args);
    size_t len = 0;
    char *err = slurp(errfile, &len);
    int lines = 0;
    for (size_t i = 0; err && i < len; i++) lines += err[i] == '\n';
    CHECK(st > 0, "%s: exit status %d, expected a failure", args, st);
    CHECK(lines == 1 && !strncmp(err, "txlm: ", 6), "%s: stderr is not one line: \"%s\"", args, err ? err : "");
    CHECK(access(out, F_OK) != 0, "%s: left %s behind", args, out);
    free(err);
}

/* The matrices the API gives for these tokens fed in segments of seg_len. */
static float *api_matrices(const int32_t *tokens, uint32_t n, uint32_t seg_len, uint32_t layer, int head, int terms,
                           txlm_attention_shape *sh)
{
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    txlm_context_options co = {0};
    txlm_session_options so = {.same_length = -1, .max_segment = seg_len};
    if (txlm_context_create(&co, &ctx) || txlm_model_load(ctx, model, NULL, &m) || txlm_session_create(m, &so, &s)) {
        fprintf(stderr, "FAIL: API: %s\n", txlm_last_error());
        exit(1);
    }
    for (uint32_t at = 0; at < n; at += seg_len) {
        uint32_t len = n - at < seg_len ? n - at : seg_len;
        if (at + len == n) txlm_session_capture_attention(s, terms ? TXLM_CAPTURE_TERMS : TXLM_CAPTURE_PROBS);
        CHECK(txlm_session_feed(s, tokens + at, len, NULL) == TXLM_OK, "feed: %s", txlm_last_error());
    }
    txlm_session_attention(s, layer, NULL, NULL, sh);
    size_t mat = (size_t)sh->qlen * sh->klen, plane = sh->n_head * mat;
    float *probs = malloc(plane * sizeof *probs), *t = malloc(4 * plane * sizeof *t);
    float *out = malloc((terms ? 5 : 1) * mat * sizeof *out);
    CHECK(txlm_session_attention(s, layer, probs, terms ? t : NULL, NULL) == TXLM_OK, "attention: %s", txlm_last_error());
    float *o = out;
    for (int k = terms ? 0 : 4; k < 5; k++, o += mat) memcpy(o, (k < 4 ? t + k * plane : probs) + head * mat, mat * 4);
    free(probs), free(t);
    txlm_session_free(s), txlm_model_free(m), txlm_context_destroy(ctx);
    return out;
}

static void check_dump(const char *what, const char *args, const int32_t *tokens, uint32_t n, uint32_t seg_len,
                       uint32_t layer, int head, int terms)
{
    const char *f32 = path("dump.f32"), *csv = path("dump.csv");
    remove(f32), remove(csv);
    CHECK(attention(args) == 0, "%s: failed", what);
    txlm_attention_shape sh;
    float *want = api_matrices(tokens, n, seg_len, layer, head, terms, &sh);
    size_t count = (terms ? 5 : 1) * (size_t)sh.qlen * sh.klen, len = 0, clen = 0;
    float *got = (float *)slurp(f32, &len);
    CHECK(got && len == count * 4, "%s: f32 dump has %zu bytes, expected %zu", what, len, count * 4);
    if (got && len == count * 4) CHECK(!memcmp(got, want, len), "%s: f32 dump differs from the API's matrices", what);
    char *text = slurp(csv, &clen);
    size_t lines = 0;
    for (size_t i = 0; text && i < clen; i++) lines += text[i] == '\n';
    CHECK(text && lines == count + 1, "%s: CSV has %zu lines, expected %zu", what, lines, count + 1);
    free(got), free(want), free(text);
}

/* The masks the pictures grey out and the by-distance means, on a hand-made
 * 3-query, 2-memory-row case (mem_len 3, so same_length hides j <= i - 1). */
/* Rows of canvas band [y0, y1) holding a pixel of colour col, as (first, count). */
static int ink_rows(const plot_canvas *c, int y0, int y1, int x0, int x1, plot_rgb col, int *first)
{
    int n = 0;
    *first = -1;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            const uint8_t *p = c->px + ((size_t)y * c->w + x) * 3;
            if (p[0] == col.r && p[1] == col.g && p[2] == col.b) {
                if (*first < 0) *first = y;
                n = y - *first + 1;
                break;
            }
        }
    return n;
}

/* Readable at the default size: a panel's title and its axis titles are
 * black and twice the tick numbers' height (a glyph is 7 rows at scale 1),
 * nothing is pale grey, and a short segment gets its token strings. */
static void check_readable(void)
{
    float v[4 * 6] = {0};
    const char *labels[6] = {"a", "b", "c", "d", "e", "f"};
    plot_heatmap hm = {.v = v, .rows = 4, .cols = 6, .cell = 12, .hi = 1, .title = "Tg", .tick = 1,
                       .row_labels = labels + 2, .col_labels = labels, .x_title = "key", .y_title = "q"};
    int w, h;
    plot_heatmap_size(4, 6, 12, 1, &w, &h);
    plot_canvas c = {0};
    CHECK(plot_canvas_init(&c, w, h, PLOT_WHITE) == 0, "canvas");
    if (!c.px) return;
    plot_heatmap_draw(&c, 0, 0, &hm);
    int first, title = ink_rows(&c, 0, 2 * PLOT_CHAR_H, 0, w, PLOT_BLACK, &first);
    CHECK(title >= 12, "the panel title is %d pixels tall", title);
    int xt = ink_rows(&c, h - 2 * PLOT_CHAR_H - 8, h, 0, w, PLOT_BLACK, &first);
    CHECK(xt >= 12, "the x axis title is %d pixels tall", xt);
    int grey = 0;
    for (size_t e = 0; e < (size_t)w * h; e++) grey += c.px[3 * e] == 128 && c.px[3 * e + 1] == 128 && c.px[3 * e + 2] == 128;
    CHECK(grey == 0, "%d pale grey pixels", grey);
    plot_canvas_free(&c);
    attn_layout l;
    attn_heatmap_layout(1, 0, 0, 24, 120, 0, &l);
    CHECK(l.labels && l.cell >= PLOT_CHAR_H, "a segment of 24 over 120 keys: cell %d, labels %d", l.cell, l.labels);
    attn_heatmap_layout(1, 0, 0, 64, 400, 0, &l);
    CHECK(!l.labels, "400 keys: labels at cell %d", l.cell);
}

static void check_mask_and_distance(void)
{
    static const unsigned char want_same[15] = {0, 0, 0, 1, 1, /**/ 1, 0, 0, 0, 1, /**/ 1, 1, 0, 0, 0};
    unsigned char m[15];
    attn_mask(3, 2, 3, 1, m);
    CHECK(!memcmp(m, want_same, 15), "mask with same_length");
    float p[15], curve[5];
    for (int e = 0; e < 15; e++) p[e] = (float)(e + 1);
    int seen = attn_by_distance(p, m, 3, 2, curve);
    /* distance d = 2 + i - j: d0 at (0,2) (1,3) (2,4); d1 at (0,1) (1,2) (2,3); d2 at (0,0) (1,1) (2,2) */
    CHECK(seen == 3 && curve[0] == (3 + 9 + 15) / 3.0f && curve[1] == (2 + 8 + 14) / 3.0f &&
              curve[2] == (1 + 7 + 13) / 3.0f && curve[3] == 0 && curve[4] == 0,
          "by distance with same_length: seen %d, %g %g %g %g %g", seen, curve[0], curve[1], curve[2], curve[3], curve[4]);
    attn_mask(3, 2, 3, 0, m);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++) CHECK(m[i * 5 + j] == (j > 2 + i), "causal mask (%d,%d)", i, j);
    seen = attn_by_distance(p, m, 3, 2, curve);
    CHECK(seen == 5 && curve[3] == (6 + 12) / 2.0f && curve[4] == 11, "by distance without same_length: %d %g %g", seen,
          curve[3], curve[4]);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s TXLM MODEL.txlm WORK_DIR\n", argv[0]);
        return 2;
    }
    txlm = argv[1], model = argv[2], work = argv[3];
    mkdir(work, 0755);
    snprintf(errfile, sizeof errfile, "%s/stderr.txt", work);
    const char *out = path("a.png");
    check_mask_and_distance();
    check_readable();
    char args[2048];
    /* adaptive_word: 3 layers, 4 heads, tgt_len 8, mem_len 16, same_length. 20 tokens in
     * segments of 8: the last segment is 4 queries over 16 memory rows + 4. */
    static const int32_t tokens[20] = {12, 7, 3, 44, 5, 12, 7, 9, 100, 3, 250, 12, 7, 3, 44, 5, 999, 7, 9, 1};
    const char *tok = "--tokens 12,7,3,44,5,12,7,9,100,3,250,12,7,3,44,5,999,7,9,1";
    attn_layout l;

    attn_heatmap_layout(3, 0, 0, 4, 20, 0, &l);
    CHECK(l.labels && l.cols == 2, "layout: 3 panels at cell %d", l.cell);
    snprintf(args, sizeof args, "%s -o '%s'", tok, out);
    run_png("defaults (every layer, mean of heads)", args, out, &l);

    attn_heatmap_layout(12, 0, 4, 4, 20, 0, &l);
    snprintf(args, sizeof args, "%s --layer all --head all -o '%s'", tok, out);
    run_png("every layer and head", args, out, &l);

    attn_heatmap_layout(4, 1, 0, 4, 20, 5, &l);
    CHECK(!l.labels && l.cols == 5, "layout: terms at cell 5");
    snprintf(args, sizeof args, "%s --layer 1 --head all --terms --cell 5 -o '%s'", tok, out);
    run_png("terms of every head of layer 1, cell 5", args, out, &l);

    /* -p text, segments of 6 tokens: 14 tokens -> the last segment is 2 queries over 12 + 2 keys. */
    attn_heatmap_layout(1, 0, 0, 2, 14, 0, &l);
    snprintf(args, sizeof args, "-p 'w5 w6 w7 w5 w6 w7 w5 w6 w7 w8 w9 w5 w6 w7' --segment-len 6 --layer 2 --head 3 -o '%s'", out);
    run_png("text, one head", args, out, &l);

    attn_distance_layout(1, 4, &l);
    snprintf(args, sizeof args, "%s --layer 2 --head all --by-distance -o '%s'", tok, out);
    run_png("by distance, one layer", args, out, &l);
    attn_distance_layout(3, 1, &l);
    snprintf(args, sizeof args, "%s --by-distance -o '%s'", tok, out);
    run_png("by distance, every layer, mean", args, out, &l);

    snprintf(args, sizeof args, "%s --layer 0 --head 2 --f32 '%s' --csv '%s'", tok, path("dump.f32"), path("dump.csv"));
    check_dump("probabilities of layer 0 head 2", args, tokens, 20, 8, 0, 2, 0);
    snprintf(args, sizeof args, "%s --tgt-len 7 --layer 2 --head 1 --terms --f32 '%s' --csv '%s'", tok,
             path("dump.f32"), path("dump.csv"));
    check_dump("terms of layer 2 head 1, segments of 7", args, tokens, 20, 7, 2, 1, 1);

    static const char *const bad[] = {
        "--layer 3", "--head 4", "--layer mean", "--head -1", "--bogus", "--cell 1000", "--terms --by-distance",
        "--segment-len 0x", "--tokens 5,abc", "--tokens 5000", "--tokens 1,2 -p w3", "--mem-len",
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        if (strstr(bad[k], "--tokens"))
            snprintf(args, sizeof args, "%s -o '%s'", bad[k], out);
        else /* a flag lacking its value must come last */
            snprintf(args, sizeof args, "%s -o '%s' %s", tok, out, bad[k]);
        expect_failure(args, out);
    }
    snprintf(args, sizeof args, "-f '%s' -o '%s'", path("no-such-file.txt"), out);
    expect_failure(args, out);
    snprintf(args, sizeof args, "%s", tok);
    expect_failure(args, out);
    if (failures) fprintf(stderr, "%d failures\n", failures);
    return failures ? 1 : 0;
}
