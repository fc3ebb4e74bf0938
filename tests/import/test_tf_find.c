/* TensorFlow bundles: txlm_tf_bundle_find (a binary search over the
 * entries, in the order the table reader checked) finds what a linear
 * search finds, for every entry of every bundle in tf_ckpts/ and for names
 * around them that are not there; an index whose keys are out of order is
 * refused naming the file and the entry; and the CRC-32C table and the
 * reader are used from several threads at once from their first use (run
 * under ThreadSanitizer by .ci/run: the table is built once, without a
 * race).
 *   usage: test_import_tf_find TF_CKPTS_DIR */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <txlm_status.h>

#include "tf_bundle.h"
#include "tf_crc32c.h"
#include "../common/check.h"

static const char *dir;

/* The bundles of tf_ckpts/ that open (bad/ ones refused at their entries are left out). */
static const char *const bundles[] = {
    "wt103/model/model.ckpt-0",       "lm1b/model/model.ckpt-1191000", "enwik8/model/model.ckpt-0",
    "text8/model/model.ckpt-0",       "div1proj/model/model.ckpt-5",   "bad/missing/model.ckpt-0",
    "bad/unknown/model.ckpt-0",       "bad/shape/model.ckpt-0",        "bad/dtype/model.ckpt-0",
};
#define N_BUNDLES (sizeof bundles / sizeof *bundles)

typedef struct path_buf {
    char s[4096];
} path_buf;

static const char *prefix_of(const char *name, path_buf *p)
{
    snprintf(p->s, sizeof p->s, "%s/%s", dir, name);
    return p->s;
}

static const txlm_tf_tensor *linear_find(const txlm_tf_bundle *b, const char *name)
{
    for (uint32_t i = 0; i < txlm_tf_bundle_count(b); i++)
        if (!strcmp(txlm_tf_bundle_at(b, i)->name, name)) return txlm_tf_bundle_at(b, i);
    return NULL;
}

/* find and the linear search agree on name; 1 when so. */
static int agree(const txlm_tf_bundle *b, const char *name)
{
    return txlm_tf_bundle_find(b, name) == linear_find(b, name);
}

/* Every entry, and names beside each: cut short, one byte longer, its
 * last byte one less and one more, the empty name and names past the last. */
static void lookups(const char *name)
{
    txlm_tf_bundle *b = NULL;
    txlm_err err = {0, ""};
    path_buf p;
    int rc = txlm_tf_bundle_open(prefix_of(name, &p), &b, &err);
    CHECK(rc == 0, "%s: %s", name, err.msg);
    if (rc) return;
    uint32_t n = txlm_tf_bundle_count(b), checked = 0, bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        const char *t = txlm_tf_bundle_at(b, i)->name;
        size_t len = strlen(t);
        char *v = malloc(len + 2);
        bad += txlm_tf_bundle_find(b, t) != txlm_tf_bundle_at(b, i);
        memcpy(v, t, len + 1);
        v[len - 1] = (char)(v[len - 1] - 1);
        bad += !agree(b, v);
        v[len - 1] = (char)(v[len - 1] + 2);
        bad += !agree(b, v);
        memcpy(v, t, len), v[len] = '0', v[len + 1] = 0;
        bad += !agree(b, v);
        v[len - 1] = 0;
        bad += !agree(b, v);
        checked += 5;
        free(v);
    }
    bad += !agree(b, "") + !agree(b, "~") + !agree(b, "\x7f\x7f") + (txlm_tf_bundle_find(b, "no/such/variable") != NULL);
    CHECK(n > 10 && bad == 0, "%s: %u entries, %u of %u lookups differ from the linear search", name, n, bad, checked + 4);
    txlm_tf_bundle_free(b);
}

/* An index whose second and third keys are swapped (gen.py, bad/unsorted). */
static void unsorted(void)
{
    txlm_tf_bundle *b = NULL;
    txlm_err err = {0, ""};
    path_buf p;
    int rc = txlm_tf_bundle_open(prefix_of("bad/unsorted/model.ckpt-0", &p), &b, &err);
    CHECK(rc == TXLM_ERR_FORMAT && !b && strstr(err.msg, "bad/unsorted/model.ckpt-0.index: entry '") &&
              strstr(err.msg, "is not after the entry before it ('") && !strchr(err.msg, '\n'),
          "unsorted index: status %d, \"%s\"", rc, err.msg);
    txlm_tf_bundle_free(b);
}

#define THREADS 8
/* the threads spin until all have arrived and the main thread sets go and
 * starts too: it and the threads on the other cores then start within
 * nanoseconds of each other (a barrier wakes them one by one, microseconds
 * apart, time enough for the first to finish) */
static atomic_int arrived, go;

typedef struct worker {
    uint32_t crc;       /* of "123456789" */
    int opened, found;  /* bundles opened and every entry found in each */
} worker;

/* The CRC of "123456789" and every bundle opened, every entry found. */
static void use(worker *w)
{
    /* all threads at once, the table's first use among them */
    w->crc = txlm_crc32c_extend(0, "123456789", 9);
    for (size_t i = 0; i < N_BUNDLES; i++) {
        txlm_tf_bundle *b = NULL;
        txlm_err err = {0, ""};
        path_buf p;
        if (txlm_tf_bundle_open(prefix_of(bundles[i], &p), &b, &err)) continue;
        w->opened++;
        uint32_t found = 0;
        for (uint32_t k = 0; k < txlm_tf_bundle_count(b); k++)
            found += txlm_tf_bundle_find(b, txlm_tf_bundle_at(b, k)->name) == txlm_tf_bundle_at(b, k);
        w->found += found == txlm_tf_bundle_count(b);
        txlm_tf_bundle_free(b);
    }
}

static void *work(void *arg)
{
    atomic_fetch_add(&arrived, 1);
    while (!atomic_load(&go)) continue;
    use(arg);
    return NULL;
}

static void threads(void)
{
    pthread_t t[THREADS];
    worker w[THREADS];
    memset(w, 0, sizeof w);
    for (int i = 1; i < THREADS; i++) pthread_create(&t[i], NULL, work, &w[i]);
    while (atomic_load(&arrived) < THREADS - 1) sched_yield();
    atomic_store(&go, 1);
    use(&w[0]);
    int ok = 1;
    for (int i = 0; i < THREADS; i++) {
        if (i) pthread_join(t[i], NULL);
        /* the check value of CRC-32C (RFC 3720, B.4) */
        ok &= w[i].crc == 0xE3069283u && w[i].opened == (int)N_BUNDLES && w[i].found == (int)N_BUNDLES;
    }
    CHECK(ok, "the CRC or the bundles from %d threads at once", THREADS);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s TF_CKPTS_DIR\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    threads(); /* first: the CRC table's first use is the threads' */
    for (size_t i = 0; i < N_BUNDLES; i++) lookups(bundles[i]);
    unsorted();
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures != 0;
}
