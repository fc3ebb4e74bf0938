/* txlm eval --batch N (eval_batch.h): the token stream cut as the authors'
 * data_utils.py LMOrderedIterator cuts it for eval.py (bsz parts of
 * n_step = tokens // bsz, the rest dropped; part k is tokens
 * [k n_step, (k + 1) n_step)), then within every part segments of tgt_len
 * inputs scored against the next tokens, the last one shorter: every
 * token of a part but its first is a target. */
#include "eval_batch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_batch.h"

static int push_line(void *user, const char *line, size_t len)
{
    cli_scorer *sc = user;
    return cli_segments_push_text(&sc->q, sc->m, line, len);
}

/* One step: segment [at, at + len) of every part, through the batch. */
static int feed_step(cli_batch *cb, const int32_t *tok, uint64_t part, uint64_t at, uint32_t len, float *lp,
                     txlm_stream_feed *f)
{
    for (uint32_t k = 0; k < cb->n; k++) {
        const int32_t *in = tok + k * part + at;
        f[k] = (txlm_stream_feed){.session = cb->s[k], .tokens = in, .n = len, .targets = in + 1,
                                  .target_logprobs = lp + k * (part - 1) + at};
    }
    txlm_status st = txlm_batch_feed(cb->b, f, cb->n);
    return st ? cli_lib_error(st, "running the model") : 0;
}

/* The progress bar with the running figure over what was scored. */
static void show(cli_progress *pb, const cli_scorer *sc, double frac, uint64_t n, double sum, int final)
{
    char extra[64];
    double mean = n ? sum / (double)n : 0;
    int chars = sc->p.tokenizer != TXLM_TOKENIZER_WORD;
    snprintf(extra, sizeof extra, "%s %.4f", chars ? "bpc" : "PPL", chars ? mean / log(2.0) : exp(mean));
    cli_progress_show(pb, frac, n, extra, final);
}

/* Every step over the parts; out->per_stream gets the targets of each part scored. */
static int score_parts(cli_text_run *r, cli_scorer *sc, cli_batch *cb, uint64_t part, eval_batch_out *out)
{
    txlm_stream_feed *f = malloc(cb->n * sizeof *f);
    if (!f) return cli_error("out of memory");
    cli_progress pb;
    cli_progress_start(&pb, r->progress);
    double sum = 0;
    uint64_t at = 0;
    int rc = 0;
    while (!rc && !cli_interrupted && at < part - 1) {
        uint32_t len = part - 1 - at < sc->q.seg ? (uint32_t)(part - 1 - at) : sc->q.seg;
        if ((rc = feed_step(cb, sc->q.buf, part, at, len, out->nll, f))) break;
        for (uint32_t k = 0; k < cb->n; k++)
            for (uint32_t i = 0; i < len; i++) sum -= out->nll[k * (part - 1) + at + i];
        at += len;
        show(&pb, sc, (double)at / (double)(part - 1), at * cb->n, sum, 0);
    }
    show(&pb, sc, (double)at / (double)(part - 1), at * cb->n, sum, 1);
    cli_progress_end(&pb);
    free(f);
    out->per_stream = at;
    return rc;
}

/* The log-probabilities of the targets scored, as NLLs packed part after part; <unk> targets counted. */
static void pack(const cli_scorer *sc, uint32_t streams, uint64_t part, eval_batch_out *out)
{
    uint64_t done = out->per_stream;
    for (uint32_t k = 0; k < streams; k++)
        for (uint64_t i = 0; i < done; i++) {
            out->nll[k * done + i] = -out->nll[k * (part - 1) + i];
            out->unk += sc->q.buf[k * part + i + 1] == sc->p.unk_id;
        }
    out->n = done * streams;
}

int eval_batch_score(cli_text_run *r, uint32_t streams, cli_scorer *sc, eval_batch_out *out)
{
    memset(out, 0, sizeof *out);
    if (cli_open_model(r->model[0], &r->mo, &sc->ctx, &sc->m)) return 1;
    txlm_model_get_params(sc->m, &sc->p);
    sc->q.seg = cli_text_run_segment(r, &sc->p);
    double t0 = cli_now();
    if (cli_each_line(r, push_line, sc) || cli_interrupted) return cli_interrupted ? 0 : 1;
    uint64_t part = sc->q.n / streams;
    out->tokens = sc->q.n;
    out->dropped = sc->q.n - part * streams;
    if (part < 2)
        return cli_error("%s: %llu tokens cut into %u parts: each part needs at least two tokens (fewer streams)",
                         r->file, (unsigned long long)sc->q.n, streams);
    cli_batch cb;
    if (cli_batch_open(&cb, sc->m, streams, &r->so)) return 1;
    int rc = 0;
    if (!(out->nll = malloc(streams * (part - 1) * sizeof *out->nll))) rc = cli_error("out of memory");
    if (!rc) rc = score_parts(r, sc, &cb, part, out);
    cli_batch_free(&cb);
    if (!rc) pack(sc, streams, part, out);
    out->secs = cli_now() - t0;
    return rc;
}
