/* The files one command reads and writes (cli_files.h). */
#include "cli_files.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

void cli_files_init(cli_files *f)
{
    memset(f, 0, sizeof *f);
    f->report = stdout;
}

void cli_files_input(cli_files *f, const char *what, const char *path)
{
    if (!path || f->n_in == CLI_MAX_INPUTS) return;
    f->in[f->n_in].what = what;
    f->in[f->n_in++].path = path;
}

int cli_files_output(cli_files *f, const char *flag, const char *path, int binary)
{
    if (!path || f->n_out == CLI_MAX_OUTPUTS) return -1;
    f->out[f->n_out].flag = flag, f->out[f->n_out].path = path, f->out[f->n_out].binary = binary;
    return f->n_out++;
}

static int is_stdio(const char *path) { return !strcmp(path, "-"); }

/* What the file system knows a path by: standard input and output by the
 * file they are, when that is a regular file (a pipe or a terminal is
 * nobody's input file). NULL: nothing to compare. */
static const char *file_of(const char *path, int output)
{
    if (!is_stdio(path)) return path;
    struct stat st;
    const char *dev = output ? "/dev/stdout" : "/dev/stdin";
    return stat(dev, &st) == 0 && S_ISREG(st.st_mode) ? dev : NULL;
}

/* An existing input that an output (flag, path) would replace or append to. */
static int clashes_with_input(const cli_files *f, const char *flag, const char *path)
{
    const char *o = file_of(path, 1);
    struct stat st;
    for (int i = 0; o && i < f->n_in; i++) {
        const char *in = file_of(f->in[i].path, 0);
        if (in && stat(in, &st) == 0 && txlm_same_file(o, in))
            return cli_error("%s%s%s: the same file as %s (%s): an output never replaces or grows what the command reads",
                             flag, *flag ? " " : "", is_stdio(path) && !*flag ? "standard output" : path, f->in[i].what,
                             is_stdio(f->in[i].path) ? "standard input" : f->in[i].path);
    }
    return 0;
}

/* What the command prints on standard output (its figures, its text)
 * when no output flag takes it: never into an input either (`score -m M
 * FILE >> FILE` read its own lines for ever). */
static int stdout_clashes(const cli_files *f)
{
    for (int k = 0; k < f->n_out; k++)
        if (is_stdio(f->out[k].path)) return 0; /* checked as that flag's */
    return clashes_with_input(f, "", "-");
}

/* Standard output taken twice, binary data to a terminal, two outputs in one file. */
static int clashes_with_output(const cli_files *f, int k)
{
    const char *o = f->out[k].path;
    if (is_stdio(o) && f->out[k].binary && isatty(STDOUT_FILENO))
        return cli_error("%s -: binary data is not written to a terminal (redirect standard output to a file or a pipe)",
                         f->out[k].flag);
    for (int j = 0; j < k; j++) {
        const char *p = f->out[j].path;
        if (is_stdio(o) && is_stdio(p))
            return cli_error("%s - and %s -: only one output can go to standard output", f->out[j].flag, f->out[k].flag);
        const char *a = file_of(p, 1), *b = file_of(o, 1);
        if (a && b && txlm_same_file(a, b))
            return cli_error("%s %s and %s %s: the same file, written twice", f->out[j].flag, p, f->out[k].flag, o);
    }
    return 0;
}

/* Standard output redirected to an output's file (`eval --per-token X > X`):
 * the output's rename would leave what the command prints in a file no
 * name reaches any more, or the other way round. */
static int stdout_is_output(const cli_files *f)
{
    const char *so = file_of("-", 1);
    for (int k = 0; so && k < f->n_out; k++)
        if (is_stdio(f->out[k].path)) return 0; /* standard output is that flag's */
    for (int k = 0; so && k < f->n_out; k++)
        if (txlm_same_file(so, f->out[k].path))
            return cli_error("%s %s and standard output: the same file, written twice", f->out[k].flag, f->out[k].path);
    return 0;
}

int cli_files_open(cli_files *f)
{
    for (int k = 0; k < f->n_out; k++)
        if (clashes_with_input(f, f->out[k].flag, f->out[k].path) || clashes_with_output(f, k)) return 1;
    if (stdout_clashes(f) || stdout_is_output(f)) return 1;
    for (int k = 0; k < f->n_out; k++) {
        if (is_stdio(f->out[k].path)) {
            f->report = stderr;
            continue;
        }
        if (txlm_output_open(f->out[k].path, &f->out[k].o)) {
            cli_error("%s: %s", f->out[k].flag, txlm_last_error());
            cli_files_abort(f);
            return 1;
        }
    }
    return 0;
}

int cli_stdout_not_input(const char *what, const char *path, ...)
{
    cli_files f;
    cli_files_init(&f);
    va_list ap;
    va_start(ap, path);
    while (what) {
        cli_files_input(&f, what, path);
        if ((what = va_arg(ap, const char *))) path = va_arg(ap, const char *);
    }
    va_end(ap);
    return cli_files_open(&f);
}

int cli_files_write(cli_files *f, int k, const void *data, size_t n)
{
    if (k < 0 || k >= f->n_out) return 0;
    f->out[k].written = 1;
    if (is_stdio(f->out[k].path))
        return fwrite(data, 1, n, stdout) != n || fflush(stdout) ? cli_error("%s -: writing to standard output failed", f->out[k].flag)
                                                                 : 0;
    if (!f->out[k].o) return cli_error("%s %s: not open", f->out[k].flag, f->out[k].path);
    return txlm_output_write(f->out[k].o, data, n) ? cli_error("%s: %s", f->out[k].flag, txlm_last_error()) : 0;
}

int cli_files_write_state(cli_files *f, int k, txlm_session *s, const char *what)
{
    size_t cap = txlm_session_state_size(s), n = 0;
    void *buf = malloc(cap ? cap : 1);
    if (!buf) return cli_error("%s: out of memory for %zu bytes", what, cap);
    txlm_status e = txlm_session_save(s, buf, cap, &n);
    int rc = e ? cli_lib_error(e, what) : cli_files_write(f, k, buf, n);
    free(buf);
    return rc;
}

int cli_files_commit(cli_files *f)
{
    int rc = 0;
    for (int k = 0; k < f->n_out; k++) {
        txlm_output *o = f->out[k].o;
        f->out[k].o = NULL;
        if (!o) continue;
        if (rc || !f->out[k].written) txlm_output_abort(o);
        else if (txlm_output_commit(o)) rc = cli_error("%s: %s", f->out[k].flag, txlm_last_error());
    }
    f->n_out = 0;
    return rc;
}

void cli_files_abort(cli_files *f)
{
    for (int k = 0; k < f->n_out; k++) {
        txlm_output_abort(f->out[k].o);
        f->out[k].o = NULL;
    }
}
