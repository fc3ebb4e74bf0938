/* The C API from several threads at once, every result compared with the
 * same work done on one thread first: four threads each load their own
 * copy of a model on the shared context (at once), then together tokenize
 * 40 KB with a word model and a wt103 model (both shared), detokenize whole
 * and streamed, read the models' parameters and symbols, and run sessions
 * on the shared model and on their own copy: feed a prompt in segments,
 * draw tokens from a fixed seed, save the state and restore it into
 * another session, feed text, score targets. Meanwhile a fifth thread
 * lists the devices and opens, uses and closes contexts of its own: the
 * process-wide Vulkan entry points are filled once and never rewritten,
 * so that may overlap everything else. Built and run as it is in
 * every build, and by .ci/run under ThreadSanitizer, which also reports
 * races that happen to give the right answer (docs/reliability.md).
 * usage: test_api_threads TXLM_PACK GOLDEN_DIR [ROUNDS] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../text/text_util.h"
#include "txlm.h"

enum { THREADS = 4, PROMPT = 40, DRAWS = 12 };

static txlm_context *ctx;
static pthread_barrier_t start; /* the text rounds of all threads begin together */
static txlm_model *word, *wt; /* shared by every thread */
static const char *word_path;
static int rounds = 10;

/* What one thread computes, and the single-threaded answers. */
typedef struct result {
    int32_t *ids_word, *ids_wt;
    size_t n_word, n_wt;
    char *text_word, *text_wt;
} result;
static result ref;
static char *text_a, *text_b; /* the texts tokenized */

/* 40 KB of words, or of words, numbers and punctuation for the wt103 rules. */
static char *make_text(int punct)
{
    size_t cap = 48 * 1024, w = 0;
    char *t = malloc(cap);
    uint32_t x = punct ? 99 : 7;
    static const char *const marks[] = {",", ".", " (", ")", "-", " \"", "\" ", " $3.5", " 1,000", "'s", " 'w4'", ";"};
    while (w + 40 < 40 * 1024) {
        x = x * 1103515245u + 12345u;
        w += (size_t)snprintf(t + w, cap - w, "%sw%u", w ? " " : "", 2 + (x >> 8) % 997);
        if (punct && (x >> 20) % 3 == 0) w += (size_t)snprintf(t + w, cap - w, "%s", marks[(x >> 4) % 12]);
        if ((x >> 12) % 17 == 0) t[w++] = '\n';
    }
    t[w] = 0;
    return t;
}

static int same_ids(const int32_t *a, size_t na, const int32_t *b, size_t nb)
{
    return na == nb && !memcmp(a, b, na * sizeof *a);
}

/* The text of ids through a streaming detokenizer (malloc'd). */
static char *streamed(txlm_model *m, const int32_t *ids, size_t n)
{
    txlm_detokenizer *d = NULL;
    if (txlm_detokenizer_create(m, &d)) return NULL;
    size_t cap = 1024, w = 0;
    char *out = malloc(cap);
    for (size_t i = 0; i <= n && out; i++) {
        const char *p;
        size_t len;
        if (i < n ? txlm_detokenizer_push(d, ids[i], &p, &len) : txlm_detokenizer_flush(d, &p, &len)) {
            free(out), out = NULL;
            break;
        }
        while (w + len + 1 > cap) out = realloc(out, cap *= 2);
        memcpy(out + w, p, len + 1);
        w += len;
    }
    txlm_detokenizer_free(d);
    return out;
}

/* What a session computes: DRAWS tokens at temperature 1 from seed 7
 * after the first PROMPT ids of the word text (fed in segments of 16),
 * the token a copy restored from the saved state draws next, and the
 * log-probabilities of the first 16 targets scored from an empty memory
 * after feeding the prompt's first line as text. */
typedef struct session_result {
    int32_t drawn[DRAWS], after_restore;
    float score[16];
    size_t text_fed;
} session_result;

static int draws(txlm_session *s, int32_t *out, int n)
{
    txlm_sampling samp = {.temperature = 1.0f};
    for (int i = 0; i < n; i++)
        if (txlm_session_sample(s, &samp, &out[i]) || txlm_session_feed_rows(s, &out[i], 1, 1, NULL)) return 1;
    return 0;
}

static int session_work(txlm_model *m, session_result *r)
{
    txlm_session_options so = {.same_length = -1, .max_segment = 16};
    txlm_session *s = NULL, *copy = NULL;
    void *state = NULL;
    size_t size = 0;
    const char *nl = strchr(text_a, '\n');
    int bad = txlm_session_create(m, &so, &s) || txlm_session_create(m, &so, &copy);
    if (!bad) txlm_session_set_seed(s, 7);
    bad = bad || txlm_session_feed_long(s, ref.ids_word, PROMPT, NULL, NULL, NULL) || draws(s, r->drawn, DRAWS);
    bad = bad || !(state = malloc(size = txlm_session_state_size(s))) || txlm_session_save(s, state, size, &size) ||
          txlm_session_restore(copy, state, size) || draws(copy, &r->after_restore, 1);
    txlm_session_reset(s);
    bad = bad || txlm_session_feed_text(s, text_a, (size_t)(nl - text_a), NULL, NULL, &r->text_fed);
    txlm_session_reset(s);
    bad = bad || txlm_session_score(s, ref.ids_word, ref.ids_word + 1, 16, r->score);
    if (bad) fprintf(stderr, "session: %s\n", txlm_last_error());
    free(state);
    txlm_session_free(s);
    txlm_session_free(copy);
    return bad;
}

static session_result ref_session;

static int same_session(const session_result *r)
{
    return !memcmp(r->drawn, ref_session.drawn, sizeof r->drawn) && r->after_restore == ref_session.after_restore &&
           !memcmp(r->score, ref_session.score, sizeof r->score) && r->text_fed == ref_session.text_fed;
}

/* Calls that only read the model. */
static int model_reads(txlm_model *m)
{
    txlm_model_params p;
    txlm_model_get_params(m, &p);
    size_t len;
    const char *sym = txlm_token_symbol(m, 5, &len);
    return p.n_token != 1000 || !sym || len != 2 || memcmp(sym, "w5", 2) || txlm_model_step_bytes(m) == 0 ||
           strcmp(txlm_status_string(TXLM_ERR_FORMAT), "format error");
}

/* Text work on the shared models; the number of results that differ from ref. */
static int text_round(void)
{
    int bad = 0;
    result r = {0};
    bad += txlm_tokenize(word, text_a, strlen(text_a), &r.ids_word, &r.n_word) ||
           !same_ids(r.ids_word, r.n_word, ref.ids_word, ref.n_word);
    bad += txlm_tokenize(wt, text_b, strlen(text_b), &r.ids_wt, &r.n_wt) || !same_ids(r.ids_wt, r.n_wt, ref.ids_wt, ref.n_wt);
    bad += txlm_detokenize(word, ref.ids_word, ref.n_word, &r.text_word) || strcmp(r.text_word, ref.text_word);
    char *s = streamed(wt, ref.ids_wt, ref.n_wt);
    bad += !s || strcmp(s, ref.text_wt);
    free(s);
    txlm_free(r.ids_word), txlm_free(r.ids_wt), txlm_free(r.text_word);
    return bad;
}

static void *worker(void *arg)
{
    int *failures = arg;
    txlm_model *own = NULL;
    if (txlm_model_load(ctx, word_path, NULL, &own)) {
        fprintf(stderr, "load: %s\n", txlm_last_error());
        ++*failures;
    }
    pthread_barrier_wait(&start);
    if (!own) return NULL;
    int32_t *ids = NULL;
    size_t n = 0;
    *failures += txlm_tokenize(own, text_a, strlen(text_a), &ids, &n) || !same_ids(ids, n, ref.ids_word, ref.n_word);
    txlm_free(ids);
    for (int r = 0; r < rounds; r++) *failures += text_round() + model_reads(word) + model_reads(own);
    session_result mine;
    *failures += session_work(word, &mine) || !same_session(&mine);
    *failures += session_work(own, &mine) || !same_session(&mine);
    /* the error message is per thread */
    txlm_session_feed(NULL, NULL, 0, NULL);
    *failures += !strstr(txlm_last_error(), "txlm_session_feed");
    txlm_model_free(own);
    return NULL;
}

/* Contexts opened and closed while the workers run: devices listed, a
 * context of its own, the word model loaded into it, the session work
 * compared with the single-threaded run, all closed again. */
static void *context_churn(void *arg)
{
    int *failures = arg;
    for (int round = 0; round < 3; round++) {
        txlm_device_info info[8];
        uint32_t n = 0;
        txlm_context *own_ctx = NULL;
        txlm_model *m = NULL;
        session_result mine;
        int bad = txlm_list_devices(info, 8, &n) || n == 0 || txlm_context_create(NULL, &own_ctx) ||
                  txlm_model_load(own_ctx, word_path, NULL, &m) || session_work(m, &mine) || !same_session(&mine);
        if (bad) fprintf(stderr, "context round %d: %s\n", round, txlm_last_error());
        *failures += bad;
        txlm_model_free(m);
        if (own_ctx) *failures += txlm_context_validation_messages(own_ctx) != 0;
        txlm_context_destroy(own_ctx);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s TXLM_PACK GOLDEN_DIR [ROUNDS]\n", argv[0]);
        return 2;
    }
    if (argc > 3) rounds = atoi(argv[3]);
    char *dir = make_tmp_dir(), a[1100], w[1100];
    snprintf(a, sizeof a, "%s/a.txlm", dir);
    snprintf(w, sizeof w, "%s/w.txlm", dir);
    word_path = a;
    if (pack_case(argv[1], argv[2], "adaptive_word", a, NULL) || pack_case(argv[1], argv[2], "adaptive_word", w, "wt103") ||
        txlm_context_create(NULL, &ctx) || txlm_model_load(ctx, a, NULL, &word) || txlm_model_load(ctx, w, NULL, &wt)) {
        fprintf(stderr, "setup: %s\n", txlm_last_error());
        rm_tree(dir);
        return 1;
    }
    text_a = make_text(0), text_b = make_text(1);
    /* the answers of one thread */
    int setup_bad = txlm_tokenize(word, text_a, strlen(text_a), &ref.ids_word, &ref.n_word) ||
                    txlm_tokenize(wt, text_b, strlen(text_b), &ref.ids_wt, &ref.n_wt) ||
                    txlm_detokenize(word, ref.ids_word, ref.n_word, &ref.text_word) ||
                    txlm_detokenize(wt, ref.ids_wt, ref.n_wt, &ref.text_wt) || ref.n_word < PROMPT || session_work(word, &ref_session) || model_reads(word);
    TCHECK(!setup_bad && ref.n_word > 5000 && ref.n_wt > 5000);
    /* the same, four threads at once */
    pthread_t th[THREADS + 1];
    int failures[THREADS + 1] = {0};
    pthread_barrier_init(&start, NULL, THREADS);
    for (int i = 0; i < THREADS; i++) TCHECK(pthread_create(&th[i], NULL, worker, &failures[i]) == 0);
    TCHECK(pthread_create(&th[THREADS], NULL, context_churn, &failures[THREADS]) == 0);
    for (int i = 0; i <= THREADS; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i <= THREADS; i++) {
        if (failures[i]) fprintf(stderr, "thread %d: %d results differ from the single-threaded run\n", i, failures[i]);
        text_failures += failures[i];
    }
    TCHECK(txlm_context_validation_messages(ctx) == 0);
    printf("%d threads x %d rounds: %d results differ\n", THREADS, rounds, text_failures);
    txlm_free(ref.ids_word), txlm_free(ref.ids_wt), txlm_free(ref.text_word), txlm_free(ref.text_wt);
    free(text_a), free(text_b);
    txlm_model_free(word);
    txlm_model_free(wt);
    txlm_context_destroy(ctx);
    rm_tree(dir);
    free(dir);
    return text_failures != 0;
}
