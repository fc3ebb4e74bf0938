/* POST /v1/completions' fields (srv_params.h). */
#include "srv_params.h"

#include <stdlib.h>
#include <string.h>

/* "prompt", or "prompt[k]" when there are several, for messages. */
static void prompt_name(const srv_gen *g, uint32_t k, char what[32])
{
    snprintf(what, 32, g->n_prompts > 1 ? "prompt[%u]" : "prompt", k);
}

/* One prompt: a string (tokenized) or an array of token ids. */
static int one_prompt(const srv *sv, const cJSON *v, srv_gen *g, uint32_t k, srv_err *e)
{
    char what[32];
    prompt_name(g, k, what);
    if (cJSON_IsArray(v)) return srv_json_ids(v, what, txlm_vocab_size(sv->m), &g->ids[k], &g->n_ids[k], e) < 0 ? -1 : 0;
    if (!cJSON_IsString(v))
        return srv_fail(e, 400, "prompt", g->n_prompts > 1 ? "%s must be a string or an array of token ids"
                        : "%s must be a string, an array of token ids, or an array of prompts (strings or arrays of token ids)",
                        what);
    size_t len = strlen(v->valuestring);
    if (!(g->texts[k] = strdup(v->valuestring))) return srv_fail(e, 500, NULL, "out of memory");
    if (len == 0) return 0;
    int32_t *ids = NULL;
    txlm_status st = txlm_tokenize(sv->m, v->valuestring, len, &ids, &g->n_ids[k]);
    if (st) return srv_fail(e, 400, "prompt", "%s: %s", what, txlm_last_error());
    g->ids[k] = malloc((g->n_ids[k] + 1) * sizeof *ids);
    if (g->ids[k]) memcpy(g->ids[k], ids, g->n_ids[k] * sizeof *ids);
    txlm_free(ids);
    return g->ids[k] ? 0 : srv_fail(e, 500, NULL, "out of memory");
}

/* "prompt": a string, token ids, or a list of either (one choice set each). */
static int prompts(const srv *sv, const cJSON *o, srv_gen *g, srv_err *e)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "prompt");
    int many = cJSON_IsArray(p) && cJSON_GetArraySize(p) > 0 &&
               (cJSON_IsString(cJSON_GetArrayItem(p, 0)) || cJSON_IsArray(cJSON_GetArrayItem(p, 0)));
    if (cJSON_IsArray(p) && cJSON_GetArraySize(p) == 0) return srv_fail(e, 400, "prompt", "prompt is an empty array");
    g->n_prompts = many ? (uint32_t)cJSON_GetArraySize(p) : 1;
    if (g->n_prompts > sv->cfg.max_n)
        return srv_fail(e, 400, "prompt", "%u prompts: at most %u choices a request (--max-n)", g->n_prompts, sv->cfg.max_n);
    g->ids = calloc(g->n_prompts, sizeof *g->ids);
    g->n_ids = calloc(g->n_prompts, sizeof *g->n_ids);
    g->texts = calloc(g->n_prompts, sizeof *g->texts);
    if (!g->ids || !g->n_ids || !g->texts) return srv_fail(e, 500, NULL, "out of memory");
    if (!p || cJSON_IsNull(p)) return 0; /* no prompt: a text's start, as txlm generate without -p */
    if (!many) return one_prompt(sv, p, g, 0, e);
    for (uint32_t k = 0; k < g->n_prompts; k++)
        if (one_prompt(sv, cJSON_GetArrayItem(p, (int)k), g, k, e)) return -1;
    return 0;
}

static int stops(const cJSON *o, srv_gen *g, srv_err *e)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "stop");
    if (!s || cJSON_IsNull(s)) return 0;
    if (!cJSON_IsString(s) && !cJSON_IsArray(s)) return srv_fail(e, 400, "stop", "stop must be a string or an array of strings");
    if (cJSON_IsArray(s) && cJSON_GetArraySize(s) > GEN_MAX_STOPS)
        return srv_fail(e, 400, "stop", "%d stop strings: at most %d", cJSON_GetArraySize(s), GEN_MAX_STOPS);
    const cJSON *v = cJSON_IsString(s) ? s : s->child;
    for (; v; v = cJSON_IsString(s) ? NULL : v->next) {
        if (!cJSON_IsString(v)) return srv_fail(e, 400, "stop", "stop[%zu] must be a string", g->g.n_stops);
        if (!*v->valuestring) return srv_fail(e, 400, "stop", "an empty stop string would stop at once");
        if (!(g->g.stops[g->g.n_stops] = strdup(v->valuestring))) return srv_fail(e, 500, NULL, "out of memory");
        g->g.n_stops++;
    }
    return 0;
}

/* Fields OpenAI defines that txlm does not do: refused unless they ask for nothing. */
static int unsupported(const cJSON *o, srv_err *e)
{
    float f = 0;
    const char *suffix = NULL;
    int64_t best_of = 0;
    if (srv_json_float(o, "frequency_penalty", -2, 2, &f, e) < 0 || f != 0)
        return e->status ? -1 : srv_fail(e, 400, "frequency_penalty", "frequency_penalty is not supported: use repeat_penalty");
    if (srv_json_float(o, "presence_penalty", -2, 2, &f, e) < 0 || f != 0)
        return e->status ? -1 : srv_fail(e, 400, "presence_penalty", "presence_penalty is not supported: use repeat_penalty");
    if (srv_json_string(o, "suffix", &suffix, e) < 0 || (suffix && *suffix))
        return e->status ? -1 : srv_fail(e, 400, "suffix", "suffix is not supported: the model continues text, it does not fill gaps");
    const cJSON *lb = cJSON_GetObjectItemCaseSensitive(o, "logit_bias");
    if (lb && !cJSON_IsNull(lb) && !(cJSON_IsObject(lb) && !lb->child))
        return srv_fail(e, 400, "logit_bias", "logit_bias is not supported");
    if (srv_json_int(o, "best_of", 1, 1, &best_of, e) < 0) return srv_fail(e, 400, "best_of", "best_of is not supported (only 1)");
    return 0;
}

static int sampling(const srv *sv, const cJSON *o, srv_gen *g, srv_err *e)
{
    int64_t v = 0;
    txlm_sampling *s = &g->g.samp;
    int top_p = srv_json_float(o, "top_p", 0, 1, &s->top_p, e);
    if (srv_json_float(o, "temperature", 0, 2, &s->temperature, e) < 0 || top_p < 0) return -1;
    if (top_p && s->top_p == 0) s->temperature = 0, s->top_p = 1; /* the smallest set with probability 0: the most likely token */
    if (srv_json_int(o, "top_k", 0, txlm_vocab_size(sv->m), &v, e) < 0) return -1;
    s->top_k = (uint32_t)v;
    if (srv_json_float(o, "repeat_penalty", 1e-3, 1e3, &g->g.repeat_penalty, e) < 0) return -1;
    v = g->g.repeat_last_n;
    if (srv_json_int(o, "repeat_last_n", 0, 65536, &v, e) < 0) return -1;
    g->g.repeat_last_n = (uint32_t)v;
    if ((v = srv_json_u64(o, "seed", &g->g.seed, e)) < 0) return -1;
    g->g.seed_given = v == 1;
    return 0;
}

static int output(const srv *sv, const cJSON *o, srv_gen *g, srv_err *e)
{
    int64_t v = 16; /* OpenAI's default */
    if (srv_json_int(o, "max_tokens", 0, sv->cfg.max_tokens, &v, e) < 0) return -1;
    g->g.n_gen = v;
    v = 1;
    if (srv_json_int(o, "n", 1, sv->cfg.max_n, &v, e) < 0) return -1;
    g->n = (uint32_t)v;
    v = -1;
    if (srv_json_int(o, "logprobs", 0, sv->cfg.max_logprobs, &v, e) < 0) return -1;
    g->logprobs = (int)v;
    if (srv_json_bool(o, "echo", &g->echo, e) < 0 || srv_json_bool(o, "stream", &g->stream, e) < 0) return -1;
    const cJSON *so = cJSON_GetObjectItemCaseSensitive(o, "stream_options");
    if (so && !cJSON_IsNull(so)) {
        if (!cJSON_IsObject(so)) return srv_fail(e, 400, "stream_options", "stream_options must be an object");
        if (srv_json_bool(so, "include_usage", &g->include_usage, e) < 0) return -1;
    }
    return 0;
}

/* Echo with logprobs answers every prompt token with its top list (some
 * kilobytes each, per choice): a prompt may have no more tokens than a
 * choice may generate, or a body of a megabyte would take gigabytes. */
static int echo_limit(const srv *sv, const srv_gen *g, srv_err *e)
{
    for (uint32_t k = 0; g->echo && g->logprobs >= 0 && k < g->n_prompts; k++) {
        if (g->n_ids[k] <= sv->cfg.max_tokens) continue;
        char what[32];
        prompt_name(g, k, what);
        return srv_fail(e, 400, "prompt", "%s: %zu tokens: with echo and logprobs a prompt has at most %u (--max-tokens); "
                        "/v1/score takes a longer text", what, g->n_ids[k], sv->cfg.max_tokens);
    }
    return 0;
}

int srv_gen_parse(const srv *sv, const cJSON *o, srv_gen *g, srv_err *e)
{
    memset(g, 0, sizeof *g);
    gen_defaults(&g->g, 16);
    g->n = 1, g->logprobs = -1;
    const char *model = NULL;
    if (srv_json_string(o, "model", &model, e) < 0 || unsupported(o, e) || sampling(sv, o, g, e) || output(sv, o, g, e) ||
        stops(o, g, e) || prompts(sv, o, g, e) || echo_limit(sv, g, e))
        return -1;
    if ((uint64_t)g->n * g->n_prompts > sv->cfg.max_n)
        return srv_fail(e, 400, "n", "%u prompts x n %u = %llu choices: at most %u a request (--max-n)", g->n_prompts, g->n,
                        (unsigned long long)g->n * g->n_prompts, sv->cfg.max_n);
    return 0;
}

void srv_gen_free(srv_gen *g)
{
    for (uint32_t k = 0; k < g->n_prompts; k++) {
        if (g->ids) free(g->ids[k]);
        if (g->texts) free(g->texts[k]);
    }
    free(g->ids), free(g->n_ids), free(g->texts);
    gen_free(&g->g);
    memset(g, 0, sizeof *g);
}
