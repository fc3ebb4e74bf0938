/* Tokenizer throughput: generates a text file (default 100 MB: lines of
 * words drawn from a 50,000-word vocabulary, 2% of them unknown), then
 * streams it through the tokenizer in 4 MiB pieces cut at line breaks, in
 * word mode, word mode with the wt103 rules, byte mode (enwik8-style
 * decimal symbols) and text8 mode. Prints MB/s for each.
 * usage: bench_tokenize [MB] [FILE] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tokenizer.h"

#define N_WORDS 50000
#define CHUNK (4u << 20)

static uint64_t rng = 88172645463325252ull;
static uint32_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static double clock_s(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct vocab_mem {
    txlm_vocab v;
    uint32_t *off;
    char *blob;
} vocab_mem;

static void build(vocab_mem *m, char **sym, uint32_t n, uint32_t kind, uint32_t flags)
{
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++) total += strlen(sym[i]);
    m->off = malloc((n + 1) * sizeof *m->off);
    m->blob = malloc(total + 1);
    uint32_t at = 0;
    memset(&m->v, 0, sizeof m->v);
    m->v.eos_id = m->v.unk_id = -1;
    for (uint32_t i = 0; i < n; i++) {
        m->off[i] = at;
        memcpy(m->blob + at, sym[i], strlen(sym[i]));
        at += (uint32_t)strlen(sym[i]);
        if (!strcmp(sym[i], "<eos>")) m->v.eos_id = (int32_t)i;
        if (!strcmp(sym[i], "<unk>")) m->v.unk_id = (int32_t)i;
    }
    m->off[n] = at;
    m->v = (txlm_vocab){n, kind, flags, m->v.eos_id, m->v.unk_id, m->off, m->blob, at};
}

/* Streams the file through the tokenizer; returns MB/s of wall time (0 on
 * error) and *cpu_rate MB per second of this process's CPU time (steadier
 * on a shared machine). */
static double run(const txlm_vocab *v, const char *path, size_t *n_ids, double *cpu_rate)
{
    txlm_tokenizer *t;
    txlm_err e = {0};
    if (txlm_tok_create(v, &t, &e)) return 0;
    FILE *f = fopen(path, "rb");
    char *buf = malloc(CHUNK);
    size_t have = 0, got, bytes = 0;
    *n_ids = 0;
    double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    while (f && buf && (got = fread(buf + have, 1, CHUNK - have, f)) > 0) {
        have += got;
        size_t cut = have;
        while (cut > 0 && buf[cut - 1] != '\n') cut--;
        if (cut == 0) cut = have;
        int32_t *ids;
        size_t n;
        if (txlm_tok_encode(t, buf, cut, &ids, &n, &e)) {
            fprintf(stderr, "encode: %s\n", e.msg);
            return 0;
        }
        free(ids);
        *n_ids += n;
        bytes += cut;
        memmove(buf, buf + cut, have - cut);
        have -= cut;
    }
    double secs = clock_s(CLOCK_MONOTONIC) - t0;
    *cpu_rate = (double)bytes / 1e6 / (clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0);
    if (f) fclose(f);
    free(buf);
    txlm_tok_free(t);
    return (double)bytes / 1e6 / secs;
}

int main(int argc, char **argv)
{
    size_t mb = argc > 1 ? (size_t)atoi(argv[1]) : 100;
    const char *path = argc > 2 ? argv[2] : "/tmp/txlm_bench_tokenize.txt";
    char **words = malloc((N_WORDS + 2) * sizeof *words);
    words[0] = "<eos>", words[1] = "<unk>";
    for (uint32_t i = 2; i < N_WORDS + 2; i++) {
        uint32_t len = 2 + next() % 9;
        words[i] = malloc(len + 1);
        for (uint32_t k = 0; k < len; k++) words[i][k] = (char)('a' + next() % 26);
        words[i][len] = 0;
    }
    FILE *f = fopen(path, "wb");
    if (!f) return perror(path), 1;
    size_t written = 0;
    while (written < mb * 1000000) {
        uint32_t nw = 5 + next() % 30;
        for (uint32_t k = 0; k < nw; k++) {
            const char *w = next() % 50 == 0 ? "zzzunknown" : words[2 + next() % N_WORDS];
            written += (size_t)fprintf(f, "%s%s", k ? " " : "", w);
        }
        if (next() % 8 == 0) written += (size_t)fprintf(f, ", \"it's\" 1,000.5 well-known.");
        fputc('\n', f);
        written++;
    }
    fclose(f);
    printf("%s: %.1f MB\n", path, (double)written / 1e6);

    vocab_mem wv, bv, t8;
    build(&wv, words, N_WORDS + 2, TXLM_TOK_WORD, 0);
    char *bytes[256], *chars[28];
    for (int b = 0; b < 256; b++) {
        bytes[b] = malloc(4);
        snprintf(bytes[b], 4, "%d", b);
    }
    build(&bv, bytes, 256, TXLM_TOK_CHAR_BYTE, 0);
    chars[0] = "_", chars[1] = "<unk>";
    for (int c = 0; c < 26; c++) {
        chars[2 + c] = malloc(2);
        chars[2 + c][0] = (char)('a' + c), chars[2 + c][1] = 0;
    }
    build(&t8, chars, 28, TXLM_TOK_CHAR_TEXT8, 0);
    size_t n;
    double c, r = run(&wv.v, path, &n, &c);
    printf("word:          %7.1f MB/s  %7.1f MB/CPU-s  (%zu tokens)\n", r, c, n);
    r = run(&bv.v, path, &n, &c);
    printf("byte (enwik8): %7.1f MB/s  %7.1f MB/CPU-s  (%zu tokens)\n", r, c, n);
    r = run(&t8.v, path, &n, &c);
    printf("text8:         %7.1f MB/s  %7.1f MB/CPU-s  (%zu tokens)\n", r, c, n);
    wv.v.flags = TXLM_VOCAB_WT103_NORM;
    r = run(&wv.v, path, &n, &c);
    printf("word + wt103:  %7.1f MB/s  %7.1f MB/CPU-s  (%zu tokens)\n", r, c, n);
    remove(path);
    return 0;
}
