/* The pieces txlm eval, score and compare share (tools/txlm/cli_scoring.c):
 * JSON values that stay JSON (null for what is not finite, escapes,
 * malformed UTF-8), TSV fields, the standard error against a direct
 * computation, the queue of tokens cut into segments, and what a text
 * input's first block says (cli_text_check.c): text in UTF-8 or an 8-bit
 * encoding passes, a NUL byte or mostly bytes of no text do not. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
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

/* cli_binary_why on s[0..n) (cut: more follows): 1 when it says binary. */
static int binary(const char *s, size_t n, int cut)
{
    char why[160];
    return cli_binary_why(s, n, cut, why, sizeof why) != NULL;
}

static void text_or_binary(void)
{
    const char *utf8 = "Ça va? Größe, naïve, Ελληνικά, русский, 日本語, emoji \xf0\x9f\x99\x82\r\n\tend\f\v";
    CHECK(!binary(utf8, strlen(utf8), 0));
    /* Latin-1: a few lone high bytes */
    const char *latin1 = "caf\xe9 au lait, na\xefve, \xa9 2024, na\xefvet\xe9 of the r\xf4le\n";
    CHECK(!binary(latin1, strlen(latin1), 0));
    /* a terminal's colours in a saved log */
    const char *esc = "\x1b[1;31merror\x1b[0m: x\n";
    CHECK(!binary(esc, strlen(esc), 0));
    /* one NUL byte anywhere in the block; UTF-16 ("ab" little-endian) */
    CHECK(binary("word word\0word\n", 15, 0) && binary("a\0b\0", 4, 0));
    char why[160];
    CHECK(cli_binary_why("abc\0", 4, 0, why, sizeof why) && strstr(why, "NUL byte at byte 3"));
    /* no NUL, no text: stray continuation bytes, lead bytes without theirs, control bytes */
    const char *noise = "\x81\x92\xa3\xb4\xc5\xd6\xe7\xf8\x01\x02\x03\x04\x11\x12\x13\x14";
    CHECK(binary(noise, strlen(noise), 0));
    CHECK(cli_binary_why(noise, 16, 0, why, sizeof why) && strstr(why, "16 of its first 16 bytes"));
    /* overlong forms, surrogates and code points past U+10FFFF are no UTF-8 */
    CHECK(binary("\xc0\xaf\xe0\x80\xaf\xed\xa0\x80\xf4\x90\x80\x80", 12, 0));
    /* half or less of it not text passes; more than half does not */
    CHECK(!binary("ab\x81\x82", 4, 0) && binary("a\x81\x82", 3, 0));
    /* a character cut by the block's end is text when more follows, not at the end of the input */
    CHECK(!binary("a\xe6\x97", 3, 1) && binary("a\xe6\x97", 3, 0));
    /* an empty input is text */
    CHECK(!binary("", 0, 0));
}

int main(void)
{
    text_or_binary();
    json_values();
    tsv_fields();
    standard_error();
    segments();
    printf("%d failures\n", failures);
    return failures != 0;
}
