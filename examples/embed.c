/* A tiny chat-style loop on the txlm C API: each line you type is fed to
 * the model (with the memory of everything before), then the model
 * continues until it ends the line or writes 60 tokens.
 *
 *   cc embed.c $(pkg-config --cflags --libs txlm) -o embed
 *   (for a prefix the loader does not search, add
 *   -Wl,-rpath,"$(pkg-config --variable=libdir txlm)": README.md, "Installing")
 *   ./embed model.txlm [seed]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txlm.h>

static int check(txlm_status st, const char *what)
{
    if (st != TXLM_OK) fprintf(stderr, "%s: %s (%s)\n", what, txlm_last_error(), txlm_status_string(st));
    return st != TXLM_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL.txlm [seed]\n", argv[0]);
        return 2;
    }
    txlm_context *ctx = NULL;
    txlm_model *model = NULL;
    txlm_session *session = NULL;
    txlm_detokenizer *detok = NULL;
    int rc = 1;
    if (check(txlm_context_create(NULL, &ctx), "device") || check(txlm_model_load(ctx, argv[1], NULL, &model), "model") ||
        check(txlm_session_create(model, NULL, &session), "session") ||
        check(txlm_detokenizer_create(model, &detok), "detokenizer"))
        goto out;
    txlm_session_set_seed(session, argc > 2 ? strtoull(argv[2], NULL, 10) : 1);
    txlm_model_params params;
    txlm_model_get_params(model, &params);
    txlm_sampling sampling = {.temperature = 0.8f, .top_k = 40};

    char line[4096];
    while (printf("> "), fflush(stdout), fgets(line, sizeof line, stdin)) {
        int32_t *ids = NULL;
        size_t n = 0;
        if (check(txlm_tokenize(model, line, strlen(line), &ids, &n), "tokenize")) goto out;
        /* feed in pieces no longer than a segment; only the last position's output matters */
        for (size_t at = 0; at < n; at += 64) {
            uint32_t len = (uint32_t)(n - at < 64 ? n - at : 64);
            if (check(txlm_session_feed_rows(session, ids + at, len, len, NULL), "feed")) goto out;
        }
        txlm_free(ids);
        for (int i = 0; i < 60; i++) {
            int32_t tok;
            const char *piece;
            size_t len;
            if (check(txlm_session_sample(session, &sampling, &tok), "sample")) goto out;
            if (check(txlm_session_feed_rows(session, &tok, 1, 1, NULL), "feed")) goto out;
            if (tok == params.eos_id) break;
            /* the streaming detokenizer spaces words as txlm_detokenize of the whole reply would */
            if (check(txlm_detokenizer_push(detok, tok, &piece, &len), "detokenize")) goto out;
            fwrite(piece, 1, len, stdout);
        }
        const char *rest;
        size_t len;
        if (!txlm_detokenizer_flush(detok, &rest, &len)) fwrite(rest, 1, len, stdout);
        printf("\n");
    }
    rc = 0;
out:
    txlm_detokenizer_free(detok);
    txlm_session_free(session);
    txlm_model_free(model);
    txlm_context_destroy(ctx);
    return rc;
}
