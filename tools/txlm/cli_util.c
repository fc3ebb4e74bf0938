#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

int cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("txlm: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

int cli_lib_error(txlm_status st, const char *what)
{
    const char *msg = txlm_last_error(), *kind = txlm_status_string(st);
    /* "checksum mismatch (checksum mismatch)" says nothing twice */
    if (strstr(msg, kind)) return cli_error("%s: %s", what, msg);
    return cli_error("%s: %s (%s)", what, msg, kind);
}

int cli_set_once(const char **slot, const char *v, const char *flag)
{
    if (*slot) return cli_error("%s given twice (%s and %s): give it once", flag, *slot, v);
    *slot = v;
    return 0;
}

void cli_warn_unk(uint64_t unk, uint64_t n, const char *what, const char *why)
{
    if (n && (double)unk / (double)n > CLI_UNK_WARN_RATE)
        fprintf(stderr, "txlm: warning: %.1f%% of %s are <unk>: the text holds words the model's vocabulary lacks, and %s\n",
                100.0 * (double)unk / (double)n, what, why);
}

int cli_parse_list(const char *s, int32_t **out, uint32_t *n, const char *what)
{
    *out = NULL;
    *n = 0;
    size_t cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    int32_t *v = malloc(cap * sizeof *v);
    if (!v) return cli_error("out of memory");
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        long x = strtol(p, &end, 10);
        if (end == p || errno || x < 0 || x > INT32_MAX || (*end && *end != ',') || (*end && !end[1])) {
            free(v);
            return cli_error("%s: bad number at \"%.20s\" (expected comma-separated non-negative integers)", what, p);
        }
        v[(*n)++] = (int32_t)x;
        p = *end ? end + 1 : end;
    }
    if (*n == 0) {
        free(v);
        return cli_error("%s: empty list", what);
    }
    *out = v;
    return 0;
}

const char *cli_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        cli_error("%s needs a value", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

static int in_list(const char *a, const char *const *flags)
{
    for (; flags && *flags; flags++)
        if (!strcmp(a, *flags)) return 1;
    return 0;
}

const char *cli_option_value(int argc, char **argv, int *i, const char *cmd, const char *const *flags)
{
    static const char *const session_flags[] = {"--mem-len", "--clamp-len", "--same-length", "--zero-memory", NULL};
    const char *a = argv[*i];
    if (a[0] != '-' || !a[1]) {
        if (in_list("-m", flags)) cli_error("%s: \"%s\" is not an option; a model is given as -m %s (see txlm %s --help)", cmd, a, a, cmd);
        else cli_error("%s: \"%s\" is not an option (see txlm %s --help)", cmd, a, cmd);
        return NULL;
    }
    if (!in_list(a, flags) && !in_list(a, session_flags)) {
        cli_error("%s: unknown option \"%s\" (see txlm %s --help)", cmd, a, cmd);
        return NULL;
    }
    return cli_value(argc, argv, i);
}

int cli_parse_range(const char *s, const char *flag, int32_t lo, int32_t hi, int32_t *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || (errno && errno != ERANGE)) return cli_error("%s: \"%s\" is not an integer", flag, s);
    if (errno == ERANGE || v < lo || v > hi) return cli_error("%s: %s is out of range (%d to %d)", flag, s, lo, hi);
    *out = (int32_t)v;
    return 0;
}

int cli_parse_i32(const char *s, const char *flag, int32_t *out) { return cli_parse_range(s, flag, INT32_MIN, INT32_MAX, out); }

int cli_parse_u32(const char *s, const char *flag, uint32_t *out)
{
    int32_t v = 0;
    if (cli_parse_range(s, flag, 0, INT32_MAX, &v)) return 1;
    *out = (uint32_t)v;
    return 0;
}

txlm_status cli_open_context(txlm_context **ctx)
{
    txlm_context_options o = {0};
    return txlm_context_create(&o, ctx);
}

int cli_check_input(const char *path, const char *what)
{
    FILE *f;
    if (txlm_input_open(path, &f)) return cli_error("%s: %s", what, txlm_last_error());
    fclose(f);
    return 0;
}

txlm_status cli_open_model(const char *path, const txlm_model_options *mo, txlm_context **ctx, txlm_model **m)
{
    if (cli_check_input(path, "loading the model")) return TXLM_ERR_IO;
    txlm_status st = cli_open_context(ctx);
    if (st) return cli_lib_error(st, "opening the device"), st;
    st = txlm_model_load(*ctx, path, mo, m);
    if (st && st != TXLM_ERR_CANCELLED) cli_lib_error(st, "loading the model");
    return st;
}

int cli_validation_status(const txlm_context *ctx)
{
    uint64_t n = txlm_context_validation_messages(ctx);
    return n ? cli_error("%llu Vulkan validation messages", (unsigned long long)n) : 0;
}

/* "-" is standard input; anything else must be a regular file (txlm_input_open). */
FILE *cli_open_input(const char *path)
{
    if (!strcmp(path, "-")) return stdin;
    FILE *f;
    if (txlm_input_open(path, &f)) cli_error("%s", txlm_last_error());
    return f;
}

int cli_restore_state(txlm_session *s, const char *path, const char *what)
{
    size_t n = 0;
    char *buf = strcmp(path, "-") ? NULL : cli_read_file(path, &n);
    if (!strcmp(path, "-") && !buf) return 1;
    txlm_status e = buf ? txlm_session_restore(s, buf, n) : txlm_session_restore_file(s, path);
    free(buf);
    return e ? cli_lib_error(e, what) : 0;
}

void cli_close_input(FILE *f)
{
    if (f && f != stdin) fclose(f);
}

char *cli_read_file(const char *path, size_t *len)
{
    FILE *f = cli_open_input(path);
    if (!f) return NULL;
    /* read to the end rather than trust the size: standard input may be a pipe */
    size_t n = 0, cap = 1 << 16, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0)
        if ((n += got) + 1 == cap) {
            char *b = realloc(buf, cap *= 2);
            if (!b) free(buf);
            buf = b;
        }
    int bad = ferror(f);
    cli_close_input(f);
    if (!buf || bad) {
        free(buf);
        cli_error("%s: %s", path, bad ? "read error" : "out of memory");
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

int cli_session_option(const char *flag, const char *v, txlm_session_options *so)
{
    if (!strcmp(flag, "--mem-len")) return cli_parse_u32(v, flag, &so->mem_len);
    /* the library's clamp_len: 0 the model's, -1 none, else a distance */
    if (!strcmp(flag, "--clamp-len")) return cli_parse_range(v, flag, -1, INT32_MAX, &so->clamp_len);
    uint32_t z = 0;
    if (!strcmp(flag, "--zero-memory"))
        return cli_parse_u32(v, flag, &z) || z > 1 ? cli_error("--zero-memory must be 0 or 1") : (so->zero_memory = z ? 1 : -1, 0);
    if (strcmp(flag, "--same-length")) return -1;
    uint32_t b = 0;
    if (cli_parse_u32(v, flag, &b) || b > 1) return cli_error("--same-length must be 0 or 1");
    so->same_length = (int)b;
    return 0;
}

int cli_tokenize(txlm_model *m, const char *text, size_t len, const char *what, int32_t **ids, uint32_t *n)
{
    int32_t *lib_ids = NULL;
    size_t count = 0;
    txlm_status st = txlm_tokenize(m, text, len, &lib_ids, &count);
    if (st) return cli_lib_error(st, what);
    if (count == 0) return txlm_free(lib_ids), cli_error("%s: no tokens", what);
    if (count > UINT32_MAX) return txlm_free(lib_ids), cli_error("%s: %zu tokens, more than %u", what, count, UINT32_MAX);
    /* a copy the caller frees with free(), like cli_parse_list's lists */
    *ids = malloc(count * sizeof **ids);
    if (*ids) memcpy(*ids, lib_ids, count * sizeof **ids);
    txlm_free(lib_ids);
    *n = (uint32_t)count;
    return *ids ? 0 : cli_error("out of memory");
}

double cli_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
