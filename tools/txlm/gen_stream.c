/* A reply streamed token by token (gen_common.h): each token is drawn,
 * fed, and its text goes through the streaming detokenizer (final text
 * only: word models re-attach punctuation, wt103 models join "1 @,@ 000"),
 * then through the stop strings (text that may begin one is held until
 * it is certain), then out (standard output, or a stream's own buffer),
 * at a cost per token that does not grow with the reply. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gen_common.h"

int gen_stream_open(gen_stream *st, txlm_model *m, const gen_opts *g)
{
    memset(st, 0, sizeof *st);
    txlm_status e = txlm_detokenizer_create(m, &st->d);
    if (!e) e = txlm_stopper_create((const char *const *)g->stops, g->n_stops, &st->stop);
    if (e) return cli_lib_error(e, "preparing the output");
    if (g->repeat_penalty != 1 && g->repeat_last_n) {
        if (!(st->window = calloc(g->repeat_last_n, sizeof *st->window))) return cli_error("out of memory");
        st->cap_window = g->repeat_last_n;
    }
    st->out = stdout;
    return 0;
}

void gen_stream_close(gen_stream *st)
{
    txlm_detokenizer_free(st->d);
    txlm_stopper_free(st->stop);
    free(st->window);
    memset(st, 0, sizeof *st);
}

void gen_stream_remember(gen_stream *st, const int32_t *ids, size_t n)
{
    for (size_t i = 0; st->cap_window && i < n; i++) {
        if (st->n_window == st->cap_window) {
            memmove(st->window, st->window + 1, (st->cap_window - 1) * sizeof *st->window);
            st->n_window--;
        }
        st->window[st->n_window++] = ids[i];
    }
}

int gen_stream_prompt(gen_stream *st, txlm_model *m, const int32_t *ids, size_t from, size_t n)
{
    char *text = NULL;
    txlm_status s = txlm_detokenize(m, ids + from, n - from, &text);
    if (s) return cli_lib_error(s, "detokenizing");
    st->skip = strlen(text);
    txlm_free(text);
    for (size_t i = from; i < n; i++) {
        const char *piece;
        size_t len;
        if ((s = txlm_detokenizer_push(st->d, ids[i], &piece, &len))) return cli_lib_error(s, "detokenizing");
        st->skip -= len < st->skip ? len : st->skip;
    }
    return 0;
}

/* Detokenized text in: what the prompt gave back is skipped, the rest goes
 * through the stop strings to st->out. */
static int emit(gen_stream *st, const char *piece, size_t len, int *stopped)
{
    size_t drop = len < st->skip ? len : st->skip;
    st->skip -= drop;
    st->piece = piece + drop, st->piece_len = len - drop;
    st->passed += len - drop;
    const char *out;
    size_t n;
    txlm_status s = txlm_stopper_push(st->stop, piece + drop, len - drop, &out, &n, stopped);
    if (s) return cli_lib_error(s, "stop strings");
    fwrite(out, 1, n, st->out);
    return 0;
}

int gen_stream_finish(gen_stream *st)
{
    const char *piece, *out;
    size_t len, n;
    int stopped = 0;
    txlm_status s = txlm_detokenizer_flush(st->d, &piece, &len);
    if (!s && emit(st, piece, len, &stopped)) return 1;
    if (!s) s = txlm_stopper_flush(st->stop, &out, &n);
    if (s) return cli_lib_error(s, "finishing the output");
    fwrite(out, 1, n, st->out);
    fflush(st->out);
    st->skip = 0;
    st->passed = 0;
    return 0;
}

int gen_stream_take(gen_stream *st, int32_t tok, int *stopped)
{
    gen_stream_remember(st, &tok, 1);
    const char *piece;
    size_t len;
    txlm_status e = txlm_detokenizer_push(st->d, tok, &piece, &len);
    if (e) return gen_stream_finish(st), cli_lib_error(e, "detokenizing");
    return emit(st, piece, len, stopped);
}

int gen_stream_run(gen_stream *st, txlm_session *s, const gen_opts *g, volatile sig_atomic_t *interrupted, size_t *made)
{
    txlm_repeat_penalty pen = {g->repeat_penalty, NULL, 0};
    int stopped = 0;
    *made = 0;
    while ((g->n_gen < 0 || *made < (size_t)g->n_gen) && !stopped && !*interrupted) {
        int32_t tok;
        pen.tokens = st->window, pen.n = st->n_window;
        txlm_status e = txlm_session_sample_penalized(s, &g->samp, &pen, &tok);
        if (e) return gen_stream_finish(st), cli_lib_error(e, "sampling");
        if ((e = txlm_session_feed_rows(s, &tok, 1, 1, NULL))) return gen_stream_finish(st), cli_lib_error(e, "running the model");
        ++*made;
        if (gen_stream_take(st, tok, &stopped)) return 1;
        fflush(st->out);
    }
    return gen_stream_finish(st);
}
