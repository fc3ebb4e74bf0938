/* What a client gets: errors in OpenAI's shape, a completion's answer
 * (the whole object, or its server-sent events as the streams go on). */
#ifndef TXLM_SRV_REPLY_H
#define TXLM_SRV_REPLY_H

#include <cjson/cJSON.h>

#include "serve.h"

/* {"error": {"message", "type", "param", "code"}}: malloc'd, *len bytes. */
char *srv_error_body(int status, const char *param, const char *msg, size_t *len);
/* o printed (unformatted) and deleted: malloc'd, *len bytes, NULL when out of memory. */
char *srv_json_print(cJSON *o, size_t *len);
/* A UTF-8-clean string of s[0..n) added to o (array when name is NULL). */
void srv_json_add_text(cJSON *o, const char *name, const char *s, size_t n);

/* Every stream of r done: r->status and r->body (a completion's object,
 * a score's, or the first stream's error). Scheduler thread, unlocked. */
void srv_reply_answer(srv_req *r);
/* A streamed completion: the events since the last call into out (text
 * and log-probabilities so far, each finished choice, then the usage and
 * "data: [DONE]" once all are). Scheduler thread, unlocked. */
void srv_reply_events(srv_req *r, srv_buf *out);
/* The choice's "logprobs" object for entries [from, to) of j. */
cJSON *srv_reply_logprobs(const srv *sv, const srv_job *j, size_t from, size_t to);

/* srv_score.c: a scored text's object. */
void srv_score_answer(srv_req *r);

#endif
