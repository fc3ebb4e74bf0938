/* txlm generate --streams N (gen_batch.h): every stream its own session,
 * seed, penalty window, detokenizer and stop strings, its text gathered
 * in memory and printed once all are done. */
#include "gen_batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_batch.h"
#include "cli_scoring.h"

typedef struct gb_stream {
    gen_stream st;
    FILE *mem;    /* st.out: the text so far */
    char *text;
    size_t len;
    size_t made;
} gb_stream;

typedef struct gen_batch {
    cli_batch cb;
    gb_stream *x;
    uint32_t *live;                 /* the streams still generating, in order */
    uint32_t n_live;
    txlm_session **s;               /* per step: the live streams' sessions, */
    txlm_repeat_penalty *pen;       /* penalties, */
    const txlm_repeat_penalty **pp;
    int32_t *tok;                   /* tokens drawn */
    txlm_stream_feed *f;            /* and feeds */
    cli_progress pb;
} gen_batch;

static int alloc_all(gen_batch *b, uint32_t n)
{
    b->x = calloc(n, sizeof *b->x);
    b->live = calloc(n, sizeof *b->live);
    b->s = calloc(n, sizeof *b->s);
    b->pen = calloc(n, sizeof *b->pen);
    b->pp = calloc(n, sizeof *b->pp);
    b->tok = calloc(n, sizeof *b->tok);
    b->f = calloc(n, sizeof *b->f);
    return b->x && b->live && b->s && b->pen && b->pp && b->tok && b->f ? 0 : cli_error("out of memory");
}

static void free_all(gen_batch *b)
{
    for (uint32_t i = 0; b->x && i < b->cb.n; i++) {
        gen_stream_close(&b->x[i].st);
        if (b->x[i].mem) fclose(b->x[i].mem);
        free(b->x[i].text);
    }
    cli_batch_free(&b->cb);
    free(b->x), free(b->live), free(b->s), free(b->pen), free(b->pp), free(b->tok), free(b->f);
}

/* The prompt through every session, one batch per segment. 0, 130 on Ctrl-C, else 1. */
static int feed_prompt(gen_batch *b, const gen_batch_job *j)
{
    for (size_t at = 0; at < j->n_ids;) {
        uint32_t len = j->n_ids - at < j->so->max_segment ? (uint32_t)(j->n_ids - at) : j->so->max_segment;
        for (uint32_t i = 0; i < b->cb.n; i++)
            b->f[i] = (txlm_stream_feed){.session = b->cb.s[i], .tokens = j->ids + at, .n = len, .first_row = len};
        txlm_status e = txlm_batch_feed(b->cb.b, b->f, b->cb.n);
        if (e) return cli_lib_error(e, "feeding the prompt");
        at += len;
        cli_progress_show(&b->pb, (double)at / (double)j->n_ids, at * b->cb.n, "feeding the prompt", at == j->n_ids);
        if (gen_interrupted) return 130;
    }
    return 0;
}

/* Stream i's output: its seed, its memory buffer, the prompt's tokens and last line. */
static int open_stream(gen_batch *b, const gen_batch_job *j, uint32_t i, size_t from)
{
    gb_stream *x = &b->x[i];
    txlm_session_set_seed(b->cb.s[i], j->seed + i);
    if (gen_stream_open(&x->st, j->m, j->g)) return 1;
    if (!(x->mem = open_memstream(&x->text, &x->len))) return cli_error("out of memory");
    x->st.out = x->mem;
    gen_stream_remember(&x->st, j->ids, j->n_ids);
    b->live[b->n_live++] = i;
    return j->prompt_len ? gen_stream_prompt(&x->st, j->m, j->ids, from, j->n_ids) : 0;
}

/* One step: a token drawn for every live stream and fed; a stream with
 * its tokens or a stop string leaves. */
static int step(gen_batch *b, const gen_opts *g, size_t *made)
{
    for (uint32_t k = 0; k < b->n_live; k++) {
        gb_stream *x = &b->x[b->live[k]];
        b->s[k] = b->cb.s[b->live[k]];
        b->pen[k] = (txlm_repeat_penalty){g->repeat_penalty, x->st.window, x->st.n_window};
        b->pp[k] = &b->pen[k];
    }
    txlm_status e = txlm_batch_sample(b->cb.b, b->s, b->n_live, &g->samp, b->pp, b->tok);
    if (e) return cli_lib_error(e, "sampling");
    for (uint32_t k = 0; k < b->n_live; k++)
        b->f[k] = (txlm_stream_feed){.session = b->s[k], .tokens = &b->tok[k], .n = 1, .first_row = 1};
    if ((e = txlm_batch_feed(b->cb.b, b->f, b->n_live))) return cli_lib_error(e, "running the model");
    uint32_t kept = 0;
    for (uint32_t k = 0; k < b->n_live; k++) {
        gb_stream *x = &b->x[b->live[k]];
        int stopped = 0;
        x->made++, ++*made;
        if (gen_stream_take(&x->st, b->tok[k], &stopped)) return 1;
        if (stopped || (g->n_gen >= 0 && x->made >= (size_t)g->n_gen)) continue;
        b->live[kept++] = b->live[k];
    }
    b->n_live = kept;
    return 0;
}

/* Every stream's text, one after another. */
static int print_all(gen_batch *b, const gen_batch_job *j)
{
    for (uint32_t i = 0; i < b->cb.n; i++) {
        gb_stream *x = &b->x[i];
        if (gen_stream_finish(&x->st) || fflush(x->mem)) return 1;
        printf("--- stream %u (seed %llu)\n", i, (unsigned long long)(j->seed + i));
        if (j->display_prompt && j->prompt_len) fwrite(j->prompt, 1, j->prompt_len, stdout);
        fwrite(x->text, 1, x->len, stdout);
        fputc('\n', stdout);
    }
    return fflush(stdout) ? cli_error("writing the output failed") : 0;
}

int gen_batch_run(const gen_batch_job *j, gen_batch_times *t)
{
    gen_batch b = {0};
    memset(t, 0, sizeof *t);
    if (cli_batch_open(&b.cb, j->m, j->streams, j->so)) return 1;
    int rc = alloc_all(&b, j->streams);
    txlm_model_params p;
    txlm_model_get_params(j->m, &p);
    /* continue the prompt's last line, so spacing and punctuation join up */
    size_t from = j->n_ids;
    while (j->prompt_len && from > 0 && j->ids[from - 1] != p.eos_id) from--;
    for (uint32_t i = 0; !rc && i < j->streams; i++) rc = open_stream(&b, j, i, from);
    double t0 = cli_now();
    cli_progress_start(&b.pb, j->progress);
    if (!rc) rc = feed_prompt(&b, j);
    t->prompt_s = cli_now() - t0;
    t0 = cli_now();
    if (j->g->n_gen == 0) b.n_live = 0;
    while (!rc && b.n_live && !gen_interrupted) {
        rc = step(&b, j->g, &t->made);
        cli_progress_show(&b.pb, j->g->n_gen > 0 ? (double)t->made / ((double)j->g->n_gen * j->streams) : -1, t->made,
                          "generated", !b.n_live);
    }
    cli_progress_end(&b.pb);
    t->gen_s = cli_now() - t0;
    if (!rc || rc == 130) {
        int prc = print_all(&b, j);
        if (prc) rc = prc;
        else if (gen_interrupted) rc = 130;
    }
    free_all(&b);
    return rc;
}
