/* Typed fields of a request's JSON body, each checked: a wrong type or a
 * value out of range fills an srv_err naming the field (OpenAI's "param")
 * and what was wrong. Unknown fields are never looked at: they are
 * ignored, as OpenAI's own server ignores them. */
#ifndef TXLM_SRV_JSON_H
#define TXLM_SRV_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

typedef struct srv_err {
    int status;                    /* 0: no error */
    char param[48];
    char msg[320];
} srv_err;

/* Fills e (status, param, message); returns -1. */
int srv_fail(srv_err *e, int status, const char *param, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* body[0..len) parsed as one JSON object, or NULL after filling e:
 * malformed JSON (cut short, or the byte where it went wrong), nesting
 * deeper than cJSON's limit, not an object, or empty (unless empty_ok:
 * then an empty object; a request whose fields are all optional). */
cJSON *srv_json_object(const char *body, size_t len, int empty_ok, srv_err *e);

/* Each returns 0 when the field is absent or null (out untouched), 1 when
 * it was read into out, -1 after filling e. */
int srv_json_bool(const cJSON *o, const char *name, int *out, srv_err *e);
int srv_json_int(const cJSON *o, const char *name, int64_t lo, int64_t hi, int64_t *out, srv_err *e);
int srv_json_u64(const cJSON *o, const char *name, uint64_t *out, srv_err *e);
int srv_json_float(const cJSON *o, const char *name, double lo, double hi, float *out, srv_err *e);
/* A string field: *out points into o (valid while o lives). */
int srv_json_string(const cJSON *o, const char *name, const char **out, srv_err *e);
/* An array of token ids, each in [0, vocab): *ids malloc'd. `what` names it. */
int srv_json_ids(const cJSON *a, const char *what, uint32_t vocab, int32_t **ids, size_t *n, srv_err *e);

#endif
