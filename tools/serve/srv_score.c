/* POST /v1/score's answer: the surprisal of every token of a text, and
 * with "words" of every word (the tokens' summed, as txlm score --words
 * sums them), in bits unless "nats". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "srv_buf.h"
#include "srv_job.h"
#include "srv_reply.h"

static void number_or_null(cJSON *o, const char *name, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, name, v);
    else cJSON_AddNullToObject(o, name);
}

/* The answer is printed piece by piece, each token's and word's object
 * freed once printed: a whole tree of them took about 2 KB a token
 * (cJSON's nodes), 2 GB for a 1 MiB text of a character model, where the
 * printed answer is some 150 bytes a token. The bytes are those the tree
 * would print. */
static void add_printed(srv_buf *b, cJSON *item)
{
    size_t n;
    char *s = srv_json_print(item, &n);
    if (!s) {
        b->oom = 1;
        return;
    }
    srv_buf_add(b, s, n);
    free(s);
}

static void tokens(srv_buf *b, const srv_req *r, const srv_job *j, double unit)
{
    const txlm_token_spans *t = &r->spans;
    srv_buf_str(b, ",\"tokens\":[");
    for (size_t k = 0; k < t->n && !b->oom; k++) {
        cJSON *o = cJSON_CreateObject();
        size_t len = 0;
        const char *sym = txlm_token_symbol(r->sv->m, t->ids[k], &len);
        srv_json_add_text(o, "token", sym ? sym : "", sym ? len : 0);
        cJSON_AddNumberToObject(o, "id", t->ids[k]);
        srv_json_add_text(o, "text", r->text + t->spans[k].begin, t->spans[k].end - t->spans[k].begin);
        cJSON_AddNumberToObject(o, "begin", (double)t->spans[k].begin);
        cJSON_AddNumberToObject(o, "end", (double)t->spans[k].end);
        number_or_null(o, "logprob", j->in_lp[k]);
        number_or_null(o, "surprisal", -j->in_lp[k] / unit);
        if (k) srv_buf_str(b, ",");
        add_printed(b, o);
    }
    srv_buf_str(b, "]");
}

/* Each word's surprisal: the sum of its tokens' (null when one has none). */
static void words(srv_buf *b, const srv_req *r, const srv_job *j, double unit)
{
    const txlm_token_spans *t = &r->spans;
    double *sum = calloc(t->n_words + 1, sizeof *sum);
    size_t *count = calloc(t->n_words + 1, sizeof *count);
    if (!sum || !count) {
        free(sum), free(count);
        b->oom = 1;
        return;
    }
    for (size_t k = 0; k < t->n; k++)
        if (t->word[k] != TXLM_NO_WORD) sum[t->word[k]] += j->in_lp[k], count[t->word[k]]++;
    srv_buf_str(b, ",\"words\":[");
    for (size_t w = 0; w < t->n_words && !b->oom; w++) {
        cJSON *o = cJSON_CreateObject();
        txlm_span sp = t->words[w];
        srv_json_add_text(o, "word", r->text + sp.begin, sp.end - sp.begin);
        cJSON_AddNumberToObject(o, "begin", (double)sp.begin);
        cJSON_AddNumberToObject(o, "end", (double)sp.end);
        cJSON_AddNumberToObject(o, "tokens", (double)count[w]);
        number_or_null(o, "surprisal", -sum[w] / unit);
        if (w) srv_buf_str(b, ",");
        add_printed(b, o);
    }
    srv_buf_str(b, "]");
    free(sum);
    free(count);
}

void srv_score_answer(srv_req *r)
{
    const srv_job *j = &r->jobs[0];
    if (j->error) {
        r->status = j->error_status;
        r->body = srv_error_body(r->status, NULL, j->error, &r->body_len);
        return;
    }
    double unit = r->nats ? 1.0 : log(2.0);
    srv_buf b = {0};
    /* {"object":"score","model":...,"unit":...  then the arrays, usage and session, then } */
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "object", "score");
    cJSON_AddStringToObject(o, "model", r->sv->name);
    cJSON_AddStringToObject(o, "unit", r->nats ? "nats" : "bits");
    add_printed(&b, o);
    if (!b.oom) b.p[--b.len] = 0; /* its closing brace */
    tokens(&b, r, j, unit);
    if (r->words) words(&b, r, j, unit);
    cJSON *u = cJSON_CreateObject();
    cJSON_AddNumberToObject(u, "prompt_tokens", (double)r->spans.n);
    cJSON_AddNumberToObject(u, "total_tokens", (double)r->spans.n);
    srv_buf_str(&b, ",\"usage\":");
    add_printed(&b, u);
    if (r->user) {
        srv_buf_str(&b, ",\"session\":");
        add_printed(&b, cJSON_CreateString(r->user->id));
    }
    srv_buf_str(&b, "}");
    if (b.oom) {
        srv_buf_free(&b);
        r->status = 500;
        r->body = srv_error_body(r->status, NULL, "out of memory writing the answer", &r->body_len);
        return;
    }
    r->status = 200;
    r->body = b.p, r->body_len = b.len;
}
