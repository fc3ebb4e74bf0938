/* Finding the authors' TensorFlow checkpoint and what goes with it, and
 * the settings of their evaluation scripts (tf/sota/<dataset>.sh), which
 * the files do not hold. */
#include "tf_source.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>
#include <txlm_status.h>

#include "file_map.h"
#include "vocab_check.h"
#include "tf_layout.h"
#include "torch.h"

/* tf/sota/<dataset>.sh's test settings, and each corpus's preparation. */
typedef struct dataset {
    const char *name;
    uint32_t tgt_len, mem_len;
    int32_t clamp_len;
    uint32_t kind;   /* txlm_tokenizer_kind */
    uint32_t flags;  /* TXLM_VOCAB_* */
} dataset;

static const dataset datasets[] = {
    {"wt103", 128, 1600, 1000, TXLM_TOK_WORD, 0},
    {"enwik8", 128, 3800, 1000, TXLM_TOK_CHAR_BYTE, 0},
    {"text8", 128, 3800, 1000, TXLM_TOK_CHAR_TEXT8, 0},
    {"lm1b", 32, 128, -1, TXLM_TOK_WORD, TXLM_VOCAB_LINE_START_EOS},
};

static int is_reg(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int join(char *out, size_t cap, const char *a, const char *b)
{
    return snprintf(out, cap, "%s%s%s", a, a[0] && a[strlen(a) - 1] != '/' ? "/" : "", b) >= (int)cap;
}

static int has_suffix(const char *s, const char *t)
{
    size_t n = strlen(s), m = strlen(t);
    return n > m && !strcmp(s + n - m, t);
}

int txlm_tf_sniff(const char *path)
{
    char p[4096];
    if (has_suffix(path, ".index") && is_reg(path)) return 1;
    if (snprintf(p, sizeof p, "%s.index", path) < (int)sizeof p && is_reg(p)) return 1;
    if (!is_dir(path)) return 0;
    if (!join(p, sizeof p, path, "checkpoint") && is_reg(p)) return 1;
    return !join(p, sizeof p, path, "model/checkpoint") && is_reg(p);
}

/* A small text file, NUL-terminated (malloc'd). */
static char *slurp(const char *path, txlm_err *err)
{
    txlm_file_map m;
    if (txlm_file_map_open(path, &m, err)) return NULL;
    char *s = m.len < (1u << 20) ? malloc(m.len + 1) : NULL;
    if (s) {
        memcpy(s, m.data, m.len);
        s[m.len] = 0;
    } else {
        txlm_fail(err, TXLM_ERR_FORMAT, "%s: %" PRIu64 " bytes, too large for what it should hold", path, m.len);
    }
    txlm_file_map_close(&m);
    return s;
}

/* The `checkpoint` file (a text proto): model_checkpoint_path: "NAME". A
 * path of the machine that wrote it is taken by its last component. */
static int latest(const char *dir, char *prefix, size_t cap, txlm_err *err)
{
    char path[4096];
    join(path, sizeof path, dir, "checkpoint");
    char *s = slurp(path, err);
    if (!s) return err ? err->code : TXLM_ERR_IO;
    char *at = strstr(s, "model_checkpoint_path:");
    char *q = at ? strchr(at, '"') : NULL, *e = q ? strchr(q + 1, '"') : NULL;
    int rc = 0;
    if (!e || e == q + 1 || memchr(q + 1, '\\', (size_t)(e - q - 1)) || memchr(q + 1, '\n', (size_t)(e - q - 1))) {
        rc = txlm_fail(err, TXLM_ERR_FORMAT, "%s: no model_checkpoint_path: \"NAME\" line", path);
    } else {
        *e = 0;
        const char *name = q + 1, *base = strrchr(name, '/');
        if (name[0] == '/' && snprintf(path, sizeof path, "%s.index", name) < (int)sizeof path && is_reg(path)) base = NULL;
        else if (base) name = base + 1;
        if (name[0] == '/' ? snprintf(prefix, cap, "%s", name) >= (int)cap : join(prefix, cap, dir, name))
            rc = txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: path too long", dir);
    }
    free(s);
    return rc;
}

/* The folder above dir: its last component dropped where it has a plain
 * one (messages then name top/data/..., not top/model/../data/...). */
static void parent(const char *dir, char *out, size_t cap)
{
    const char *slash = strrchr(dir, '/'), *last = slash ? slash + 1 : dir;
    if (!strcmp(last, ".") || !strcmp(last, "..") || !*last) join(out, cap, dir, "..");
    else if (slash) snprintf(out, cap, "%.*s", slash == dir ? 1 : (int)(slash - dir), dir);
    else snprintf(out, cap, ".");
}

/* The folder of a prefix, and its data folder: <model>/../data, else the model folder itself. */
static void find_data(const char *prefix, char *data_dir, size_t dcap)
{
    char dir[4096], up[4096], p[4096];
    snprintf(dir, sizeof dir, "%s", prefix);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, ".");
    parent(dir, up, sizeof up);
    data_dir[0] = 0;
    const char *tries[][2] = {{up, "data"}, {dir, ""}};
    for (int i = 0; i < 2; i++) {
        char d[4096];
        if (tries[i][1][0] ? join(d, sizeof d, tries[i][0], tries[i][1]) : snprintf(d, sizeof d, "%s", tries[i][0]) >= (int)sizeof d)
            continue;
        if ((!join(p, sizeof p, d, "corpus-info.json") && is_reg(p)) || (!join(p, sizeof p, d, "cache.pkl") && is_reg(p))) {
            snprintf(data_dir, dcap, "%s", d);
            return;
        }
    }
}

int txlm_tf_resolve(const char *path, char *prefix, size_t cap, char *data_dir, size_t dcap, txlm_err *err)
{
    char p[4096];
    int rc = 0;
    if (has_suffix(path, ".index") && is_reg(path)) snprintf(prefix, cap, "%.*s", (int)(strlen(path) - 6), path);
    else if (snprintf(p, sizeof p, "%s.index", path) < (int)sizeof p && is_reg(p)) snprintf(prefix, cap, "%s", path);
    else if (!join(p, sizeof p, path, "checkpoint") && is_reg(p)) rc = latest(path, prefix, cap, err);
    else if (!join(p, sizeof p, path, "model") && is_dir(p)) rc = latest(p, prefix, cap, err);
    else rc = txlm_fail(err, TXLM_ERR_IO, "%s: no TensorFlow checkpoint (PREFIX.index, a folder with `checkpoint`, or model/)", path);
    if (!rc) find_data(prefix, data_dir, dcap);
    return rc;
}

/* corpus-info.json: the dataset's name, and vocab_size and cutoffs
 * ([0, c1, ..., n_token], or [] for character corpora) checked against
 * what the weights' shapes say. */
static int corpus_info(const char *path, const txlm_hparams *h, const dataset **ds, txlm_err *err)
{
    char *s = slurp(path, err);
    if (!s) return err ? err->code : TXLM_ERR_IO;
    cJSON *j = cJSON_Parse(s);
    free(s);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return txlm_fail(err, TXLM_ERR_FORMAT, "%s: not a JSON object", path);
    }
    int rc = 0;
    const cJSON *vs = cJSON_GetObjectItemCaseSensitive(j, "vocab_size"), *cut = cJSON_GetObjectItemCaseSensitive(j, "cutoffs");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "dataset");
    if (cJSON_IsNumber(vs) && vs->valuedouble != (double)h->n_token)
        rc = txlm_fail(err, TXLM_ERR_FORMAT, "%s: vocab_size %g, but the checkpoint's tables hold %u tokens", path,
                       vs->valuedouble, h->n_token);
    int n = cJSON_IsArray(cut) ? cJSON_GetArraySize(cut) : -1;
    int match = n == 0 || n == (int)h->n_cutoffs + 2;
    for (int i = 0; !rc && match && n > 0 && i < n; i++) {
        double want = i == 0 ? 0 : i == n - 1 ? h->n_token : h->cutoffs[i - 1];
        const cJSON *c = cJSON_GetArrayItem(cut, i);
        match = cJSON_IsNumber(c) && c->valuedouble == want;
    }
    if (!rc && n >= 0 && !match)
        rc = txlm_fail(err, TXLM_ERR_FORMAT, "%s: cutoffs disagree with the checkpoint's %u adaptive clusters", path,
                       h->n_cutoffs + 1);
    *ds = NULL;
    for (size_t i = 0; !rc && cJSON_IsString(name) && i < sizeof datasets / sizeof *datasets; i++)
        if (!strcmp(name->valuestring, datasets[i].name)) *ds = &datasets[i];
    cJSON_Delete(j);
    return rc;
}

/* The lengths of the paper's evaluation, and TensorFlow's semantics:
 * LayerNorm epsilon 1e-12, zero memories at the start, and same_length
 * as _create_mask builds it, which with mem_len rows of memory lets each
 * query see itself and mem_len keys before it: NVIDIA's rule. */
static void settings(txlm_hparams *h, const dataset *ds)
{
    h->tgt_len = ds ? ds->tgt_len : 128;
    h->mem_len = ds ? ds->mem_len : 1600;
    h->clamp_len = ds ? ds->clamp_len : 1000;
    h->same_length = 1;
    h->same_length_rule = TXLM_SAME_LENGTH_NVIDIA;
    h->zero_memory = 1;
    h->layer_norm_epsilon = 1e-12f;
}

static int vocab(const char *data_dir, const dataset *ds, txlm_vocab_buf *v, txlm_err *err)
{
    char path[4096];
    if (!data_dir[0] || join(path, sizeof path, data_dir, "cache.pkl") || !is_reg(path))
        return txlm_fail(err, TXLM_ERR_IO, "no data/cache.pkl beside the checkpoint (tf/sota/download.sh fetches it): give --vocab");
    int rc = txlm_vocab_load_pickle(path, v, err);
    if (rc || !ds) return rc;
    v->v.kind = ds->kind;
    v->v.flags = ds->flags;
    if (ds->flags & TXLM_VOCAB_LINE_START_EOS) v->v.eos_id = txlm_vocab_find_sym(&v->v, "<S>");
    return 0;
}

int txlm_tf_source_open(const char *path, int want_vocab, txlm_ckpt_source *out, txlm_err *err)
{
    char prefix[4096], data_dir[4096], info[4096];
    memset(out, 0, sizeof *out);
    txlm_tf_bundle *b = NULL;
    uint32_t skipped = 0;
    int rc = txlm_tf_resolve(path, prefix, sizeof prefix, data_dir, sizeof data_dir, err);
    if (!rc) rc = txlm_tf_bundle_open(prefix, &b, err);
    if (!rc) rc = txlm_tf_layout(b, &out->h, &out->ck, &skipped, err);
    const dataset *ds = NULL;
    int have_info = !rc && data_dir[0] && !join(info, sizeof info, data_dir, "corpus-info.json") && is_reg(info);
    if (have_info) rc = corpus_info(info, &out->h, &ds, err);
    if (!rc) settings(&out->h, ds);
    if (!rc && want_vocab) rc = vocab(data_dir, ds, &out->vocab, err);
    if (rc) {
        txlm_ckpt_source_free(out);
        return rc;
    }
    out->order = TXLM_CLUSTERS_FORWARD;
    snprintf(out->what, sizeof out->what, "the authors' TensorFlow checkpoint (tf/model.py); %u entries not read (optimizer "
             "slots, step)", skipped);
    snprintf(out->why, sizeof out->why, "tf/model.py reads tail cluster i at head column cutoff_ends[1] + i - 1");
    char lengths[128];
    if (ds) snprintf(lengths, sizeof lengths, "dataset %s: the lengths of tf/sota/%s.sh", ds->name, ds->name);
    else snprintf(lengths, sizeof lengths, "no corpus-info.json names the dataset: HF's lengths");
    snprintf(out->notes, sizeof out->notes, "%s; LayerNorm epsilon 1e-12 (TensorFlow's layer_norm); a session starts from "
             "mem_len rows of zeros (train_gpu.py's np.zeros memories; --zero-memory 0 overrides)", lengths);
    return 0;
}
