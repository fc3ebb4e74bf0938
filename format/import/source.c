/* The table of checkpoint sources (source.h) and the one way in. */
#include "source.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <txlm_status.h>

#include "ckpt_list.h"
#include "open_input.h"
#include "source_describe.h"
#include "tensor_table.h"
#include "vocab_txt.h"

/* The sources, asked in this order: the first whose sniff says yes opens
 * the input. A source that takes folders goes before hf_folder, which
 * takes any. X(name) is the txlm_source_kind txlm_source_<name>. */
#define SOURCES(X)                                                                    \
    X(txlm)       /* a .txlm, packed again in another --dtype: source_txlm.c */       \
    X(nvidia)     /* NVIDIA's training checkpoint: ckpt_nvidia.c */                   \
    X(module)     /* the authors' whole saved model: ckpt_module.c */                 \
    X(state_dict) /* a safetensors or torch.save state dict: source_state_dict.c */   \
    X(tf)         /* the authors' TensorFlow checkpoints: source_tf.c */              \
    X(hf_folder)  /* an HF folder: source_hf_folder.c */                              \
    X(synthetic)  /* by name only: random weights for a config, source_synthetic.c */

#define DECLARE(name) extern const txlm_source_kind txlm_source_##name;
SOURCES(DECLARE)
#define ENTRY(name) &txlm_source_##name,
static const txlm_source_kind *const sources[] = {SOURCES(ENTRY)};
#define N_SOURCES (sizeof sources / sizeof *sources)

static void probe(txlm_probe *p, const char *path)
{
    memset(p, 0, sizeof *p);
    p->path = path;
    struct stat st;
    if (stat(path, &st)) return;
    p->exists = 1;
    p->mode = (unsigned)st.st_mode;
    p->is_dir = S_ISDIR(st.st_mode);
    p->is_file = S_ISREG(st.st_mode);
    p->size = (uint64_t)st.st_size;
    FILE *f;
    if (p->is_file && !txlm_fopen_input(path, &f, NULL)) {
        p->head_len = fread(p->head, 1, sizeof p->head, f);
        fclose(f);
    }
}

static void unprobe(txlm_probe *p)
{
    txlm_torch_free(p->torch);
    p->torch = NULL;
}

const txlm_pk_value *txlm_probe_torch_root(txlm_probe *p)
{
    if (!p->torch_read && p->is_file && txlm_torch_sniff(p->head, p->head_len)) {
        p->torch_read = 1;
        txlm_err ignored = {0, ""};
        if (txlm_torch_load(p->path, &p->torch, &ignored)) p->torch = NULL; /* the source that opens it says why */
    }
    return p->torch ? txlm_torch_root(p->torch) : NULL;
}

txlm_torch_obj *txlm_probe_take_torch(txlm_probe *p)
{
    txlm_torch_obj *o = p->torch;
    p->torch = NULL;
    return o;
}

/* safetensors: its little-endian length may begin with 0x80, the pickle
 * protocol byte, but a pickle never has '{' at byte 8. */
int txlm_probe_is_safetensors(const txlm_probe *p) { return p->is_file && p->head_len >= 9 && p->head[8] == '{'; }

static const txlm_source_kind *by_name(const char *name)
{
    for (size_t i = 0; i < N_SOURCES; i++)
        if (!strcmp(sources[i]->name, name)) return sources[i];
    return NULL;
}

/* --tokenizer and --lower-case over what the vocabulary says. */
static int tokenizer_options(const txlm_source_options *opt, txlm_vocab *v, txlm_err *err)
{
    const char *t = opt->tokenizer;
    if (t && !strcmp(t, "word")) v->kind = TXLM_TOK_WORD;
    else if (t && !strcmp(t, "wt103")) v->kind = TXLM_TOK_WORD, v->flags |= TXLM_VOCAB_WT103_NORM;
    else if (t && !strcmp(t, "char")) v->kind = TXLM_TOK_CHAR_BYTE;
    else if (t && !strcmp(t, "text8")) v->kind = TXLM_TOK_CHAR_TEXT8;
    else if (t) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "--tokenizer '%s': expected word, wt103, char or text8", t);
    if (opt->lower_case) v->flags |= TXLM_VOCAB_LOWER_CASE;
    return 0;
}

/* An input no source takes: what it looks like, and what is accepted. */
static int refuse_unknown(const txlm_probe *p, txlm_err *err)
{
    char looks[320], accepted[1024] = "";
    txlm_describe_input(p, looks, sizeof looks);
    size_t n = 0;
    for (size_t i = 0; i < N_SOURCES; i++)
        if (sources[i]->sniff)
            n += (size_t)snprintf(accepted + n, n < sizeof accepted ? sizeof accepted - n : 0, "%s%s", n ? "; " : "",
                                  sources[i]->accepts);
    return txlm_fail(err, p->exists ? TXLM_ERR_FORMAT : TXLM_ERR_IO, "%s %s; txlm-pack reads %s", p->path, looks, accepted);
}

/* The source named, else the first whose sniff takes p; NULL with *rc set when none. */
static const txlm_source_kind *choose(txlm_probe *p, const char *name, int *rc, txlm_err *err)
{
    const txlm_source_kind *k = name ? by_name(name) : NULL;
    *rc = 0;
    if (name && !k) *rc = txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "no source named '%s'", name);
    for (size_t i = 0; !name && !k && i < N_SOURCES; i++)
        if (sources[i]->sniff && sources[i]->sniff(p)) k = sources[i];
    if (!name && !k) *rc = refuse_unknown(p, err);
    return k;
}

int txlm_source_open(const char *path, const txlm_source_options *opt, txlm_source *out, txlm_err *err)
{
    memset(out, 0, sizeof *out);
    txlm_probe p;
    probe(&p, path);
    int rc;
    const txlm_source_kind *k = choose(&p, opt->source, &rc, err);
    if (k) rc = k->open(&p, opt, out, err);
    unprobe(&p);
    if (k) out->kind = k->name;
    out->h.zero_memory = out->zero_memory != 0;
    if (!rc) rc = tokenizer_options(opt, &out->vocab.v, err);
    return rc;
}

int txlm_source_list(const char *path, FILE *out, txlm_err *err)
{
    txlm_probe p;
    probe(&p, path);
    int rc;
    const txlm_source_kind *k = choose(&p, NULL, &rc, err);
    if (k && k->list) {
        rc = k->list(&p, out, err);
    } else if (k) {
        txlm_source s;
        txlm_source_options none = {0};
        memset(&s, 0, sizeof s);
        rc = k->open(&p, &none, &s, err);
        if (!rc) txlm_checkpoint_print(s.ck, out);
        txlm_source_free(&s);
    }
    unprobe(&p);
    return rc;
}

void txlm_source_free(txlm_source *s)
{
    if (!s) return;
    txlm_checkpoint_free(s->ck);
    txlm_vocab_buf_free(&s->vocab);
    for (uint32_t i = 0; i < s->n_inputs; i++) free(s->inputs[i]);
    memset(s, 0, sizeof *s);
}

void txlm_source_note(txlm_source *s, const char *fmt, ...)
{
    size_t n = strlen(s->notes);
    if (n + 1 >= sizeof s->notes) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->notes + n, sizeof s->notes - n, fmt, ap);
    va_end(ap);
    n = strlen(s->notes);
    if (n && s->notes[n - 1] != '\n' && n + 1 < sizeof s->notes) strcat(s->notes, "\n");
}

int txlm_source_input(txlm_source *s, const char *path, txlm_err *err)
{
    if (s->n_inputs == TXLM_SOURCE_MAX_INPUTS)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: more than %d input files", path, TXLM_SOURCE_MAX_INPUTS);
    if (!(s->inputs[s->n_inputs] = strdup(path))) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
    s->n_inputs++;
    return 0;
}

void txlm_source_note_hf_start(txlm_source *s)
{
    if (txlm_checkpoint_has_prefix(s->ck, TXLM_HF_PREFIX))
        txlm_source_note(s, "HF's code starts a text from mem_len rows of zeros (init_mems): txlm eval, score, logprobs and "
                         "generate do the same with --zero-memory 1");
}

int txlm_source_config(txlm_source *s, const char *path, txlm_err *err)
{
    txlm_config_notes notes = {.hf_defaults = 1};
    int rc = txlm_source_input(s, path, err);
    if (!rc) rc = txlm_config_load_json_notes(path, &s->h, &notes, err);
    if (!rc && notes.text[0]) txlm_source_note(s, "%s", notes.text);
    return rc;
}

int txlm_source_vocab(txlm_source *s, const char *path, txlm_err *err)
{
    txlm_probe p;
    probe(&p, path);
    char note[512] = "";
    txlm_vocab_buf_free(&s->vocab);
    int rc = txlm_source_input(s, path, err);
    if (!rc)
        rc = txlm_vocab_sniff_pickle(p.head, p.head_len) ? txlm_vocab_load_pickle(path, &s->vocab, err)
                                                          : txlm_vocab_load_txt_noted(path, &s->vocab, note, sizeof note, err);
    if (!rc && note[0]) txlm_source_note(s, "%s", note);
    return rc;
}

int txlm_source_refuse(const txlm_source_options *opt, const char *path, int config, int weights, int vocab,
                       txlm_err *err)
{
    const char *given = config && opt->config ? "--config" : weights && opt->weights ? "--weights"
                        : vocab && opt->vocab ? "--vocab" : NULL;
    if (!given) return 0;
    return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s holds its own %s: no %s", path,
                     !strcmp(given, "--config") ? "hyper-parameters" : !strcmp(given, "--weights") ? "weights" : "vocabulary",
                     given);
}
