#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/slurp.h"
#include "scoring_util.h"

const char *sc_txlm, *sc_pack, *sc_golden, *sc_dir;

static char *tmp_dir;

int sc_start(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s TXLM TXLM_PACK GOLDEN_DIR\n", argv[0]);
        return 1;
    }
    sc_txlm = argv[1], sc_pack = argv[2], sc_golden = argv[3];
    return !(sc_dir = tmp_dir = make_tmp_dir());
}

int sc_finish(void)
{
    rm_tree(tmp_dir);
    free(tmp_dir);
    printf("%d failures\n", text_failures);
    return text_failures != 0;
}

const char *sc_path(const char *name)
{
    static char buf[8][1200];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", sc_dir, name);
    return buf[k];
}

int sc_write(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return 1;
    int bad = fwrite(data, 1, len, f) != len;
    return fclose(f) || bad;
}

int sc_write_stream(const char *path, const int32_t *t, size_t n)
{
    FILE *f = fopen(path, "wb");
    for (size_t i = 0; f && i < n; i++) {
        if (t[i] == 0) fputc('\n', f);
        else if (t[i] == 1) fprintf(f, "%s<unk>", i && t[i - 1] ? " " : "");
        else fprintf(f, "%sw%d", i && t[i - 1] ? " " : "", t[i]);
    }
    return !f || fclose(f);
}

int sc_txlm_run(const char *const *args, char **out, char **err)
{
    const char *argv[64] = {sc_txlm};
    int n = 1;
    for (int i = 0; args[i] && n < 63; i++) argv[n++] = args[i];
    argv[n] = NULL;
    char *e = NULL;
    int st = run_tool(argv, out, &e);
    if (err) *err = e;
    else {
        if (st && e) fprintf(stderr, "txlm %s: exit %d: %s", args[0], st, e);
        free(e);
    }
    return st;
}

cJSON *sc_jsonl(const char *text)
{
    cJSON *all = cJSON_CreateArray();
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        cJSON *o = cJSON_ParseWithLength(p, len);
        if (!o) return cJSON_Delete(all), NULL;
        cJSON_AddItemToArray(all, o);
        p += len + (nl != NULL);
    }
    return all;
}

float *sc_read_f32(const char *path, size_t *n)
{
    size_t len = 0;
    char *b = slurp(path, &len);
    if (!b || len % 4) return free(b), NULL;
    *n = len / 4;
    return (float *)b; /* slurp's buffer is malloc'd: aligned for float */
}

int sc_pack_vocab(const char *name, const char *vocab, const char *tokenizer, const char *out, const char *dtype)
{
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/%s", sc_golden, name);
    const char *argv[12] = {sc_pack, dir, "-o", out, "--tokenizer", tokenizer};
    int n = 6;
    if (vocab) argv[n++] = "--vocab", argv[n++] = vocab;
    if (dtype) argv[n++] = "--dtype", argv[n++] = dtype;
    argv[n] = NULL;
    char *err = NULL;
    int st = run_tool(argv, NULL, &err);
    if (st) fprintf(stderr, "txlm-pack %s: exit %d: %s", name, st, err ? err : "");
    free(err);
    return st;
}

double sc_num(const cJSON *o, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

int sc_file_has(const char *path, const char *needle)
{
    static char buf[1 << 16];
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strstr(buf, needle) != NULL;
}

/* Writes lines of words into fd until the reader goes away. */
static void endless_writer(int fd)
{
    signal(SIGPIPE, SIG_IGN);
    static const char line[] = "w5 w9 w12 w3 w100 w7 w8 w21\n";
    char buf[sizeof line * 64];
    for (size_t i = 0; i < 64; i++) memcpy(buf + i * (sizeof line - 1), line, sizeof line - 1);
    while (write(fd, buf, 64 * (sizeof line - 1)) > 0) {
    }
    _exit(0);
}

int sc_interrupt(const char *const *args, const char *out_path, const char *err_path, const char *ready)
{
    const char *argv[64] = {sc_txlm};
    for (int i = 0; args[i] && i < 62; i++) argv[i + 1] = args[i], argv[i + 2] = NULL;
    int p[2];
    if (pipe(p)) return -1;
    fflush(NULL);
    pid_t writer = fork();
    if (writer == 0) {
        close(p[0]);
        endless_writer(p[1]);
    }
    pid_t pid = fork();
    if (pid == 0) {
        int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0 || dup2(p[0], 0) < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(127);
        close(p[1]);
        execv(sc_txlm, (char *const *)argv);
        _exit(127);
    }
    close(p[0]), close(p[1]);
    int came = 0;
    for (int i = 0; i < 1200 && !(came = sc_file_has(err_path, ready)); i++) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(pid, came ? SIGINT : SIGKILL);
    int status = 0, ok = pid > 0 && waitpid(pid, &status, 0) == pid;
    if (writer > 0) kill(writer, SIGTERM), waitpid(writer, NULL, 0);
    if (!ok || !came) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
