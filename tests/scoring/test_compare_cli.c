/* txlm compare: a model against itself gives KL 0 and 100% agreement;
 * against its q8_0 packing the figures docs/format.md gives ("Comparing
 * packings"); each position's KL is the divergence computed here from
 * txlm logprobs of both models, its NLLs are txlm eval's; models with
 * different vocabularies are refused.
 * usage: test_compare_cli TXLM TXLM_PACK GOLDEN_DIR */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scoring_util.h"

/* docs/format.md, "Comparing packings": adaptive_word and char_preln, f32
 * against q8_0, on their golden token streams (segments as the golden). */
static const struct {
    const char *name;
    double kl_mean, kl_max, agreement, delta_nll;
} documented[] = {
    {"adaptive_word", 0.00002718, 0.00004989, 31.0 / 32, +0.004098},
    {"char_preln", 0.00000370, 0.00000809, 1.0, +0.000404},
};

typedef struct stream {
    int32_t *t;
    size_t n;
    uint32_t seg;
    char seg_s[16];
    const char *text;
} stream;

static int golden_text(const char *name, stream *s)
{
    double nll = 0;
    s->n = golden_stream(sc_golden, name, &s->t, &s->seg, &nll);
    snprintf(s->seg_s, sizeof s->seg_s, "%u", s->seg);
    s->text = sc_path("stream.txt");
    return s->n < 3 || sc_write_stream(s->text, s->t, s->n);
}

static cJSON *compare_json(const char *a, const char *b, const stream *s, const char *per_token)
{
    const char *args[] = {"compare", "-m", a, "-m", b, s->text, "--tgt-len", s->seg_s, "--json",
                          per_token ? "--per-token" : NULL, per_token, NULL};
    char *out = NULL;
    TCHECK(sc_txlm_run(args, &out, NULL) == 0);
    cJSON *j = cJSON_Parse(out ? out : "");
    TCHECK(j != NULL);
    free(out);
    return j;
}

/* A model against itself (loaded twice): no divergence at all. */
static void test_self(const char *model, const stream *s)
{
    cJSON *j = compare_json(model, model, s, NULL);
    TCHECK(sc_num(j, "tokens") == (double)(s->n - 1) && sc_num(j, "kl_mean") == 0 && sc_num(j, "kl_max") == 0);
    TCHECK(sc_num(j, "top1_agreement") == 1 && sc_num(j, "delta_mean_nll") == 0 && sc_num(j, "delta_perplexity") == 0);
    TCHECK(sc_num(j, "mean_nll_a") > 0 && sc_num(j, "mean_nll_a") == sc_num(j, "mean_nll_b"));
    cJSON_Delete(j);
}

static int argmax(const float *x, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return (int)best;
}

/* Whether sym is the symbol of id in the golden vocabularies (<eos>, <unk>, wN). */
static int is_symbol(const char *sym, int id)
{
    char want[32];
    snprintf(want, sizeof want, "%s%d", "w", id);
    return !strcmp(sym, id == 0 ? "<eos>" : id == 1 ? "<unk>" : want);
}

/* The KL and the most likely tokens of every position against logprobs of
 * both models; NLLs against eval's. Returns the share of positions whose
 * most likely tokens agree. */
static double check_positions(const char *a, const char *b, const stream *s, const char *tsv)
{
    char *tokens = malloc(s->n * 12 + 1), *segs = malloc(s->n * 12 + 1);
    size_t at = 0;
    for (size_t i = 0; i + 1 < s->n; i++) at += (size_t)sprintf(tokens + at, "%s%d", i ? "," : "", s->t[i]);
    at = 0;
    for (size_t done = 0; done < s->n - 1; done += s->seg)
        at += (size_t)sprintf(segs + at, "%s%zu", done ? "," : "", s->n - 1 - done < s->seg ? s->n - 1 - done : s->seg);
    const char *pa = sc_path("a.f32"), *pb = sc_path("b.f32"), *pe = sc_path("eval.f32");
    const char *la[] = {"logprobs", "-m", a, "--tokens", tokens, "--segments", segs, "-o", pa, NULL};
    const char *lb[] = {"logprobs", "-m", b, "--tokens", tokens, "--segments", segs, "-o", pb, NULL};
    const char *ev[] = {"eval", "-m", b, s->text, "--tgt-len", s->seg_s, "--per-token", pe, NULL};
    TCHECK(sc_txlm_run(la, NULL, NULL) == 0 && sc_txlm_run(lb, NULL, NULL) == 0 && sc_txlm_run(ev, NULL, NULL) == 0);
    size_t na = 0, nb = 0, ne = 0, rows = 0, bad = 0, agree = 0;
    float *xa = sc_read_f32(pa, &na), *xb = sc_read_f32(pb, &nb), *nll = sc_read_f32(pe, &ne);
    char *out = slurp(tsv, NULL);
    TCHECK(xa && xb && nll && na == nb && ne == s->n - 1 && out);
    TCHECK(out && !strncmp(out, "position\ttoken\tnll_a\tnll_b\tkl\ttop_a\ttop_b\n", 42));
    size_t vocab = xa ? na / (s->n - 1) : 0;
    for (const char *p = out ? strchr(out, '\n') : NULL; p && p[1] && xa && xb && nll; p = strchr(p + 1, '\n'), rows++) {
        size_t pos = 0;
        double nla = 0, nlb = 0, kl = 0, want = 0;
        char tok[64], top_a[64], top_b[64];
        if (sscanf(p + 1, "%zu\t%63[^\t]\t%lf\t%lf\t%lf\t%63[^\t]\t%63[^\n]", &pos, tok, &nla, &nlb, &kl, top_a, top_b) != 7 ||
            pos != rows + 1 || pos >= s->n) {
            bad++;
            break;
        }
        const float *ra = xa + (pos - 1) * vocab, *rb = xb + (pos - 1) * vocab;
        for (size_t v = 0; v < vocab; v++) want += exp((double)ra[v]) * ((double)ra[v] - (double)rb[v]);
        bad += fabs(kl - want) > 1e-7 + 1e-4 * want || fabs(nla + ra[s->t[pos]]) > 1e-5 || fabs(nlb - nll[pos - 1]) > 1e-5;
        int ta = argmax(ra, vocab), tb = argmax(rb, vocab);
        bad += !is_symbol(tok, s->t[pos]) || !is_symbol(top_a, ta) || !is_symbol(top_b, tb);
        agree += ta == tb;
    }
    if (bad) fprintf(stderr, "%zu positions differ from the direct computation\n", bad);
    TCHECK(bad == 0 && rows == s->n - 1);
    free(tokens), free(segs), free(xa), free(xb), free(nll), free(out);
    return rows ? (double)agree / (double)rows : -1;
}

/* f32 against q8_0: the documented figures, and every position checked. */
static void test_q8(size_t c)
{
    stream s;
    const char *name = documented[c].name, *a = sc_path("f32.txlm"), *b = sc_path("q8.txlm"), *tsv = sc_path("pos.tsv");
    TCHECK(golden_text(name, &s) == 0 && sc_pack_vocab(name, NULL, "word", a, NULL) == 0 &&
           sc_pack_vocab(name, NULL, "word", b, "q8_0") == 0);
    if (c == 0) test_self(a, &s);
    cJSON *j = compare_json(a, b, &s, tsv);
    double km = sc_num(j, "kl_mean"), kx = sc_num(j, "kl_max"), ag = sc_num(j, "top1_agreement");
    double dn = sc_num(j, "delta_mean_nll");
    printf("%s f32 / q8_0: %.0f tokens, KL mean %.8f max %.8f, top-1 agreement %.6f, delta mean NLL %+.6f\n", name,
           sc_num(j, "tokens"), km, kx, ag, dn);
    TCHECK(fabs(km - documented[c].kl_mean) <= 0.02 * documented[c].kl_mean);
    TCHECK(fabs(kx - documented[c].kl_max) <= 0.02 * documented[c].kl_max);
    TCHECK(fabs(ag - documented[c].agreement) <= 1.5 / (double)(s.n - 1)); /* one position may flip on another device */
    TCHECK(fabs(dn - documented[c].delta_nll) <= 1e-4);
    TCHECK(fabs(sc_num(j, "mean_nll_b") - sc_num(j, "mean_nll_a") - dn) < 2e-6);
    TCHECK(fabs(sc_num(j, "delta_perplexity") - (exp(sc_num(j, "mean_nll_b")) - exp(sc_num(j, "mean_nll_a")))) <
           1e-5 * exp(sc_num(j, "mean_nll_a")));
    if (c == 0) TCHECK(fabs(check_positions(a, b, &s, tsv) - ag) < 1e-6);
    cJSON_Delete(j);
    free(s.t);
}

static void test_errors(void)
{
    const char *a = sc_path("aw.txlm"), *cp = sc_path("cp.txlm"), *text = sc_path("short.txt");
    TCHECK(pack_case(sc_pack, sc_golden, "adaptive_word", a, NULL) == 0 && pack_case(sc_pack, sc_golden, "char_preln", cp, NULL) == 0);
    TCHECK(sc_write(text, "w5 w9 w12\n", 10) == 0);
    const char *diff[] = {"compare", "-m", a, "-m", cp, text, NULL};
    const char *one[] = {"compare", "-m", a, text, NULL};
    char *err = NULL, *out = NULL;
    TCHECK(sc_txlm_run(diff, &out, &err) == 1 && err && strstr(err, "tokens") && out && !*out);
    free(err), free(out);
    TCHECK(sc_txlm_run(one, NULL, &err) == 1 && err && strstr(err, "two -m MODEL"));
    free(err);
    /* the summary in words */
    const char *plain[] = {"compare", "-m", a, "-m", a, text, NULL};
    TCHECK(sc_txlm_run(plain, &out, NULL) == 0);
    TCHECK(out && strstr(out, "KL(A || B): mean 0.00000000 +/- 0.00000000, max 0.00000000") &&
           strstr(out, "top-1 agreement: 100.0000%"));
    free(out);
}

int main(int argc, char **argv)
{
    if (sc_start(argc, argv)) return 2;
    for (size_t c = 0; c < sizeof documented / sizeof *documented; c++) test_q8(c);
    test_errors();
    return sc_finish();
}
