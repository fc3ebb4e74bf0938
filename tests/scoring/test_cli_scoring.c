/* The pieces txlm eval, score and compare share (tools/txlm/cli_scoring.c):
 * JSON values that stay JSON (null for what is not finite, escapes,
 * malformed UTF-8), TSV fields, the standard error against a direct
 * computation, and the queue of tokens cut into segments. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_scoring.h"

static int failures;
#define CHECK(c)                                                             \
    do {                                                                     \
        if (!(c)) failures++, fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
    } while (0)

typedef void (*writer)(FILE *f, const void *arg, size_t n);

static char *written(writer w, const void *arg, size_t n)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    w(f, arg, n);
    fclose(f);
    return buf;
}

static void w_number(FILE *f, const void *x, size_t digits) { cli_json_number(f, *(const double *)x, (int)digits); }
static void w_string(FILE *f, const void *s, size_t n) { cli_json_string(f, s, n); }
static void w_tsv(FILE *f, const void *s, size_t n) { cli_tsv_field(f, s, n); }

static void json_values(void)
{
    const double x[] = {NAN, INFINITY, -INFINITY, 1.5, -0.25};
    const char *want[] = {"null", "null", "null", "1.500", "-0.250"};
    for (int i = 0; i < 5; i++) {
        char *s = written(w_number, &x[i], 3);
        CHECK(!strcmp(s, want[i]));
        free(s);
    }
    /* quotes, backslashes, control bytes, a malformed byte and a cut
     * character (U+FFFD each), a whole character kept */
    static const char in[] = "a\"b\\c\n\x01\x7f\xff \xc3\xa9 \xe2\x82";
    char *s = written(w_string, in, sizeof in - 1);
    CHECK(!strcmp(s, "\"a\\\"b\\\\c\\u000a\\u0001\\u007f\\ufffd \xc3\xa9 \\ufffd\\ufffd\""));
    cJSON *j = cJSON_Parse(s);
    CHECK(cJSON_IsString(j) && !strcmp(j->valuestring, "a\"b\\c\n\x01\x7f\xef\xbf\xbd \xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd"));
    cJSON_Delete(j);
    free(s);
    /* a NUL inside the text is escaped, not an end */
    s = written(w_string, "a\0b", 3);
    CHECK(!strcmp(s, "\"a\\u0000b\""));
    free(s);
}

static void tsv_fields(void)
{
    char *s = written(w_tsv, "a\tb\nc\rd\\e", 10);
    CHECK(!strcmp(s, "a\\tb\\nc\\rd\\e")); /* a backslash stays as the text has it */
    free(s);
}

static void standard_error(void)
{
    cli_stats st = {0};
    double x[1000], sum = 0, var = 0;
    for (int i = 0; i < 1000; i++) x[i] = 5 + sin(i * 0.37) * 3 + (i % 7) * 0.01, sum += x[i];
    for (int i = 0; i < 1000; i++) cli_stats_add(&st, x[i]);
    double mean = sum / 1000;
    for (int i = 0; i < 1000; i++) var += (x[i] - mean) * (x[i] - mean);
    CHECK(st.n == 1000 && fabs(st.mean - mean) < 1e-12);
    CHECK(fabs(cli_stats_se(&st) - sqrt(var / 999 / 1000)) < 1e-12);
    cli_stats one = {0};
    cli_stats_add(&one, 3);
    CHECK(cli_stats_se(&one) == 0);
}

/* Inputs buf[0..len), targets buf[1..len]; the last target stays as the next input. */
static void segments(void)
{
    cli_segments q = {.seg = 8};
    int32_t ids[20];
    for (int i = 0; i < 20; i++) ids[i] = i;
    CHECK(cli_segments_push(&q, ids, 20) == 0);
    CHECK(cli_segments_next(&q, 0) == 8);
    cli_segments_done(&q, 8);
    CHECK(q.n == 12 && q.buf[0] == 8 && cli_segments_next(&q, 0) == 8);
    cli_segments_done(&q, 8);
    CHECK(q.n == 4 && q.buf[0] == 16 && cli_segments_next(&q, 0) == 0 && cli_segments_next(&q, 1) == 3);
    cli_segments_done(&q, 3);
    CHECK(q.n == 1 && q.buf[0] == 19 && cli_segments_next(&q, 1) == 0);
    cli_segments_free(&q);
}

int main(void)
{
    json_values();
    tsv_fields();
    standard_error();
    segments();
    printf("%d failures\n", failures);
    return failures != 0;
}
