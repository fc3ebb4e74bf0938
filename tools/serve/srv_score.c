/* POST /v1/score's answer: the surprisal of every token of a text, and
 * with "words" of every word (the tokens' summed, as txlm score --words
 * sums them), in bits unless "nats". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "srv_job.h"
#include "srv_reply.h"

static void number_or_null(cJSON *o, const char *name, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, name, v);
    else cJSON_AddNullToObject(o, name);
}

static cJSON *tokens(const srv_req *r, const srv_job *j, double unit)
{
    const txlm_token_spans *t = &r->spans;
    cJSON *arr = cJSON_CreateArray();
    for (size_t k = 0; k < t->n; k++) {
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
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

/* Each word's surprisal: the sum of its tokens' (null when one has none). */
static cJSON *words(const srv_req *r, const srv_job *j, double unit)
{
    const txlm_token_spans *t = &r->spans;
    double *sum = calloc(t->n_words + 1, sizeof *sum);
    size_t *count = calloc(t->n_words + 1, sizeof *count);
    if (!sum || !count) return free(sum), free(count), NULL;
    for (size_t k = 0; k < t->n; k++)
        if (t->word[k] != TXLM_NO_WORD) sum[t->word[k]] += j->in_lp[k], count[t->word[k]]++;
    cJSON *arr = cJSON_CreateArray();
    for (size_t w = 0; w < t->n_words; w++) {
        cJSON *o = cJSON_CreateObject();
        txlm_span sp = t->words[w];
        srv_json_add_text(o, "word", r->text + sp.begin, sp.end - sp.begin);
        cJSON_AddNumberToObject(o, "begin", (double)sp.begin);
        cJSON_AddNumberToObject(o, "end", (double)sp.end);
        cJSON_AddNumberToObject(o, "tokens", (double)count[w]);
        number_or_null(o, "surprisal", -sum[w] / unit);
        cJSON_AddItemToArray(arr, o);
    }
    free(sum);
    free(count);
    return arr;
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
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "object", "score");
    cJSON_AddStringToObject(o, "model", r->sv->name);
    cJSON_AddStringToObject(o, "unit", r->nats ? "nats" : "bits");
    cJSON_AddItemToObject(o, "tokens", tokens(r, j, unit));
    if (r->words) {
        cJSON *w = words(r, j, unit);
        if (w) cJSON_AddItemToObject(o, "words", w);
        else cJSON_AddNullToObject(o, "words");
    }
    cJSON *u = cJSON_AddObjectToObject(o, "usage");
    cJSON_AddNumberToObject(u, "prompt_tokens", (double)r->spans.n);
    cJSON_AddNumberToObject(u, "total_tokens", (double)r->spans.n);
    if (r->user) cJSON_AddStringToObject(o, "session", r->user->id);
    r->status = 200;
    r->body = srv_json_print(o, &r->body_len);
}
