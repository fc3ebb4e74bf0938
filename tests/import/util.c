#include "util.h"
#include "../common/run_tool.h"

#include <inttypes.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/run_tool.h"
#include "../common/slurp.h"
#include "../common/tmpdir.h"

int test_failures;

void expect_err_at(const char *file, int line, int rc, const txlm_err *err, int code, ...)
{
    if (rc != code || err->code != code) {
        test_failures++;
        fprintf(stderr, "%s:%d: expected error %d, got rc %d (err.code %d, \"%s\")\n", file, line, code, rc, err->code,
                err->msg);
        return;
    }
    va_list ap;
    va_start(ap, code);
    for (const char *s; (s = va_arg(ap, const char *));)
        if (!strstr(err->msg, s)) {
            test_failures++;
            fprintf(stderr, "%s:%d: message \"%s\" does not mention \"%s\"\n", file, line, err->msg, s);
        }
    va_end(ap);
}

void expect_ok_at(const char *file, int line, int rc, const txlm_err *err)
{
    if (rc != 0) {
        test_failures++;
        fprintf(stderr, "%s:%d: unexpected error %d: %s\n", file, line, rc, err->msg);
    }
}

static char dir[512];

const char *tmp_dir(void)
{
    if (!dir[0]) {
        char *d = test_mkdtemp("txlm-import");
        if (!d || strlen(d) >= sizeof dir) {
            perror("mkdtemp");
            exit(1);
        }
        strcpy(dir, d);
        free(d);
    }
    return dir;
}

void tmp_cleanup(void)
{
    if (!dir[0]) return;
    test_rmdir_flat(dir);
    dir[0] = 0;
}

const char *dir_path(const char *dir, const char *name)
{
    static char bufs[4][1024];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
    return b;
}

const char *tmp_path(const char *name) { return dir_path(tmp_dir(), name); }

void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
}

char *read_file(const char *path, size_t *len) { return slurp(path, len); }

int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int same_bytes(const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    char *x = read_file(a, &la), *y = read_file(b, &lb);
    int same = x && y && la == lb && !memcmp(x, y, la);
    free(x);
    free(y);
    return same;
}

int run_exe(const char *exe, const char *const *args, char **out, char **err)
{
    const char *argv[32];
    int n = 0;
    argv[n++] = exe;
    for (int i = 0; args[i] && n < 31; i++) argv[n++] = args[i];
    argv[n] = NULL;
    *out = *err = NULL;
    int st = run_tool(argv, out, err);
    if (!*out) *out = calloc(1, 1);
    if (!*err) *err = calloc(1, 1);
    return st;
}

st_entry *st_add(st_image *im, const char *name, const char *dtype, int rank, const uint64_t *dims, const void *data,
                 uint64_t len)
{
    if (im->n == im->cap) {
        im->cap = im->cap ? 2 * im->cap : 64;
        im->e = realloc(im->e, (size_t)im->cap * sizeof *im->e);
        if (!im->e) exit(1);
    }
    st_entry *e = &im->e[im->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", name);
    snprintf(e->dtype, sizeof e->dtype, "%s", dtype);
    e->rank = rank;
    for (int i = 0; i < rank; i++) e->dims[i] = dims[i];
    e->data = data;
    e->len = len;
    return e;
}

st_entry *st_find(st_image *im, const char *name)
{
    for (int i = 0; i < im->n; i++)
        if (!strcmp(im->e[i].name, name)) return &im->e[i];
    return NULL;
}

void st_remove(st_image *im, const char *name)
{
    st_entry *e = st_find(im, name);
    if (!e) return;
    memmove(e, e + 1, (size_t)(im->e + im->n - (e + 1)) * sizeof *e);
    im->n--;
}

uint8_t *st_serialize(const st_image *im, uint64_t *size)
{
    size_t cap = 256 + (im->extra_json ? strlen(im->extra_json) : 0) + (size_t)im->n * 512, n = 0;
    char *h = malloc(cap);
    uint64_t off = 0, total = 0;
    n += (size_t)snprintf(h + n, cap - n, "{");
    for (int i = 0; i < im->n; i++) {
        const st_entry *e = &im->e[i];
        n += (size_t)snprintf(h + n, cap - n, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[", i ? "," : "", e->name, e->dtype);
        for (int d = 0; d < e->rank; d++) n += (size_t)snprintf(h + n, cap - n, "%s%" PRIu64, d ? "," : "", e->dims[d]);
        n += (size_t)snprintf(h + n, cap - n, "],\"data_offsets\":[%" PRIu64 ",%" PRIu64 "]}", off, off + e->len);
        off += e->len;
    }
    if (im->extra_json) n += (size_t)snprintf(h + n, cap - n, "%s%s", im->n ? "," : "", im->extra_json);
    n += (size_t)snprintf(h + n, cap - n, "}");
    while (n % 8) h[n++] = ' '; /* padding, as the reference writer does */
    total = 8 + n + off;
    uint8_t *out = malloc(total ? total : 1);
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)((uint64_t)n >> (8 * i));
    memcpy(out + 8, h, n);
    uint64_t pos = 8 + n;
    for (int i = 0; i < im->n; i++) {
        if (im->e[i].len) memcpy(out + pos, im->e[i].data, im->e[i].len);
        pos += im->e[i].len;
    }
    free(h);
    *size = total;
    return out;
}

void st_free(st_image *im)
{
    free(im->e);
    memset(im, 0, sizeof *im);
}

double max_abs_diff(const float *a, const float *b, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (!(d <= worst)) worst = d; /* NaN stays the worst */
    }
    return worst;
}

float *run_logprobs(const char *txlm, const char *model, const char *tokens, const char *segments, const char *flag,
                    const char *value, size_t *len)
{
    const char *out = tmp_path("lp.f32");
    const char *argv[] = {txlm, "logprobs", "-m", model, "--tokens", tokens, "--segments", segments, "-o", out, flag, value, NULL};
    char *so = NULL, *se = NULL;
    int st = run_tool(argv, &so, &se);
    if (st) fprintf(stderr, "txlm logprobs exit %d: %s\n", st, se ? se : "");
    CHECK(st == 0);
    free(so), free(se);
    return (float *)read_file(out, len);
}
