/* Checked JSON fields (srv_json.h). */
#include "srv_json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int srv_fail(srv_err *e, int status, const char *param, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->status = status;
    snprintf(e->param, sizeof e->param, "%s", param ? param : "");
    return -1;
}

/* Where the body holds U+0000 in a string, raw or as the escape \u0000,
 * or -1. cJSON's strings end at their first NUL: a prompt, a text, a stop
 * string or a field's name would be cut there without a word. Valid JSON
 * has backslashes only in strings, so the escapes are found by skipping
 * each escaped character ("\\u0000" is a backslash, then text). */
static long nul_in_strings(const char *body, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (!body[i]) return (long)i;
        if (body[i] != '\\' || i + 1 >= len) continue;
        if (body[i + 1] == 'u' && i + 6 <= len && !memcmp(body + i + 2, "0000", 4)) return (long)i;
        i++;
    }
    return -1;
}

/* What the bytes before a JSON syntax error say about it: the deepest
 * nesting of arrays and objects on the way (strings skipped), and whether
 * the body ended inside a value (a string, an array or an object still
 * open, or a key or a comma waiting for what follows). */
typedef struct json_scan {
    int deepest;
    int unfinished;
    int in_string;                 /* the end is inside a string, */
    size_t string_at;              /* which starts at this byte */
} json_scan;

static json_scan scan(const char *s, size_t len)
{
    json_scan r = {0};
    int depth = 0, in_string = 0;
    char last = 0; /* the last byte outside strings that is not white space */
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        if (in_string) {
            if (ch == '\\') i++;
            else if (ch == '"') in_string = 0, last = '"';
            continue;
        }
        if (ch == '"') in_string = 1, r.string_at = i;
        else if (ch == '[' || ch == '{') depth++, r.deepest = depth > r.deepest ? depth : r.deepest;
        else if (ch == ']' || ch == '}') depth--;
        if (!strchr(" \t\r\n", ch)) last = ch;
    }
    r.in_string = in_string;
    r.unfinished = in_string || depth > 0 || last == ':' || last == ',';
    return r;
}

/* A body cJSON refused: why, and where. cJSON places an error past the
 * last byte on the last byte (a lone "{" fails "at byte 0"), and one in a
 * string at the string: a body that ends inside its value is told so, at
 * its end. */
static void syntax_error(const char *body, size_t len, const char *end, srv_err *e)
{
    size_t at = end && end >= body && end <= body + len ? (size_t)(end - body) : 0;
    json_scan s = scan(body, at + 1 < len ? at + 1 : len), whole = scan(body, len);
    int in_last_string = whole.in_string && whole.string_at <= at; /* cJSON's error at the open string's start or in it */
    if (s.deepest > CJSON_NESTING_LIMIT)
        srv_fail(e, 400, NULL, "the body is not valid JSON: it nests arrays or objects deeper than %d levels", CJSON_NESTING_LIMIT);
    else if (whole.unfinished && (at + 1 >= len || in_last_string))
        srv_fail(e, 400, NULL, "the body is not valid JSON: it ends at byte %zu, inside its value (cut short?)", len);
    else
        srv_fail(e, 400, NULL, "the body is not valid JSON (at byte %zu)", at);
}

cJSON *srv_json_object(const char *body, size_t len, int empty_ok, srv_err *e)
{
    size_t i = 0;
    while (i < len && strchr(" \t\r\n", body[i])) i++;
    if (i == len && empty_ok) return cJSON_CreateObject();
    if (i == len) return srv_fail(e, 400, NULL, "the body is empty: a JSON object is expected"), NULL;
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithLengthOpts(body, len, &end, 0);
    if (!o) {
        syntax_error(body, len, end, e);
        return NULL;
    }
    while (end && end < body + len && strchr(" \t\r\n", *end)) end++;
    if (end && end < body + len) {
        cJSON_Delete(o);
        srv_fail(e, 400, NULL, "the body has bytes after its JSON value (at byte %zu)", (size_t)(end - body));
        return NULL;
    }
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        srv_fail(e, 400, NULL, "the body must be a JSON object");
        return NULL;
    }
    long nul = nul_in_strings(body, len);
    if (nul >= 0) {
        cJSON_Delete(o);
        srv_fail(e, 400, NULL, "the body holds U+0000 (a NUL character) in a string at byte %ld: txlm's texts cannot "
                 "carry it", nul);
        return NULL;
    }
    return o;
}

static const char *type_name(const cJSON *v)
{
    return cJSON_IsString(v) ? "a string" : cJSON_IsNumber(v) ? "a number" : cJSON_IsBool(v) ? "a boolean"
         : cJSON_IsArray(v) ? "an array" : cJSON_IsObject(v) ? "an object" : "null";
}

/* The field, or NULL when absent or null. */
static const cJSON *field(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return v && !cJSON_IsNull(v) ? v : NULL;
}

int srv_json_bool(const cJSON *o, const char *name, int *out, srv_err *e)
{
    const cJSON *v = field(o, name);
    if (!v) return 0;
    if (!cJSON_IsBool(v)) return srv_fail(e, 400, name, "%s must be true or false, not %s", name, type_name(v));
    *out = cJSON_IsTrue(v);
    return 1;
}

/* A number as a client wrote it: an integer in full (1000000000, not 1e+09), else as %g. */
static const char *as_sent(double x, char buf[40])
{
    if (x == floor(x) && fabs(x) < 1e18) snprintf(buf, 40, "%.0f", x);
    else snprintf(buf, 40, "%g", x);
    return buf;
}

int srv_json_int(const cJSON *o, const char *name, int64_t lo, int64_t hi, int64_t *out, srv_err *e)
{
    const cJSON *v = field(o, name);
    if (!v) return 0;
    if (!cJSON_IsNumber(v)) return srv_fail(e, 400, name, "%s must be an integer, not %s", name, type_name(v));
    double x = v->valuedouble;
    char buf[40];
    if (x != floor(x)) return srv_fail(e, 400, name, "%s must be an integer, not %g", name, x);
    if (!(x >= (double)lo && x <= (double)hi))
        return srv_fail(e, 400, name, "%s: %s is outside [%lld, %lld]", name, as_sent(x, buf), (long long)lo, (long long)hi);
    *out = (int64_t)x;
    return 1;
}

int srv_json_u64(const cJSON *o, const char *name, uint64_t *out, srv_err *e)
{
    const cJSON *v = field(o, name);
    if (!v) return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
        return srv_fail(e, 400, name, "%s must be an integer", name);
    /* doubles hold integers exactly up to 2^53: a seed beyond would not be the one sent */
    char buf[40];
    if (!(v->valuedouble >= 0 && v->valuedouble <= 9007199254740992.0))
        return srv_fail(e, 400, name, "%s: %s is outside [0, 2^53]", name, as_sent(v->valuedouble, buf));
    *out = (uint64_t)v->valuedouble;
    return 1;
}

int srv_json_float(const cJSON *o, const char *name, double lo, double hi, float *out, srv_err *e)
{
    const cJSON *v = field(o, name);
    if (!v) return 0;
    if (!cJSON_IsNumber(v)) return srv_fail(e, 400, name, "%s must be a number, not %s", name, type_name(v));
    if (!(v->valuedouble >= lo && v->valuedouble <= hi))
        return srv_fail(e, 400, name, "%s: %g is outside [%g, %g]", name, v->valuedouble, lo, hi);
    *out = (float)v->valuedouble;
    return 1;
}

int srv_json_string(const cJSON *o, const char *name, const char **out, srv_err *e)
{
    const cJSON *v = field(o, name);
    if (!v) return 0;
    if (!cJSON_IsString(v)) return srv_fail(e, 400, name, "%s must be a string, not %s", name, type_name(v));
    *out = v->valuestring;
    return 1;
}

int srv_json_ids(const cJSON *a, const char *what, uint32_t vocab, int32_t **ids, size_t *n, srv_err *e)
{
    int count = cJSON_GetArraySize(a);
    *ids = malloc(((size_t)count + 1) * sizeof **ids);
    *n = 0;
    if (!*ids) return srv_fail(e, 500, what, "out of memory");
    const cJSON *v;
    cJSON_ArrayForEach(v, a) {
        if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || !(v->valuedouble >= 0) ||
            !(v->valuedouble < (double)vocab)) {
            free(*ids);
            *ids = NULL;
            if (!cJSON_IsNumber(v)) return srv_fail(e, 400, what, "%s[%zu] must be a token id, not %s", what, *n, type_name(v));
            char buf[40];
            return srv_fail(e, 400, what, "%s[%zu]: %s is not a token id of this model (0..%u)", what, *n,
                            as_sent(v->valuedouble, buf), vocab - 1);
        }
        (*ids)[(*n)++] = (int32_t)v->valuedouble;
    }
    return 1;
}
