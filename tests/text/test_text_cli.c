/* The text commands of txlm on packed golden models: generate (seeds,
 * greedy, top-k/top-p, long prompts, Ctrl-C), eval (mean NLL against the
 * golden cases, --json, the progress bar only on a terminal) and
 * logprobs -f (--text).
 * usage: test_text_cli TXLM TXLM_PACK GOLDEN_DIR */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <pty.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "text_util.h"
#include "txlm.h"

static const char *txlm, *pack, *golden;
static char *dir;

static char *path_in(const char *name) { return path_under(dir, name); }

static int count_words(const char *s)
{
    int n = 0;
    for (const char *p = s; *p; p++)
        if (*p != ' ' && *p != '\n' && (p == s || p[-1] == ' ' || p[-1] == '\n')) n++;
    return n;
}

/* txlm generate with the given options after -m MODEL; returns stdout. */
static char *generate(const char *model, const char *const *opts, int *status)
{
    const char *argv[32] = {txlm, "generate", "-m", model};
    int n = 4;
    for (int i = 0; opts[i] && n < 31; i++) argv[n++] = opts[i];
    argv[n] = NULL;
    char *out = NULL, *err = NULL;
    *status = run_tool(argv, &out, &err);
    if (*status) fprintf(stderr, "generate: exit %d: %s", *status, err ? err : "");
    free(err);
    return out ? out : calloc(1, 1);
}

static void test_generate(const char *model)
{
    int st;
    const char *s7[] = {"-p", "w5 w9 w12", "-n", "20", "--seed", "7", NULL};
    const char *s8[] = {"-p", "w5 w9 w12", "-n", "20", "--seed", "8", NULL};
    char *a = generate(model, s7, &st), *b = generate(model, s7, &st), *c = generate(model, s8, &st);
    TCHECK(st == 0);
    TCHECK(!strncmp(a, "w5 w9 w12", 9) && count_words(a) == 23);
    TCHECK(!strcmp(a, b));   /* same seed, same text */
    TCHECK(strcmp(a, c));    /* another seed, another text */
    free(a), free(b), free(c);

    /* temperature 0: greedy, the same for every seed */
    const char *g7[] = {"-p", "w5 w9 w12", "-n", "12", "--temperature", "0", "--seed", "7", NULL};
    const char *g8[] = {"-p", "w5 w9 w12", "-n", "12", "--temperature", "0", "--seed", "8", NULL};
    a = generate(model, g7, &st), b = generate(model, g8, &st);
    TCHECK(st == 0 && !strcmp(a, b) && count_words(a) == 15);
    free(a), free(b);

    /* the other sampling paths run and give the asked number of tokens */
    const char *k[] = {"-p", "w5", "-n", "10", "--top-k", "5", "--temperature", "0.8", "--seed", "1", NULL};
    const char *p[] = {"-p", "w5", "-n", "10", "--top-p", "0.9", "--seed", "2", NULL};
    const char *kp[] = {"-p", "w5", "-n", "10", "--top-k", "50", "--top-p", "0.5", "--seed", "3", NULL};
    const char *const *paths[] = {k, p, kp};
    for (int i = 0; i < 3; i++) {
        a = generate(model, paths[i], &st);
        TCHECK(st == 0 && count_words(a) == 11);
        free(a);
    }

    /* the session options of every model-running command; a prompt from a file */
    const char *prompt = path_in("gen_prompt.txt");
    FILE *f = fopen(prompt, "wb");
    if (f) fputs("w5 w9", f), fclose(f);
    /* --seed: without one a random seed is drawn, and an <eos> among the draws changes the word count */
    const char *so[] = {"--file", prompt, "-n", "10", "--same-length", "0", "--mem-len", "4", "--clamp-len", "3", "--seed", "1", NULL};
    a = generate(model, so, &st);
    TCHECK(st == 0 && !strncmp(a, "w5 w9", 5) && count_words(a) == 12);
    free(a);
    const char *bad[] = {"-p", "w5", "--same-length", "2", NULL};
    a = generate(model, bad, &st);
    TCHECK(st == 1);
    free(a);

    /* a prompt that cannot seek: a pipe, as standard input ("-f -"); a FIFO
     * by name is refused at once instead of waited on (docs/reliability.md) */
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "printf 'w5 w9' | '%s' generate -m '%s' -f - -n 3 --seed 1", txlm, model);
    const char *sh[] = {"/bin/sh", "-c", cmd, NULL};
    char *piped = NULL;
    st = run_tool(sh, &piped, NULL);
    TCHECK(st == 0 && piped && !strncmp(piped, "w5 w9", 5) && count_words(piped) == 5);
    free(piped);
    const char *fifo = path_in("prompt.fifo");
    TCHECK(mkfifo(fifo, 0600) == 0);
    const char *pf[] = {"-f", fifo, "-n", "3", NULL};
    a = generate(model, pf, &st);
    TCHECK(st == 1);
    free(a);
    unlink(fifo);
}

/* A prompt of 30 tokens (more than the 8 of a segment) is fed in segments:
 * the greedy continuation is the argmax after feeding it 8 at a time. */
static void test_long_prompt(const char *model)
{
    char prompt[400] = "";
    int32_t ids[30];
    for (int i = 0; i < 30; i++) {
        ids[i] = 2 + (i * 37) % 990;
        char w[16];
        snprintf(w, sizeof w, "%sw%d", i ? " " : "", ids[i]);
        strcat(prompt, w);
    }
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    txlm_session_options so = {.same_length = -1, .max_segment = 8};
    if (txlm_context_create(NULL, &ctx) || txlm_model_load(ctx, model, NULL, &m) || txlm_session_create(m, &so, &s)) {
        text_failures++;
        return;
    }
    float lp[8 * 1000];
    uint32_t last = 0;
    for (int at = 0; at < 30; at += 8) {
        last = 30 - at < 8 ? 30 - at : 8;
        TCHECK(txlm_session_feed(s, ids + at, last, lp) == TXLM_OK);
    }
    int best = 0;
    for (int v = 1; v < 1000; v++)
        if (lp[(last - 1) * 1000 + v] > lp[(last - 1) * 1000 + best]) best = v;
    size_t len;
    const char *sym = txlm_token_symbol(m, best, &len);
    char want[512];
    if (best == 0) snprintf(want, sizeof want, "%s\n\n", prompt);
    else snprintf(want, sizeof want, "%s %.*s\n", prompt, (int)len, sym);
    txlm_session_free(s);
    txlm_model_free(m);
    txlm_context_destroy(ctx);

    int st;
    const char *o[] = {"-p", prompt, "-n", "1", "--temperature", "0", NULL};
    char *out = generate(model, o, &st);
    /* the prompt, then the greedy word (a line break when <eos> is the argmax) */
    TCHECK(st == 0 && !strcmp(out, want));
    if (strcmp(out, want)) fprintf(stderr, "got [%s] want [%s]\n", out, want);
    free(out);
}

/* Generation replayed through the API as txlm generate does it: prompt
 * "w5 w9" fed in segments of 8, then n draws at temperature 1 from seed.
 * ids receives the prompt's 2 ids and the n drawn; *text their decode. */
static int replay(const char *model, uint64_t seed, int n, int32_t *ids, char **text)
{
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    txlm_session_options so = {.same_length = -1, .max_segment = 8};
    int32_t *p = NULL;
    size_t np = 0;
    int bad = txlm_context_create(NULL, &ctx) || txlm_model_load(ctx, model, NULL, &m) ||
              txlm_session_create(m, &so, &s) || txlm_tokenize(m, "w5 w9", 5, &p, &np) || np != 2;
    if (!bad) {
        memcpy(ids, p, 2 * sizeof *ids);
        txlm_session_set_seed(s, seed);
        bad = txlm_session_feed_long(s, ids, 2, NULL, NULL, NULL) != TXLM_OK;
    }
    txlm_sampling samp = {.temperature = 1.0f};
    for (int i = 0; i < n && !bad; i++)
        bad = txlm_session_sample(s, &samp, &ids[2 + i]) || txlm_session_feed_rows(s, &ids[2 + i], 1, 1, NULL);
    if (!bad && text) bad = txlm_detokenize(m, ids, (size_t)n + 2, text) != TXLM_OK;
    txlm_free(p);
    txlm_session_free(s);
    txlm_model_free(m);
    txlm_context_destroy(ctx);
    return bad;
}

/* A wt103 model whose most drawn words are renamed to number and dash
 * joins and punctuation: the streamed output of txlm generate equals the
 * decode of all its ids at once. */
static void test_stream_wt103(const char *plain_model)
{
    enum { N = 150 };
    int32_t ids[N + 2];
    if (replay(plain_model, 11, N, ids, NULL)) {
        text_failures++;
        return;
    }
    int count[1000] = {0}, pick[9];
    for (int i = 2; i < N + 2; i++) count[ids[i]]++;
    count[0] = count[1] = count[5] = count[9] = -1;
    for (int k = 0; k < 9; k++) {
        pick[k] = 2;
        for (int v = 2; v < 1000; v++)
            if (count[v] > count[pick[k]]) pick[k] = v;
        count[pick[k]] = -1;
    }
    static const char *const sp[] = {"@,@", "@-@", "@.@", ",", "(", ")", "\"", "'s", "."};
    FILE *out = fopen(path_in("vocab_wt.txt"), "wb");
    for (int id = 0; out && id < 1000; id++) {
        const char *sym = id == 0 ? "<eos>" : id == 1 ? "<unk>" : NULL;
        for (int k = 0; k < 9; k++)
            if (pick[k] == id) sym = sp[k];
        if (sym) fprintf(out, "%s\n", sym);
        else fprintf(out, "w%d\n", id);
    }
    if (out) fclose(out);
    char model[1100], case_dir[1100], vocab[1100];
    snprintf(model, sizeof model, "%s", path_in("wt.txlm"));
    snprintf(vocab, sizeof vocab, "%s", path_in("vocab_wt.txt"));
    snprintf(case_dir, sizeof case_dir, "%s/adaptive_word", golden);
    const char *pk[] = {pack, case_dir, "--vocab", vocab, "--tokenizer", "wt103", "-o", model, NULL};
    TCHECK(run_tool(pk, NULL, NULL) == 0);

    int st;
    const char *o[] = {"-p", "w5 w9", "-n", "150", "--seed", "11", NULL};
    char *got = generate(model, o, &st), *text = NULL;
    TCHECK(st == 0);
    int32_t again[N + 2];
    TCHECK(replay(model, 11, N, again, &text) == 0 && !memcmp(ids, again, sizeof ids));
    char *want = malloc(strlen(text ? text : "") + 2);
    sprintf(want, "%s\n", text ? text : "");
    TCHECK(!strcmp(got, want));
    if (strcmp(got, want)) fprintf(stderr, "streamed:\n[%s]\ndecoded:\n[%s]\n", got, want);
    /* the joins happened: no number or dash marker between two words */
    TCHECK(!strstr(want, " @,@ ") && !strstr(want, " @-@ ") && (strchr(want, ',') || strchr(want, '-')));
    free(want);
    txlm_free(text);
    free(got);
}

/* Ctrl-C while generating: exit 130, what was generated is complete and
 * flushed, ending with a newline. */
static void test_sigint(const char *model)
{
    const char *out_path = path_in("sigint.out");
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open("/dev/null", O_WRONLY);
        if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(127);
        execl(txlm, txlm, "generate", "-m", model, "-p", "w5", "-n", "100000000", (char *)NULL);
        _exit(127);
    }
    /* wait until some tokens are out */
    struct stat sb;
    for (int i = 0; i < 600; i++) {
        if (stat(out_path, &sb) == 0 && sb.st_size > 40) break;
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGINT);
    int status = 0;
    TCHECK(waitpid(pid, &status, 0) == pid);
    TCHECK(WIFEXITED(status) && WEXITSTATUS(status) == 130);
    FILE *f = fopen(out_path, "rb");
    char buf[1 << 16];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    TCHECK(n > 40 && buf[n - 1] == '\n' && !strncmp(buf, "w5", 2));
    /* every word is whole: a vocabulary word or <unk> */
    for (char *w = strtok(buf, " \n"); w; w = strtok(NULL, " \n")) TCHECK(w[0] == 'w' || !strcmp(w, "<unk>"));
}

/* The golden stream as text: symbols separated by spaces, <eos> as line ends. */
static void write_stream(const char *path, const int32_t *t, size_t n)
{
    FILE *f = fopen(path, "wb");
    for (size_t i = 0; f && i < n; i++) {
        if (t[i] == 0) fputc('\n', f);
        else if (t[i] == 1) fprintf(f, "%s<unk>", i && t[i - 1] ? " " : "");
        else fprintf(f, "%sw%d", i && t[i - 1] ? " " : "", t[i]);
    }
    if (f) fclose(f);
}

static void test_eval(const char *name, const char *model)
{
    int32_t *t = NULL;
    uint32_t seg = 0;
    double want = 0;
    size_t n = golden_stream(golden, name, &t, &seg, &want);
    TCHECK(n > 1);
    char cfg[1100], *text;
    snprintf(cfg, sizeof cfg, "%s/%s/config.json", golden, name);
    FILE *f = fopen(cfg, "rb");
    static char cbuf[8192];
    size_t cl = f ? fread(cbuf, 1, sizeof cbuf - 1, f) : 0;
    if (f) fclose(f);
    cbuf[cl] = 0;
    cJSON *c = cJSON_Parse(cbuf);
    char seg_s[16], mem_s[16];
    snprintf(seg_s, sizeof seg_s, "%u", seg);
    snprintf(mem_s, sizeof mem_s, "%d", cJSON_GetObjectItem(c, "mem_len")->valueint);
    cJSON_Delete(c);
    const char *file = path_in("st\"re\\am.txt"); /* JSON must escape it */
    write_stream(file, t, n);
    free(t);

    const char *argv[] = {txlm, "eval", "-m", model, file, "--tgt-len", seg_s, "--mem-len", mem_s, "--json", NULL};
    char *err = NULL;
    int st = run_tool(argv, &text, &err);
    TCHECK(st == 0);
    /* stderr is not a terminal: no progress bar */
    TCHECK(err && !strchr(err, '\r') && !strstr(err, "ETA"));
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    TCHECK(j != NULL);
    const char *fields[] = {"file", "tokens", "mean_nll", "perplexity", "seconds", "tokens_per_second", "tgt_len", "mem_len"};
    for (size_t i = 0; j && i < sizeof fields / sizeof *fields; i++) TCHECK(cJSON_GetObjectItem(j, fields[i]) != NULL);
    double got = j ? cJSON_GetObjectItem(j, "mean_nll")->valuedouble : 0;
    if (fabs(got - want) > 1e-3) fprintf(stderr, "%s: eval mean NLL %.6f, golden %.6f\n", name, got, want);
    TCHECK(fabs(got - want) <= 1e-3);
    TCHECK(j && (size_t)cJSON_GetObjectItem(j, "tokens")->valuedouble == n - 1);
    TCHECK(j && fabs(cJSON_GetObjectItem(j, "perplexity")->valuedouble - exp(got)) < 1e-3 * exp(got));
    cJSON_Delete(j);
    free(text);
    free(err);

    /* on a terminal: a progress bar */
    int master;
    fflush(NULL);
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    if (pid == 0) {
        execv(txlm, (char *const *)argv);
        _exit(127);
    }
    char tty[8192];
    size_t got_n = 0;
    ssize_t r;
    while (pid > 0 && got_n < sizeof tty - 1 && (r = read(master, tty + got_n, sizeof tty - 1 - got_n)) > 0) got_n += (size_t)r;
    tty[got_n] = 0;
    int status = 0;
    TCHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    TCHECK(strstr(tty, "\r[") && strstr(tty, "ETA") && strstr(tty, "100.0%"));
    if (pid > 0) close(master);
}

/* A character model (char_preln's weights with byte symbols "0".."203"):
 * eval reports bits per character, and its mean NLL is the API's scoring
 * of the file's bytes in segments of 6. */
static void test_eval_bytes(void)
{
    FILE *v = fopen(path_in("bytes.txt"), "wb");
    for (int b = 0; v && b < 204; b++) fprintf(v, "%d\n", b);
    if (v) fclose(v);
    char model[1100], vocab[1100], case_dir[1100], file[1100];
    snprintf(model, sizeof model, "%s", path_in("bytes.txlm"));
    snprintf(vocab, sizeof vocab, "%s", path_in("bytes.txt"));
    snprintf(file, sizeof file, "%s", path_in("bytes_text.txt"));
    snprintf(case_dir, sizeof case_dir, "%s/char_preln", golden);
    const char *pk[] = {pack, case_dir, "--vocab", vocab, "--tokenizer", "char", "-o", model, NULL};
    TCHECK(run_tool(pk, NULL, NULL) == 0);
    const char *text = "The quick brown fox jumps over the lazy dog.\nPack my box with five dozen liquor jugs.\n";
    FILE *f = fopen(file, "wb");
    if (f) fputs(text, f), fclose(f);

    const char *argv[] = {txlm, "eval", "-m", model, "-f", file, "--tgt-len", "6", "--json", NULL};
    char *out = NULL;
    TCHECK(run_tool(argv, &out, NULL) == 0);
    cJSON *j = out ? cJSON_Parse(out) : NULL;
    cJSON *bpc = cJSON_GetObjectItem(j, "bpc"), *nll = cJSON_GetObjectItem(j, "mean_nll");
    TCHECK(j && bpc && nll && !cJSON_GetObjectItem(j, "perplexity"));
    TCHECK(bpc && nll && fabs(bpc->valuedouble - nll->valuedouble / log(2.0)) < 1e-5);

    size_t n = strlen(text);
    int32_t ids[128];
    for (size_t i = 0; i < n; i++) ids[i] = (unsigned char)text[i];
    txlm_context *ctx = NULL;
    txlm_model *m = NULL;
    txlm_session *s = NULL;
    txlm_session_options so = {.same_length = -1, .max_segment = 6};
    double sum = 0;
    if (!txlm_context_create(NULL, &ctx) && !txlm_model_load(ctx, model, NULL, &m) && !txlm_session_create(m, &so, &s)) {
        int32_t *tok = NULL;
        size_t nt = 0;
        TCHECK(txlm_tokenize(m, text, n, &tok, &nt) == TXLM_OK && nt == n && !memcmp(tok, ids, n * sizeof *ids));
        txlm_free(tok);
        float lp[6];
        for (size_t at = 0; at + 1 < n; at += 6) {
            uint32_t len = n - 1 - at < 6 ? (uint32_t)(n - 1 - at) : 6;
            TCHECK(txlm_session_score(s, ids + at, ids + at + 1, len, lp) == TXLM_OK);
            for (uint32_t i = 0; i < len; i++) sum -= lp[i];
        }
    } else text_failures++;
    double mean = sum / (double)(n - 1);
    TCHECK(nll && fabs(nll->valuedouble - mean) < 1e-4);
    TCHECK(j && (size_t)cJSON_GetObjectItem(j, "tokens")->valuedouble == n - 1);
    txlm_session_free(s);
    txlm_model_free(m);
    txlm_context_destroy(ctx);
    cJSON_Delete(j);
    free(out);
}

static void test_logprobs_text(const char *model)
{
    const char *file = path_in("prompt.txt"), *o1 = path_in("text.f32"), *o2 = path_in("ids.f32");
    FILE *f = fopen(file, "wb");
    if (f) fputs("w5 w9 w12\nw7 w3", f), fclose(f);
    const char *a[] = {txlm, "logprobs", "-m", model, "-f", file, "-o", o1, NULL};
    const char *b[] = {txlm, "logprobs", "-m", model, "--tokens", "5,9,12,0,7,3", "-o", o2, NULL};
    TCHECK(run_tool(a, NULL, NULL) == 0 && run_tool(b, NULL, NULL) == 0);
    struct stat s1, s2;
    TCHECK(stat(o1, &s1) == 0 && stat(o2, &s2) == 0 && s1.st_size == 6 * 1000 * 4 && s2.st_size == s1.st_size);
    FILE *x = fopen(o1, "rb"), *y = fopen(o2, "rb");
    static char bx[24000], by[24000];
    TCHECK(x && y && fread(bx, 1, sizeof bx, x) == sizeof bx && fread(by, 1, sizeof by, y) == sizeof by &&
           !memcmp(bx, by, sizeof bx));
    if (x) fclose(x);
    if (y) fclose(y);
    /* both given, or neither: one-line errors */
    const char *both[] = {txlm, "logprobs", "-m", model, "--text", file, "--tokens", "1", "-o", o1, NULL};
    char *err = NULL;
    TCHECK(run_tool(both, NULL, &err) == 1 && err && strstr(err, "not both"));
    free(err);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s TXLM TXLM_PACK GOLDEN_DIR\n", argv[0]);
        return 2;
    }
    txlm = argv[1], pack = argv[2], golden = argv[3];
    if (!(dir = make_tmp_dir())) return 1;
    char *aw = strdup(path_in("adaptive_word.txlm")), *cp = strdup(path_in("char_preln.txlm"));
    if (pack_case(pack, golden, "adaptive_word", aw, NULL) || pack_case(pack, golden, "char_preln", cp, NULL)) {
        rm_tree(dir);
        return 1;
    }
    test_generate(aw);
    test_long_prompt(aw);
    test_stream_wt103(aw);
    test_sigint(aw);
    test_eval("adaptive_word", aw);
    test_eval("char_preln", cp);
    test_eval_bytes();
    test_logprobs_text(aw);
    rm_tree(dir);
    free(dir), free(aw), free(cp);
    printf("%d failures\n", text_failures);
    return text_failures != 0;
}
