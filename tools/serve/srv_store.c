/* Sessions kept in --session-dir across restarts (srv_store.h). */
#include "srv_store.h"

#include "srv_sessions.h"

#include <dirent.h>
#include <errno.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "txlm-serve-session 1\n"
#define SUFFIX ".session"
#define MAX_FACTS 4096 /* the JSON line's most bytes */

/* The SHA-256 of an API key in hex: which key owns a session, without
 * the key itself on disk. */
static void key_hash(const char *key, char out[2 * SHA256_DIGEST_SIZE + 1])
{
    struct sha256_ctx c;
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_init(&c);
    sha256_update(&c, strlen(key), (const uint8_t *)key);
    sha256_digest(&c, sizeof d, d);
    for (size_t i = 0; i < sizeof d; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void file_of(const srv *sv, const char *id, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s%s", sv->cfg.session_dir, id, SUFFIX);
}

/* Seconds since 1970 of a time on srv_now()'s clock, and back. */
static double wall_of(double t) { return (double)time(NULL) - (srv_now() - t); }
static double clock_of(double wall) { return srv_now() - ((double)time(NULL) - wall); }

/* ---- reading --------------------------------------------------------- */

/* The facts line of an open file (after the magic), parsed; NULL when the file is not one of ours. */
static cJSON *read_facts(FILE *f)
{
    char magic[sizeof MAGIC], line[MAX_FACTS];
    if (!fgets(magic, sizeof magic, f) || strcmp(magic, MAGIC) || !fgets(line, sizeof line, f) || !strchr(line, '\n'))
        return NULL;
    cJSON *o = cJSON_Parse(line);
    if (o && !cJSON_IsObject(o)) cJSON_Delete(o), o = NULL;
    return o;
}

static double number(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* The key (index) whose hash the facts name: -1 on a server without keys
 * (and a file without one), -2 when none matches. */
static int owner(const srv *sv, const cJSON *o)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "key");
    if (!sv->cfg.n_keys) return cJSON_IsNull(k) ? -1 : -2;
    if (!cJSON_IsString(k)) return -2;
    for (uint32_t i = 0; i < sv->cfg.n_keys; i++) {
        char h[2 * SHA256_DIGEST_SIZE + 1];
        key_hash(sv->cfg.keys[i], h);
        if (!strcmp(h, k->valuestring)) return (int)i;
    }
    return -2;
}

/* One file of DIR listed as a session, or why not (a line on stderr). */
static void list_one(srv *sv, const char *name)
{
    size_t n = strlen(name), sn = strlen(SUFFIX), pn = strlen(sv->cfg.id_prefix);
    if (n <= sn || strcmp(name + n - sn, SUFFIX)) return; /* not a session file (a temporary, something else) */
    if (n - sn >= sizeof ((srv_session *)0)->id || strncmp(name, sv->cfg.id_prefix, pn) || name[pn] != '-')
        return; /* another server's (its own --id-prefix) */
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", sv->cfg.session_dir, name);
    FILE *f = NULL;
    cJSON *o = txlm_input_open(path, &f) ? NULL : read_facts(f);
    if (f) fclose(f);
    const cJSON *id = o ? cJSON_GetObjectItemCaseSensitive(o, "id") : NULL;
    const cJSON *seed = o ? cJSON_GetObjectItemCaseSensitive(o, "seed") : NULL;
    int key = o ? owner(sv, o) : -2;
    const char *why = !o ? "not a session file of txlm serve"
                    : !cJSON_IsString(id) || strncmp(id->valuestring, name, n - sn) || id->valuestring[n - sn]
                        ? "its id is not its name"
                    : number(o, "tokens") < 0 || number(o, "memory_rows") < 0 ? "its facts are damaged"
                    : key == -2 ? "the API key that owns it is not among this server's"
                    : sv->n_sessions >= sv->cfg.max_sessions ? "--max-sessions are listed already"
                    : NULL;
    srv_session *x = why ? NULL : calloc(1, sizeof *x);
    if (!why && !x) why = "out of memory";
    if (why) {
        fprintf(stderr, "txlm: serve: --session-dir: %s: %s; left as it is\n", path, why);
        cJSON_Delete(o);
        return;
    }
    snprintf(x->id, sizeof x->id, "%s", id->valuestring);
    x->key = key;
    x->stored = 1;
    x->stored_rows = (uint32_t)number(o, "memory_rows");
    x->tokens = (uint64_t)number(o, "tokens");
    x->from_state = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "from_state"));
    x->seeded = cJSON_IsNumber(seed);
    x->seed = x->seeded ? (uint64_t)seed->valuedouble : 0;
    x->created = clock_of(number(o, "created"));
    x->last_used = clock_of(number(o, "last_used")); /* the idle time goes on from where it stood */
    x->made = 1;
    sv->sessions[sv->n_sessions++] = x;
    cJSON_Delete(o);
}

int srv_store_open(srv *sv)
{
    const char *dir = sv->cfg.session_dir;
    if (mkdir(dir, 0700) && errno != EEXIST)
        return fprintf(stderr, "txlm: serve: --session-dir %s: %s\n", dir, strerror(errno)), 1;
    DIR *d = opendir(dir);
    if (!d) return fprintf(stderr, "txlm: serve: --session-dir %s: %s\n", dir, strerror(errno)), 1;
    for (struct dirent *e; (e = readdir(d));) list_one(sv, e->d_name);
    closedir(d);
    if (sv->n_sessions) fprintf(stderr, "txlm: serve: %u sessions listed from %s\n", sv->n_sessions, dir);
    return 0;
}

/* The whole file, and where its state starts. NULL after filling e. */
static char *read_file(const char *path, size_t *len, size_t *state_at, srv_err *e)
{
    FILE *f = NULL;
    if (txlm_input_open(path, &f)) return srv_fail(e, 500, "session", "reading %s: %s", path, txlm_last_error()), NULL;
    cJSON *o = read_facts(f);
    long at = o ? ftell(f) : -1;
    cJSON_Delete(o);
    char *buf = NULL;
    if (at >= 0 && !fseek(f, 0, SEEK_END)) {
        long end = ftell(f);
        buf = end >= at && !fseek(f, 0, SEEK_SET) ? malloc((size_t)end + 1) : NULL;
        if (buf && fread(buf, 1, (size_t)end, f) != (size_t)end) free(buf), buf = NULL;
        *len = (size_t)end, *state_at = (size_t)at;
    }
    fclose(f);
    if (!buf) srv_fail(e, 500, "session", "reading %s: %s", path, at < 0 ? "not a session file" : "read failed");
    return buf;
}

int srv_store_load(srv *sv, srv_session *x, srv_err *e)
{
    char path[4096];
    file_of(sv, x->id, path, sizeof path);
    size_t len = 0, at = 0;
    char *buf = read_file(path, &len, &at, e);
    if (!buf) return -1;
    txlm_session_options so = sv->cfg.so;
    so.max_segment = sv->seg;
    txlm_session *s = NULL;
    txlm_status st = txlm_session_create(sv->m, &so, &s);
    if (!st) st = txlm_session_restore(s, buf + at, len - at);
    free(buf);
    if (st) {
        txlm_session_free(s);
        return srv_fail(e, st == TXLM_ERR_OUT_OF_MEMORY ? 503 : 500, "session", "session %s's saved state (%s) was not "
                        "taken back: %s", x->id, path, txlm_last_error());
    }
    /* in memory now: a crash from here on must not bring back this older state */
    unlink(path);
    pthread_mutex_lock(&sv->lock);
    x->s = s, x->stored = 0;
    x->device_bytes = srv_device_bytes(s);
    pthread_mutex_unlock(&sv->lock);
    return 0;
}

void srv_store_forget(srv *sv, const srv_session *x)
{
    if (!sv->cfg.session_dir || !x->stored) return; /* read back, its file was removed then */
    char path[4096];
    file_of(sv, x->id, path, sizeof path);
    unlink(path);
}

/* ---- writing --------------------------------------------------------- */

static char *facts_line(const srv *sv, const srv_session *x, size_t *len)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", x->id);
    if (x->key >= 0) {
        char h[2 * SHA256_DIGEST_SIZE + 1];
        key_hash(sv->cfg.keys[x->key], h);
        cJSON_AddStringToObject(o, "key", h);
    } else {
        cJSON_AddNullToObject(o, "key");
    }
    cJSON_AddNumberToObject(o, "tokens", (double)x->tokens);
    cJSON_AddBoolToObject(o, "from_state", x->from_state);
    if (x->seeded) cJSON_AddNumberToObject(o, "seed", (double)x->seed);
    else cJSON_AddNullToObject(o, "seed");
    cJSON_AddNumberToObject(o, "memory_rows", txlm_session_memory_len(x->s));
    cJSON_AddNumberToObject(o, "created", wall_of(x->created));
    cJSON_AddNumberToObject(o, "last_used", wall_of(x->last_used));
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    *len = s ? strlen(s) : 0;
    return s;
}

/* One session's file. 0, or -1 after printing why. */
static int save_one(srv *sv, const srv_session *x, uint64_t *bytes)
{
    char path[4096];
    file_of(sv, x->id, path, sizeof path);
    size_t n = 0, size = txlm_session_state_size(x->s);
    char *facts = facts_line(sv, x, &n), *state = malloc(size ? size : 1);
    txlm_output *out = NULL;
    txlm_status st = !facts || !state ? TXLM_ERR_OUT_OF_MEMORY : txlm_session_save(x->s, state, size, &size);
    if (!st) st = txlm_output_open(path, &out);
    if (!st) st = txlm_output_write(out, MAGIC, strlen(MAGIC));
    if (!st) st = txlm_output_write(out, facts, n);
    if (!st) st = txlm_output_write(out, "\n", 1);
    if (!st) st = txlm_output_write(out, state, size);
    if (!st) st = txlm_output_commit(out), out = NULL;
    txlm_output_abort(out);
    free(facts), free(state);
    if (st) return fprintf(stderr, "txlm: serve: --session-dir: session %s not written: %s\n", x->id, txlm_last_error()), -1;
    *bytes += strlen(MAGIC) + n + 1 + size;
    return 0;
}

void srv_store_save_all(srv *sv)
{
    uint32_t written = 0, failed = 0;
    uint64_t bytes = 0;
    /* a session's memory is its client's conversation: files only the server's user reads (the
     * process's mask is its own while the other threads are idle at the stop) */
    mode_t mask = umask(077);
    for (uint32_t i = 0; i < sv->n_sessions; i++) {
        const srv_session *x = sv->sessions[i];
        if (x->stored || !x->s) continue; /* never read back: its file is as it was */
        if (save_one(sv, x, &bytes)) failed++;
        else written++;
    }
    umask(mask);
    fprintf(stderr, "txlm: serve: %u sessions written to %s (%.1f MB)%s\n", written, sv->cfg.session_dir, bytes / 1e6,
            failed ? ", some not (above)" : "");
}
