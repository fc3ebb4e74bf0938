/* txlm score: every token's surprisal is -log2 of what txlm logprobs gives
 * for it (a golden case, 1e-5 bits), and equals txlm eval's NLL; --words
 * lines the sums up with the original text's words, exactly, on the 60
 * wt103 sentences and on character-model text with multi-byte UTF-8; each
 * word's surprisal is the sum of its tokens'; the options.
 * usage: test_score_cli TXLM TXLM_PACK GOLDEN_DIR */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../text/wt103_cases.h"
#include "scoring_util.h"
#include "wt103.h" /* wt_utf8, wt_is_space: str.isspace, as the words are cut */

#define TOL 1e-5

/* The surprisal column of TSV rows (NAN for NA), *n rows; rows' sentence and token ids in sid/tid. */
static double *tsv_surprisals(const char *out, size_t *n, int header_ok, long *sid, long *tid, size_t cap)
{
    double *v = malloc(cap * sizeof *v);
    *n = 0;
    const char *p = strchr(out, '\n');
    TCHECK(header_ok == !strncmp(out, "sentence_id\ttoken_id\ttoken\tsurprisal\n", 37));
    for (p = p ? p + 1 : out; *p && *n < cap; p = strchr(p, '\n') + 1) {
        char tok[256], val[64];
        if (sscanf(p, "%ld\t%ld\t%255[^\t]\t%63[^\n]", &sid[*n], &tid[*n], tok, val) != 4) break;
        v[(*n)++] = strcmp(val, "NA") ? atof(val) : NAN;
    }
    return v;
}

/* Segments of L tokens through txlm logprobs and txlm score on the same
 * text: token k's surprisal is -log2 p(t_k), row k - 1. Also eval's NLLs. */
static void test_golden(const char *name)
{
    int32_t *t = NULL;
    uint32_t seg = 0;
    double want_nll = 0;
    size_t n = golden_stream(sc_golden, name, &t, &seg, &want_nll);
    const char *model = sc_path("aw.txlm"), *text = sc_path("golden.txt"), *lp_path = sc_path("golden.f32");
    const char *nll_path = sc_path("golden_nll.f32");
    TCHECK(n > 2 && pack_case(sc_pack, sc_golden, name, model, NULL) == 0 && sc_write_stream(text, t, n) == 0);
    char *tokens = malloc(n * 12 + 1), *segs = malloc(n * 12 + 1), seg_s[16];
    tokens[0] = segs[0] = 0;
    for (size_t i = 0, at = 0; i + 1 < n; i++) /* every token but the last is an input */
        at += (size_t)sprintf(tokens + at, "%s%d", i ? "," : "", t[i]);
    for (size_t done = 0, at = 0; done < n - 1; done += seg)
        at += (size_t)sprintf(segs + at, "%s%zu", done ? "," : "", n - 1 - done < seg ? n - 1 - done : seg);
    snprintf(seg_s, sizeof seg_s, "%u", seg);
    const char *lp_args[] = {"logprobs", "-m", model, "--tokens", tokens, "--segments", segs, "-o", lp_path, NULL};
    const char *sc_args[] = {"score", "-m", model, text, "--tgt-len", seg_s, NULL};
    const char *ev_args[] = {"eval", "-m", model, text, "--tgt-len", seg_s, "--per-token", nll_path, NULL};
    char *out = NULL;
    TCHECK(sc_txlm_run(lp_args, NULL, NULL) == 0 && sc_txlm_run(sc_args, &out, NULL) == 0 &&
           sc_txlm_run(ev_args, NULL, NULL) == 0);
    size_t nv = 0, rows = 0, nn = 0;
    float *lp = sc_read_f32(lp_path, &nv), *nll = sc_read_f32(nll_path, &nn);
    long *sid = calloc(n + 1, sizeof *sid), *tid = calloc(n + 1, sizeof *tid);
    double *s = tsv_surprisals(out ? out : "", &rows, 1, sid, tid, n + 1);
    TCHECK(rows == n && lp && nll && nn == n - 1 && nv % (n - 1) == 0);
    TCHECK(rows && isnan(s[0]) && sid[0] == 1 && tid[0] == 1);
    size_t vocab = lp ? nv / (n - 1) : 0, bad = 0, line = 0, in_line = 0;
    for (size_t k = 0; k < rows && k < n; k++) {
        if (k == 0 || t[k - 1] == 0) line++, in_line = 0; /* a line starts after each <eos> */
        bad += sid[k] != (long)line || tid[k] != (long)++in_line;
        if (k == 0 || !lp || !nll) continue;
        double want = -lp[(k - 1) * vocab + (size_t)t[k]] / log(2.0);
        bad += !(fabs(s[k] - want) <= TOL) || !(fabs(s[k] * log(2.0) - nll[k - 1]) <= TOL);
    }
    if (bad) fprintf(stderr, "%s: %zu tokens' surprisals or ids differ\n", name, bad);
    TCHECK(bad == 0);
    free(t), free(tokens), free(segs), free(out), free(lp), free(nll), free(s), free(sid), free(tid);
}

/* ---- the words of a line ------------------------------------------------ */

/* A token's or word's row of --format jsonl. */
typedef struct row {
    long sentence, id;
    const char *token, *text;
    size_t begin, end, tokens;
    double surprisal;
} row;

static size_t rows_of(cJSON *all, row *r, size_t cap, int words)
{
    size_t n = 0;
    cJSON *o;
    cJSON_ArrayForEach(o, all)
    {
        if (n == cap) break;
        cJSON *tk = cJSON_GetObjectItem(o, words ? "word" : "token"), *tx = cJSON_GetObjectItem(o, "text");
        r[n] = (row){(long)sc_num(o, "sentence_id"), (long)sc_num(o, words ? "word_id" : "token_id"),
                     cJSON_IsString(tk) ? tk->valuestring : "", cJSON_IsString(tx) ? tx->valuestring : "",
                     (size_t)sc_num(o, "begin"), (size_t)sc_num(o, "end"), (size_t)sc_num(o, "tokens"),
                     sc_num(o, "surprisal")};
        cJSON *sv = cJSON_GetObjectItem(o, "surprisal");
        if (cJSON_IsNull(sv)) r[n].surprisal = NAN;
        n++;
    }
    return n;
}

/* Words of the text: each is the text's bytes at [begin, end), starts and
 * ends at whitespace (str.isspace) or the line's ends, holds no line
 * break; split at whitespace, the words in order are exactly the text's
 * runs of non-whitespace. Returns the words that hold whitespace (joined). */
static size_t check_words(const char *text, size_t len, const row *w, size_t nw)
{
    size_t i = 0, k = 0, joined = 0, l;
    for (size_t x = 0; x < nw; x++) {
        TCHECK(w[x].end <= len && w[x].begin < w[x].end && strlen(w[x].token) == w[x].end - w[x].begin &&
               !memcmp(w[x].token, text + w[x].begin, w[x].end - w[x].begin));
        if (w[x].end > len) return joined;
        for (; k <= w[x].begin; k++) TCHECK(k == w[x].begin || wt_is_space(wt_utf8(text + k, len - k, &l)) || (text[k] & 0xC0) == 0x80);
        /* every run of non-whitespace from here is inside this word, in order */
        int has_space = 0;
        while (i < len) {
            while (i < len && wt_is_space(wt_utf8(text + i, len - i, &l))) i += l;
            if (i >= w[x].end) break;
            TCHECK(i >= w[x].begin);
            while (i < len && !wt_is_space(wt_utf8(text + i, len - i, &l))) i += l;
            TCHECK(i <= w[x].end);
            if (i < w[x].end) has_space = 1;
        }
        TCHECK(!memchr(text + w[x].begin, '\n', w[x].end - w[x].begin));
        joined += has_space;
        k = w[x].end;
    }
    while (i < len && wt_is_space(wt_utf8(text + i, len - i, &l))) i += l;
    TCHECK(i == len); /* no word left out */
    return joined;
}

/* Each word's surprisal is the sum of the tokens inside it (null when one
 * of them has none), and so is its count. */
static void check_sums(const row *w, size_t nw, const row *t, size_t nt)
{
    size_t bad = 0, k = 0, in_words = 0;
    for (size_t x = 0; x < nw; x++) {
        double sum = 0;
        size_t count = 0;
        for (; k < nt && t[k].begin < w[x].end; k++) {
            if (t[k].begin < w[x].begin || t[k].end == t[k].begin) continue; /* whitespace, a line's <eos> */
            TCHECK(t[k].end <= w[x].end && t[k].sentence == w[x].sentence);
            sum += t[k].surprisal, count++;
        }
        int same = isnan(sum) ? isnan(w[x].surprisal) : fabs(sum - w[x].surprisal) <= TOL * (double)(count + 1);
        int off = !same || count != w[x].tokens;
        if (off) fprintf(stderr, "word %zu [%s]: %.6f over %zu tokens, its tokens %.6f over %zu\n", x, w[x].token, w[x].surprisal, w[x].tokens, sum, count);
        bad += off;
        in_words += count;
    }
    if (bad) fprintf(stderr, "%zu words' sums differ from their tokens'\n", bad);
    TCHECK(bad == 0 && in_words > 0);
}

/* score --format jsonl, tokens and words, with extra options. */
static void score_jsonl(const char *model, const char *text, const char *extra, cJSON **tokens, cJSON **words)
{
    const char *a[] = {"score", "-m", model, text, "--format", "jsonl", extra, NULL};
    const char *b[] = {"score", "-m", model, text, "--format", "jsonl", "--words", extra, NULL};
    char *o1 = NULL, *o2 = NULL;
    TCHECK(sc_txlm_run(a, &o1, NULL) == 0 && sc_txlm_run(b, &o2, NULL) == 0);
    *tokens = sc_jsonl(o1 ? o1 : "");
    *words = sc_jsonl(o2 ? o2 : "");
    TCHECK(*tokens && *words);
    free(o1), free(o2);
}

/* The 60 sentences, one a line, through a wt103 model whose vocabulary
 * holds all their tokens: the tokens are the expected ones, each token's
 * text is its bytes, the words are the sentences' own. */
static void test_wt103_sentences(void)
{
    size_t nc = sizeof cases / sizeof *cases, len = 0;
    char *text = malloc(1 << 16), *vocab = malloc(1 << 16);
    const char *syms[1000] = {"<eos>", "<unk>"};
    size_t vl = (size_t)sprintf(vocab, "<eos>\n<unk>\n"), nsym = 2;
    char *copies[sizeof cases / sizeof *cases];
    for (size_t c = 0; c < nc; c++) {
        len += (size_t)sprintf(text + len, "%s\n", cases[c].in);
        char *save = NULL;
        copies[c] = strdup(cases[c].tokens);
        for (char *tk = strtok_r(copies[c], " ", &save); tk && nsym < 1000; tk = strtok_r(NULL, " ", &save)) {
            size_t s = 0;
            while (s < nsym && strcmp(syms[s], tk)) s++;
            if (s < nsym) continue;
            syms[nsym++] = tk;
            vl += (size_t)sprintf(vocab + vl, "%s\n", tk);
        }
    }
    for (; nsym < 1000; nsym++) vl += (size_t)sprintf(vocab + vl, "filler%zu\n", nsym);
    TCHECK(nsym == 1000 && !memchr(text, 0, len));
    const char *model = sc_path("wt103.txlm"), *vpath = sc_path("wt103_vocab.txt"), *tpath = sc_path("sentences.txt");
    TCHECK(sc_write(vpath, vocab, vl) == 0 && sc_write(tpath, text, len) == 0);
    TCHECK(sc_pack_vocab("adaptive_word", vpath, "wt103", model, NULL) == 0);
    cJSON *tj = NULL, *wj = NULL;
    score_jsonl(model, tpath, "--eos-per-line", &tj, &wj);
    enum { CAP = 8192 };
    row *t = calloc(CAP, sizeof *t), *w = calloc(CAP, sizeof *w);
    size_t nt = rows_of(tj, t, CAP, 0), nw = rows_of(wj, w, CAP, 1), k = 0, x = 0, joined = 0, line = 0;
    for (size_t c = 0; c < nc; c++) {
        size_t end = line + strlen(cases[c].in);
        /* the tokens: the expected ones, then <eos>; each token's text is its bytes */
        char *copy = strdup(cases[c].tokens), *save = NULL;
        long id = 1;
        for (char *tk = strtok_r(copy, " ", &save); tk; tk = strtok_r(NULL, " ", &save), k++, id++) {
            TCHECK(k < nt && !strcmp(t[k].token, tk) && t[k].sentence == (long)c + 1 && t[k].id == id);
            TCHECK(k < nt && t[k].begin >= line && t[k].end <= end && isfinite(t[k].surprisal) &&
                   strlen(t[k].text) == t[k].end - t[k].begin && !memcmp(t[k].text, text + t[k].begin, strlen(t[k].text)));
        }
        TCHECK(k < nt && !strcmp(t[k].token, "<eos>") && t[k].begin == end && t[k].end == end + 1);
        k++;
        free(copy);
        size_t x0 = x;
        while (x < nw && w[x].sentence == (long)c + 1) x++;
        row *lw = w + x0;
        for (size_t q = 0; q < x - x0; q++) lw[q].begin -= line, lw[q].end -= line;
        joined += check_words(text + line, end - line, lw, x - x0);
        for (size_t q = 0; q < x - x0; q++) lw[q].begin += line, lw[q].end += line;
        line = end + 1;
    }
    TCHECK(k == nt && x == nw);
    check_sums(w, nw, t, nt);
    /* only the sentence with a no-break space between digits joins two words */
    TCHECK(joined <= 2);
    cJSON_Delete(tj), cJSON_Delete(wj);
    for (size_t c = 0; c < nc; c++) free(copies[c]);
    free(t), free(w), free(text), free(vocab);
}

/* A character model (one symbol a byte) on text with multi-byte UTF-8 and
 * Unicode spaces: words are str.split()'s, written here by hand. */
static void test_char_words(void)
{
    static const char *text = "Zo\xc3\xab's caf\xc3\xa9 costs 5 \xe2\x82\xac \xe2\x80\x94 na\xc3\xafve \xe2\x98\x83 \xf0\x9f\x98\x80!\n"
                              "no\xc2\xa0" "break\xe3\x80\x80ideographic\xe2\x80\x83" "em\t tab\n"
                              "\n"
                              "  last line \xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9";
    static const char *want[] = {"Zo\xc3\xab's", "caf\xc3\xa9", "costs", "5", "\xe2\x82\xac", "\xe2\x80\x94",
                                 "na\xc3\xafve", "\xe2\x98\x83", "\xf0\x9f\x98\x80!", "no", "break", "ideographic",
                                 "em", "tab", "last", "line", "\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9"};
    static const long line_of[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 4, 4, 4};
    size_t nwant = sizeof want / sizeof *want, len = strlen(text);
    char vocab[8192];
    size_t vl = 0;
    for (int b = 0; b < 256; b++) vl += (size_t)sprintf(vocab + vl, "%d\n", b);
    for (int i = 256; i < 1000; i++) vl += (size_t)sprintf(vocab + vl, "pad%d\n", i);
    const char *model = sc_path("bytes.txlm"), *vpath = sc_path("bytes_vocab.txt"), *tpath = sc_path("utf8.txt");
    TCHECK(sc_write(vpath, vocab, vl) == 0 && sc_write(tpath, text, len) == 0);
    TCHECK(sc_pack_vocab("adaptive_word", vpath, "char", model, NULL) == 0);
    cJSON *tj = NULL, *wj = NULL;
    score_jsonl(model, tpath, "--nats", &tj, &wj);
    row t[512], w[64];
    size_t nt = rows_of(tj, t, 512, 0), nw = rows_of(wj, w, 64, 1);
    TCHECK(nt == len && nw == nwant); /* a token a byte */
    for (size_t k = 0; k < nt && k < len; k++) {
        TCHECK(t[k].begin == k && t[k].end == k + 1 && (k == 0) == isnan(t[k].surprisal));
        /* JSON strings are UTF-8: a byte of a longer character is U+FFFD there */
        TCHECK((unsigned char)text[k] < 0x80 ? t[k].text[0] == text[k] : !strcmp(t[k].text, "\xef\xbf\xbd"));
    }
    for (size_t x = 0; x < nw && x < nwant; x++) {
        if (strcmp(w[x].token, want[x])) fprintf(stderr, "word %zu: [%s], want [%s]\n", x, w[x].token, want[x]);
        TCHECK(!strcmp(w[x].token, want[x]) && w[x].sentence == line_of[x] && w[x].tokens == strlen(want[x]));
        TCHECK(!memcmp(text + w[x].begin, want[x], strlen(want[x])) && w[x].end == w[x].begin + strlen(want[x]));
    }
    /* the first word holds the first byte, which has no context: its sum is null */
    TCHECK(nw && isnan(w[0].surprisal) && isfinite(w[1].surprisal));
    check_sums(w, nw, t, nt);
    TCHECK(check_words(text, len, w, nw) == 0);
    /* --nats against the default bits */
    const char *bits[] = {"score", "-m", model, tpath, NULL};
    char *out = NULL;
    long sid[600], tid[600];
    size_t rows = 0;
    TCHECK(sc_txlm_run(bits, &out, NULL) == 0);
    double *s = tsv_surprisals(out ? out : "", &rows, 1, sid, tid, 600);
    TCHECK(rows == nt);
    for (size_t k = 1; k < rows && k < nt; k++) TCHECK(fabs(s[k] * log(2.0) - t[k].surprisal) < 2e-6);
    TCHECK(rows && sid[rows - 1] == 4 && tid[rows - 1] == (long)strlen("  last line \xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9"));
    /* the token column holds the vocabulary's symbols: decimal bytes here */
    TCHECK(out && strstr(out, "\n1\t2\t111\t") && strstr(out, "\n3\t1\t10\t"));
    free(s), free(out);
    /* the words in TSV: the same words, sums and counts as the JSON lines */
    const char *tsv[] = {"score", "-m", model, tpath, "--words", "--nats", NULL};
    TCHECK(sc_txlm_run(tsv, &out, NULL) == 0);
    const char *head = "sentence_id\tword_id\tword\tsurprisal\ttokens\n";
    TCHECK(out && !strncmp(out, head, strlen(head)));
    const char *p = out ? strchr(out, '\n') : NULL;
    size_t x = 0;
    for (; p && p[1] && x < nw; x++, p = strchr(p + 1, '\n')) {
        long sid = 0, wid = 0;
        char word[64], val[32];
        size_t count = 0;
        TCHECK(sscanf(p + 1, "%ld\t%ld\t%63[^\t]\t%31[^\t]\t%zu", &sid, &wid, word, val, &count) == 5);
        TCHECK(!strcmp(word, w[x].token) && sid == w[x].sentence && wid == w[x].id && count == w[x].tokens);
        TCHECK(x == 0 ? !strcmp(val, "NA") : fabs(atof(val) - w[x].surprisal) < 2e-6);
    }
    TCHECK(x == nw && p && !p[1]);
    free(out);
    cJSON_Delete(tj), cJSON_Delete(wj);
}

/* --eos-per-line: the text starts after an <eos> (its first token is
 * scored) and the last line gets one; stdin; errors. */
static void test_options(void)
{
    const char *model = sc_path("aw.txlm"), *tpath = sc_path("opt.txt");
    TCHECK(sc_write(tpath, "w5 w9\nw7 w8", 11) == 0);
    const char *a[] = {"score", "-m", model, tpath, "--eos-per-line", "--format", "jsonl", NULL};
    char *out = NULL, *err = NULL;
    TCHECK(sc_txlm_run(a, &out, NULL) == 0);
    cJSON *j = sc_jsonl(out ? out : "");
    row r[16];
    size_t n = j ? rows_of(j, r, 16, 0) : 0;
    TCHECK(n == 6 && isfinite(r[0].surprisal) && !strcmp(r[5].token, "<eos>") && r[5].sentence == 2 && r[5].id == 3);
    TCHECK(n == 6 && r[5].begin == 11 && r[5].end == 11 && !strcmp(r[5].text, ""));
    cJSON_Delete(j), free(out);
    /* standard input, and the same numbers as from the file */
    char cmd[3000];
    snprintf(cmd, sizeof cmd, "printf 'w5 w9\\nw7 w8' | '%s' score -m '%s' - --eos-per-line --format jsonl", sc_txlm, model);
    const char *sh[] = {"/bin/sh", "-c", cmd, NULL};
    char *piped = NULL;
    TCHECK(run_tool(sh, &piped, NULL) == 0);
    cJSON *pj = sc_jsonl(piped ? piped : "");
    row p[16];
    size_t np = pj ? rows_of(pj, p, 16, 0) : 0;
    TCHECK(np == n);
    for (size_t k = 0; k < np && k < n; k++) TCHECK(fabs(p[k].surprisal - r[k].surprisal) < 1e-9);
    cJSON_Delete(pj), free(piped);
    const char *bad_fmt[] = {"score", "-m", model, tpath, "--format", "csv", NULL};
    TCHECK(sc_txlm_run(bad_fmt, NULL, &err) == 1 && err && strstr(err, "tsv or jsonl"));
    free(err);
    /* a byte model without <eos> cannot follow the convention */
    const char *no_eos[] = {"score", "-m", sc_path("bytes.txlm"), tpath, "--eos-per-line", NULL};
    TCHECK(sc_txlm_run(no_eos, NULL, &err) == 1 && err && strstr(err, "no <eos>"));
    free(err);
}

/* Ctrl-C while an endless text streams in: exit 130, and what was printed
 * is whole lines' tokens, each line's from its first to its <eos>. */
static void test_sigint(void)
{
    const char *model = sc_path("aw.txlm"), *out_path = sc_path("sigint.out"), *err_path = sc_path("sigint.err");
    const char *args[] = {"score", "-m", model, "-", "--tgt-len", "8", "--progress", NULL};
    TCHECK(sc_interrupt(args, out_path, err_path, "tok/s") == 130 && sc_file_has(err_path, "txlm: interrupted"));
    char *out = slurp(out_path, NULL);
    size_t rows = 0, cap = 1 << 20;
    long *sid = malloc(cap * sizeof *sid), *tid = malloc(cap * sizeof *tid);
    double *s = tsv_surprisals(out ? out : "", &rows, 1, sid, tid, cap);
    /* lines of 8 words and <eos>, each whole */
    TCHECK(rows >= 9 && rows % 9 == 0 && isnan(s[0]));
    for (size_t k = 0; k < rows; k++) TCHECK(sid[k] == (long)(k / 9) + 1 && tid[k] == (long)(k % 9) + 1 && (k == 0 || isfinite(s[k])));
    free(out), free(s), free(sid), free(tid);
}

int main(int argc, char **argv)
{
    if (sc_start(argc, argv)) return 2;
    test_golden("adaptive_word"); /* packs aw.txlm, which the later tests use */
    test_wt103_sentences();
    test_char_words();
    test_options();
    test_sigint();
    return sc_finish();
}
