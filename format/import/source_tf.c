/* The authors' TensorFlow checkpoints as a source (source.h), as
 * tf/sota/download.sh leaves them: the top folder (model/ + data/), the
 * model folder (its `checkpoint` file names the latest), a checkpoint
 * prefix or its .index; data/corpus-info.json and data/cache.pkl beside
 * it. The bundle is read by tf_bundle.c and mapped onto the authors'
 * PyTorch names by tf_layout.c; the settings of the evaluation scripts
 * (tf/sota/<dataset>.sh), which the files do not hold, come from the
 * dataset corpus-info.json names. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>
#include <txlm_status.h>

#include "ckpt_list.h"
#include "file_map.h"
#include "source.h"
#include "tf_layout.h"
#include "vocab_check.h"

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

static int sniff(txlm_probe *p)
{
    char q[4096];
    if (p->is_file && has_suffix(p->path, ".index")) return 1;
    if (snprintf(q, sizeof q, "%s.index", p->path) < (int)sizeof q && is_reg(q)) return 1;
    if (!p->is_dir) return 0;
    if (!join(q, sizeof q, p->path, "checkpoint") && is_reg(q)) return 1;
    return !join(q, sizeof q, p->path, "model/checkpoint") && is_reg(q);
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

/* Where the checkpoint's files are. */
typedef struct where {
    char prefix[4096];     /* PREFIX of PREFIX.index and PREFIX.data-* */
    char checkpoint[4096]; /* the `checkpoint` file that named it, or "" */
    char data[4096];       /* the folder of corpus-info.json and cache.pkl, or "" */
} where;

/* The `checkpoint` file (a text proto): model_checkpoint_path: "NAME". A
 * path of the machine that wrote it is taken by its last component. */
static int latest(const char *dir, where *w, txlm_err *err)
{
    char *path = w->checkpoint, index[4200];
    join(path, sizeof w->checkpoint, dir, "checkpoint");
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
        if (name[0] == '/' && snprintf(index, sizeof index, "%s.index", name) < (int)sizeof index && is_reg(index)) base = NULL;
        else if (base) name = base + 1;
        if (name[0] == '/' ? snprintf(w->prefix, sizeof w->prefix, "%s", name) >= (int)sizeof w->prefix
                           : join(w->prefix, sizeof w->prefix, dir, name))
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

/* The checkpoint prefix path stands for, and the folder of its data. */
static int resolve(const char *path, where *w, txlm_err *err)
{
    char p[4096];
    int rc = 0;
    memset(w, 0, sizeof *w);
    if (has_suffix(path, ".index") && is_reg(path)) snprintf(w->prefix, sizeof w->prefix, "%.*s", (int)(strlen(path) - 6), path);
    else if (snprintf(p, sizeof p, "%s.index", path) < (int)sizeof p && is_reg(p)) snprintf(w->prefix, sizeof w->prefix, "%s", path);
    else if (!join(p, sizeof p, path, "checkpoint") && is_reg(p)) rc = latest(path, w, err);
    else if (!join(p, sizeof p, path, "model") && is_dir(p)) rc = latest(p, w, err);
    else rc = txlm_fail(err, TXLM_ERR_IO, "%s: no TensorFlow checkpoint (PREFIX.index, a folder with `checkpoint`, or model/)", path);
    if (!rc) find_data(w->prefix, w->data, sizeof w->data);
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
    int match = n == 0 ? h->n_cutoffs == 0 : n == (int)h->n_cutoffs + 2; /* train_gpu.py takes cutoffs[1:-1] */
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
 * LayerNorm epsilon 1e-12, and same_length as _create_mask builds it,
 * which with mem_len rows of memory lets each query see itself and
 * mem_len keys before it: NVIDIA's rule. (The zero start is the source's
 * zero_memory, set in tell.) */
static void settings(txlm_hparams *h, const dataset *ds)
{
    h->tgt_len = ds ? ds->tgt_len : 128;
    h->mem_len = ds ? ds->mem_len : 1600;
    h->clamp_len = ds ? ds->clamp_len : 1000;
    h->same_length = 1;
    h->same_length_rule = TXLM_SAME_LENGTH_NVIDIA;
    h->layer_norm_epsilon = 1e-12f;
}

/* cache.pkl's vocabulary (or --vocab's), with the corpus's tokenizer. */
static int vocab(txlm_source *out, const char *given, const where *w, const dataset *ds, txlm_err *err)
{
    char path[4096];
    if (!given && (!w->data[0] || join(path, sizeof path, w->data, "cache.pkl") || !is_reg(path)))
        return txlm_fail(err, TXLM_ERR_IO, "%s: no data/cache.pkl beside the checkpoint (tf/sota/download.sh fetches it): "
                         "give --vocab", w->prefix);
    int rc = txlm_source_vocab(out, given ? given : path, err);
    if (rc || !ds) return rc;
    txlm_vocab *v = &out->vocab.v;
    v->kind = ds->kind;
    v->flags = ds->flags;
    if (ds->flags & TXLM_VOCAB_LINE_START_EOS) v->eos_id = txlm_vocab_find_sym(v, "<S>");
    return 0;
}

/* The index and every data shard, which no output may be. */
static int bundle_inputs(txlm_source *out, const txlm_tf_bundle *b, txlm_err *err)
{
    int rc = txlm_source_input(out, txlm_tf_bundle_index_path(b), err);
    for (uint32_t i = 0; !rc && i < txlm_tf_bundle_shard_count(b); i++) rc = txlm_source_input(out, txlm_tf_bundle_shard_path(b, i), err);
    return rc;
}

/* What the files say, and what they do not: the dataset's lengths, TensorFlow's semantics. */
static void tell(txlm_source *out, const dataset *ds, uint32_t skipped)
{
    out->order = TXLM_CLUSTERS_FORWARD;
    snprintf(out->what, sizeof out->what, "the authors' TensorFlow checkpoint (tf/model.py); %u entries not read (optimizer "
             "slots, step)", skipped);
    snprintf(out->why, sizeof out->why, "tf/model.py reads tail cluster i at head column cutoff_ends[1] + i - 1");
    if (ds) txlm_source_note(out, "dataset %s: the lengths of tf/sota/%s.sh", ds->name, ds->name);
    else txlm_source_note(out, "no corpus-info.json names the dataset: HF's lengths");
    txlm_source_note(out, "LayerNorm epsilon 1e-12 (TensorFlow's layer_norm); train_gpu.py's evaluation starts from np.zeros "
                     "memories");
    out->zero_memory = 1;
}

static int open_tf(txlm_probe *p, const txlm_source_options *opt, txlm_source *out, txlm_err *err)
{
    where w;
    char info[4200];
    txlm_tf_bundle *b = NULL;
    uint32_t skipped = 0;
    const dataset *ds = NULL;
    int rc = txlm_source_refuse(opt, p->path, 1, 1, 0, err);
    if (!rc) rc = resolve(p->path, &w, err);
    if (!rc && w.checkpoint[0]) rc = txlm_source_input(out, w.checkpoint, err);
    if (!rc) rc = txlm_tf_bundle_open(w.prefix, &b, err);
    if (!rc) rc = txlm_tf_layout(b, &out->h, &out->ck, &skipped, err); /* the checkpoint owns the bundle */
    if (!rc) rc = bundle_inputs(out, b, err);
    if (!rc && w.data[0] && !join(info, sizeof info, w.data, "corpus-info.json") && is_reg(info)) {
        rc = txlm_source_input(out, info, err);
        if (!rc) rc = corpus_info(info, &out->h, &ds, err);
    }
    if (!rc) settings(&out->h, ds);
    if (!rc) rc = vocab(out, opt->vocab, &w, ds, err);
    if (!rc) tell(out, ds, skipped);
    return rc;
}

/* Every entry of the bundle: float tensors read (their CRCs checked) for
 * their first values, others listed as not read. */
static int list_entry(const txlm_tf_bundle *b, const txlm_tf_tensor *t, FILE *out, txlm_err *err)
{
    char buf[32];
    uint32_t es = txlm_tf_float_size(t->dtype);
    const uint8_t *d = NULL;
    int rc = es ? txlm_tf_bundle_data(b, t, &d, err) : 0;
    if (rc) return rc;
    txlm_list_head(out, t->name, txlm_tf_dtype_name(t->dtype, buf, sizeof buf), t->rank, t->dims);
    if (!es) fputs("(not read)", out);
    for (uint64_t k = 0; d && k < t->n_elems && k < TXLM_LIST_VALUES; k++)
        fprintf(out, "%s%.6g", k ? " " : "", txlm_tf_elem(d, t->dtype, k));
    fputc('\n', out);
    return 0;
}

static int list_tf(txlm_probe *p, FILE *out, txlm_err *err)
{
    where w;
    txlm_tf_bundle *b = NULL;
    int rc = resolve(p->path, &w, err);
    if (!rc) rc = txlm_tf_bundle_open(w.prefix, &b, err);
    for (uint32_t i = 0; !rc && i < txlm_tf_bundle_count(b); i++) rc = list_entry(b, txlm_tf_bundle_at(b, i), out, err);
    txlm_tf_bundle_free(b);
    return rc;
}

const txlm_source_kind txlm_source_tf = {
    "tf", "the authors' TensorFlow checkpoint (tf/sota/download.sh's folder, model/, or a PREFIX of PREFIX.index)", sniff,
    open_tf, list_tf,
};
