/* txlm-pack: a Transformer-XL checkpoint folder (config.json, weights,
 * vocabulary) -> one .txlm file. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <txlm.h>

#include "checkpoint.h"
#include "ckpt_checks.h"
#include "ckpt_list.h"
#include "ckpt_source.h"
#include "export_hf.h"
#include "open_input.h"
#include "pack.h"
#include "vocab_txt.h"
#include "synthetic.h"
#include "tf_source.h"
#include "torch.h"

static const char usage[] =
    "usage: txlm-pack DIR -o OUT.txlm [options]\n"
    "       txlm-pack CHECKPOINT -o OUT.txlm [options]\n"
    "       txlm-pack --synthetic CONFIG.json -o OUT.txlm [--seed N] [options]\n"
    "       txlm-pack --list PATH\n"
    "\n"
    "Converts a Transformer-XL language model to the .txlm format.\n"
    "DIR holds config.json, model.safetensors (else pytorch_model.bin) and\n"
    "vocab.txt (else vocab.pkl, else vocab.bin); options override each file.\n"
    "A CHECKPOINT file is told by its content: NVIDIA's training checkpoint\n"
    "(checkpoint_best.pt: config and vocabulary inside), the authors' whole\n"
    "saved model (model.pt, with --vocab cache.pt), or a state dict (with\n"
    "--config and --vocab). The authors' TensorFlow models (tf/sota/download.sh)\n"
    "pack from their top folder (model/ + data/), the model folder, or a checkpoint\n"
    "prefix: the dataset's vocabulary (data/cache.pkl) and evaluation settings come\n"
    "with them.\n"
    "\n"
    "  -o, --output F       the .txlm file to write (written atomically)\n"
    "  --list PATH          print every tensor of a checkpoint (any source above): name,\n"
    "                       dtype, shape, first values; a damaged file is refused\n"
    "  --config F           HuggingFace config.json\n"
    "  --weights F          model.safetensors, or a torch.save checkpoint (zip, or the\n"
    "                       legacy format of PyTorch < 1.6); nothing in it is executed\n"
    "  --vocab F            vocab.txt (one symbol per line), or HF TransfoXLTokenizer's\n"
    "                       attribute dict: plain pickle (vocab.pkl) or torch.save (vocab.bin)\n"
    "  --tokenizer KIND     word (default), wt103 (words; raw text gets the WikiText-103\n"
    "                       normalisation first, see docs/tokenizers.md), char (one\n"
    "                       symbol per byte) or text8\n"
    "  --lower-case         lower-case text before looking words up\n"
    "  --dtype T            weight matrices stored as f32 (default), f16, q8_0 or q4_0;\n"
    "                       vectors, r biases and cluster weights stay f32, and so do\n"
    "                       matrices whose rows are not whole 32-element blocks\n"
    "  --cluster-order O    forward or reverse: the order of the tail-cluster rows of\n"
    "                       crit.cluster_weight/bias in the checkpoint (default: told\n"
    "                       from what wrote it, and printed; see docs/tensors.md)\n"
    "  --synthetic F        no checkpoint: random weights (seeded) for the config.json F,\n"
    "                       vocabulary <eos>, <unk>, w2, w3, ... or --vocab F's, which must\n"
    "                       have n_token symbols (for tests and benchmarks)\n"
    "  --seed N             the seed of --synthetic (default 1); one seed, one model\n"
    "  --export-safetensors F  with --synthetic: also write the weights as HF-named\n"
    "                       safetensors F, with config.json and vocab.txt beside it\n"
    "  --version            print txlm-pack's version\n"
    "  --allow-nonfinite    pack weights holding NaN or infinity (each such tensor is\n"
    "                       reported, with its count and first element, either way)\n"
    "  -h, --help           this text\n"
    "\n"
    "Each file's form is told by its content, never by its name. Progress\n"
    "(bytes written / total) goes to stderr when it is a terminal.\n";

typedef struct args {
    const char *dir, *out, *config, *weights, *vocab, *tokenizer, *dtype, *synthetic, *seed, *export_st, *order, *list;
    int lower_case, allow_nonfinite;
} args;

static int fail(const char *fmt, const char *a)
{
    fprintf(stderr, "txlm-pack: ");
    fprintf(stderr, fmt, a);
    fputc('\n', stderr);
    return 1;
}

/* 0 = run, 1 = error, 2 = --help shown. */
static int parse_args(int argc, char **argv, args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char **slot = NULL;
        if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            fputs(usage, stdout);
            return 2;
        }
        if (!strcmp(s, "--version")) {
            printf("txlm-pack %d.%d.%d\n", TXLM_VERSION_MAJOR, TXLM_VERSION_MINOR, TXLM_VERSION_PATCH);
            return 2;
        }
        if (!strcmp(s, "--lower-case")) {
            a->lower_case = 1;
            continue;
        }
        if (!strcmp(s, "--allow-nonfinite")) {
            a->allow_nonfinite = 1;
            continue;
        }
        if (!strcmp(s, "-o") || !strcmp(s, "--output")) slot = &a->out;
        else if (!strcmp(s, "--config")) slot = &a->config;
        else if (!strcmp(s, "--weights")) slot = &a->weights;
        else if (!strcmp(s, "--vocab")) slot = &a->vocab;
        else if (!strcmp(s, "--tokenizer")) slot = &a->tokenizer;
        else if (!strcmp(s, "--dtype")) slot = &a->dtype;
        else if (!strcmp(s, "--synthetic")) slot = &a->synthetic;
        else if (!strcmp(s, "--seed")) slot = &a->seed;
        else if (!strcmp(s, "--export-safetensors")) slot = &a->export_st;
        else if (!strcmp(s, "--cluster-order")) slot = &a->order;
        else if (!strcmp(s, "--list")) slot = &a->list;
        if (slot) {
            if (i + 1 >= argc) return fail("%s needs a value (see --help)", s);
            *slot = argv[++i];
        } else if (s[0] == '-' && s[1]) {
            return fail("unknown option '%s' (see --help)", s);
        } else if (a->dir) {
            return fail("more than one input folder given ('%s')", s);
        } else {
            a->dir = s;
        }
    }
    if (a->list) return a->dir || a->out || a->synthetic ? fail("%s", "--list takes one PATH and nothing else") : 0;
    if (!a->out) return fail("%s", "no output file given (-o OUT.txlm)");
    if (a->synthetic && (a->dir || a->config || a->weights))
        return fail("%s", "--synthetic takes no input folder, --config or --weights");
    if (!a->synthetic && (a->seed || a->export_st)) return fail("%s", "--seed and --export-safetensors need --synthetic");
    if (a->synthetic) return 0;
    if (!a->dir && !(a->config && a->weights && a->vocab))
        return fail("%s", "no input folder given (txlm-pack DIR -o OUT.txlm, see --help)");
    return 0;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The explicit path, else the first candidate present in dir. */
static char *pick(const char *explicit_path, const char *dir, const char *const *names)
{
    if (explicit_path) return strdup(explicit_path);
    for (int i = 0; names[i]; i++) {
        size_t n = strlen(dir) + strlen(names[i]) + 2;
        char *p = malloc(n);
        if (!p) return NULL;
        snprintf(p, n, "%s/%s", dir, names[i]);
        if (exists(p)) return p;
        free(p);
    }
    return NULL;
}

/* The first bytes of a file (0 when it cannot be read): forms are told by content. */
static size_t read_head(const char *path, unsigned char head[16])
{
    FILE *f;
    if (txlm_fopen_input(path, &f, NULL)) return 0; /* the reader that opens it next says why */
    size_t n = fread(head, 1, 16, f);
    fclose(f);
    return n;
}

/* What a file is, told by its first bytes only (never by its name): HF's
 * vocab.bin is a torch.save file, a vocab.pkl may be either, and a
 * vocab.txt never starts like a pickle. */
static int file_is(const char *path, int (*sniff)(const void *head, uint64_t len))
{
    unsigned char head[16];
    size_t n = read_head(path, head);
    return sniff(head, n);
}

/* --tokenizer and --lower-case on top of what the vocabulary file says. */
static int tokenizer_options(const args *a, txlm_vocab_buf *v, txlm_err *err)
{
    if (a->tokenizer) {
        if (!strcmp(a->tokenizer, "word")) v->v.kind = TXLM_TOK_WORD;
        else if (!strcmp(a->tokenizer, "wt103")) {
            v->v.kind = TXLM_TOK_WORD;
            v->v.flags |= TXLM_VOCAB_WT103_NORM;
        }
        else if (!strcmp(a->tokenizer, "char")) v->v.kind = TXLM_TOK_CHAR_BYTE;
        else if (!strcmp(a->tokenizer, "text8")) v->v.kind = TXLM_TOK_CHAR_TEXT8;
        else
            return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "--tokenizer '%s': expected word, wt103, char or text8",
                             a->tokenizer);
    }
    if (a->lower_case) v->v.flags |= TXLM_VOCAB_LOWER_CASE;
    return 0;
}

static int load_vocab(const char *path, const args *a, txlm_vocab_buf *v, txlm_err *err)
{
    char note[512] = "";
    int rc = file_is(path, txlm_vocab_sniff_pickle) ? txlm_vocab_load_pickle(path, v, err) : txlm_vocab_load_txt_noted(path, v, note, sizeof note, err);
    if (!rc && note[0]) fprintf(stderr, "txlm-pack: %s\n", note);
    return rc ? rc : tokenizer_options(a, v, err);
}

static int parse_dtype(const char *name, uint32_t *out, txlm_err *err)
{
    *out = TXLM_DT_F32;
    if (!name) return 0;
    for (uint32_t i = 0; i < TXLM_DT_COUNT; i++)
        if (!strcmp(txlm_dtype_get(i)->name, name)) {
            *out = i;
            return 0;
        }
    return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "--dtype '%s': unknown type", name);
}

/* Writing onto an input would destroy it before it is fully read. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static void progress(void *user, uint64_t done, uint64_t total)
{
    (void)user;
    fprintf(stderr, "\rtxlm-pack: writing %.1f / %.1f MiB", (double)done / (1 << 20), (double)total / (1 << 20));
    if (done >= total) fputc('\n', stderr);
}

static int parse_seed(const char *s, uint64_t *out, txlm_err *err)
{
    char *end = NULL;
    *out = 1;
    if (!s) return 0;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *s == '-' || *end || errno)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "--seed '%s': expected an integer in [0, 2^64)", s);
    *out = v;
    return 0;
}

/* What txlm-pack tells on stdout about the choices it made. */
static void say_config(const txlm_config_notes *n)
{
    for (const char *p = n->text; *p;) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        printf("txlm-pack: %.*s\n", len, p);
        p += len + (nl != NULL);
    }
}

/* The model and its HF export, all or nothing: the model is packed under
 * a fresh name beside OUT (created with O_EXCL, so nothing planted there
 * is followed), then the export replaces its three files at once, and
 * only then does the model take OUT's name. A failure before that last
 * rename leaves OUT and the export's files as they were. */
static int write_with_export(const txlm_hparams *h, const txlm_vocab *v, const txlm_checkpoint *ck,
                             const txlm_pack_options *opt, const args *a, txlm_err *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.pack-XXXXXX", a->out) >= (int)sizeof tmp)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: path too long", a->out);
    int fd = mkstemp(tmp);
    if (fd < 0) return txlm_fail(err, TXLM_ERR_IO, "%s: cannot create a file beside it: %s", a->out, strerror(errno));
    close(fd);
    int rc = txlm_pack_write(h, v, ck, opt, tmp, err);
    if (!rc) rc = txlm_export_hf(h, v, ck, a->export_st, err);
    if (!rc && rename(tmp, a->out))
        rc = txlm_fail(err, TXLM_ERR_IO, "%s: cannot rename the packed model into place: %s", a->out, strerror(errno));
    if (rc) unlink(tmp);
    return rc;
}

/* --synthetic: a model of the config's shape with seeded random weights,
 * through the same packer (names, ties, shapes) as a real checkpoint. */
static int run_synthetic(const args *a, txlm_err *err)
{
    txlm_hparams h;
    txlm_vocab_buf v;
    txlm_checkpoint *ck = NULL;
    txlm_pack_options opt = {TXLM_DT_F32, isatty(2) ? progress : NULL, NULL, TXLM_CLUSTERS_FORWARD, a->allow_nonfinite};
    uint64_t seed;
    memset(&v, 0, sizeof v);
    int rc = parse_seed(a->seed, &seed, err);
    if (!rc && (same_file(a->out, a->synthetic) || same_file(a->out, a->export_st) ||
                (a->export_st && !strcmp(a->out, a->export_st))))
        rc = txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: the output would overwrite an input", a->out);
    if (!rc) rc = parse_dtype(a->dtype, &opt.dtype, err);
    txlm_config_notes notes = {.hf_defaults = 1};
    if (!rc) rc = txlm_config_load_json_notes(a->synthetic, &h, &notes, err);
    if (!rc) say_config(&notes);
    if (!rc) rc = a->vocab ? load_vocab(a->vocab, a, &v, err) : txlm_synthetic_vocab(h.n_token, &v, err);
    if (!rc && a->vocab && v.v.n != h.n_token)
        rc = txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "--vocab %s has %u symbols but the config's n_token is %u", a->vocab,
                       v.v.n, h.n_token);
    if (!rc && !a->vocab) rc = tokenizer_options(a, &v, err);
    if (!rc) rc = txlm_synthetic_checkpoint(&h, seed, &ck, err);
    if (!rc) rc = a->export_st ? write_with_export(&h, &v.v, ck, &opt, a, err) : txlm_pack_write(&h, &v.v, ck, &opt, a->out, err);
    txlm_checkpoint_free(ck);
    txlm_vocab_buf_free(&v);
    return rc;
}

static void say_source(const txlm_hparams *h, txlm_cluster_order order, const char *why, int overridden)
{
    if (h->n_cutoffs >= 2)
        printf("txlm-pack: tail-cluster order: %s (%s%s)\n", txlm_cluster_order_name(order),
               overridden ? "--cluster-order; told from the checkpoint: " : "", why);
    else
        printf("txlm-pack: tail-cluster order: %s (%s; no effect with %u tail cluster%s)\n", txlm_cluster_order_name(order),
               why, h->n_cutoffs, h->n_cutoffs == 1 ? "" : "s");
    printf("txlm-pack: mem_len %u, tgt_len %u, clamp_len %d, same_length %s%s\n", h->mem_len, h->tgt_len, h->clamp_len,
           h->same_length ? "true" : "false",
           h->same_length_rule == TXLM_SAME_LENGTH_NVIDIA ? " with NVIDIA's rule (mask_len = klen - mem_len - 1)" : "");
}

/* --cluster-order, else what the source says. */
static int pick_order(const args *a, txlm_cluster_order told, uint32_t *out, txlm_err *err)
{
    *out = told;
    if (!a->order) return 0;
    int o = txlm_cluster_order_parse(a->order);
    if (o < 0) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "--cluster-order '%s': expected forward or reverse", a->order);
    *out = (uint32_t)o;
    return 0;
}

/* A training checkpoint that carries its hyper-parameters: NVIDIA's, or a
 * whole saved module (whose vocabulary comes from --vocab). *done = 0: it
 * is neither (a state dict: the config and vocabulary are needed). */
static int run_training_file(const args *a, const char *path, int *done, txlm_err *err)
{
    txlm_torch_obj *o = NULL;
    txlm_ckpt_source src;
    txlm_pack_options opt = {TXLM_DT_F32, isatty(2) ? progress : NULL, NULL, TXLM_CLUSTERS_FORWARD, a->allow_nonfinite};
    memset(&src, 0, sizeof src);
    *done = 0;
    int rc = txlm_torch_load(path, &o, err);
    if (rc) return rc;
    const txlm_pk_value *root = txlm_torch_root(o);
    if (txlm_nvidia_is(root)) rc = txlm_nvidia_read(o, &src, err);
    else if (txlm_module_is(root)) rc = txlm_module_read(o, &src, err);
    else goto out;
    *done = 1;
    if (!rc && txlm_module_is(root) && !a->vocab)
        rc = txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: a whole saved model holds no vocabulary: give --vocab "
                       "(the corpus cache.pt the training code saved, or a vocabulary file)", path);
    if (!rc && (a->config || a->weights))
        rc = txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s holds its own hyper-parameters and weights: no --config or --weights",
                       path);
    if (!rc && a->vocab) {
        txlm_vocab_buf_free(&src.vocab);
        rc = load_vocab(a->vocab, a, &src.vocab, err);
    } else if (!rc) {
        rc = tokenizer_options(a, &src.vocab, err);
    }
    if (!rc) rc = parse_dtype(a->dtype, &opt.dtype, err);
    if (!rc) rc = pick_order(a, src.order, &opt.cluster_order, err);
    if (!rc) {
        printf("txlm-pack: %s: %s\n", path, src.what);
        say_source(&src.h, opt.cluster_order, src.why, a->order != NULL);
        rc = txlm_pack_write(&src.h, &src.vocab.v, src.ck, &opt, a->out, err);
    }
out:
    txlm_ckpt_source_free(&src);
    txlm_torch_free(o);
    return rc;
}


static int is_file(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The authors' TensorFlow checkpoint (tf_source.h): settings, weights and
 * cache.pkl's vocabulary (or --vocab) from the files the authors released. */
static int run_tf(const args *a, txlm_err *err)
{
    txlm_ckpt_source src;
    txlm_pack_options opt = {TXLM_DT_F32, isatty(2) ? progress : NULL, NULL, TXLM_CLUSTERS_FORWARD, a->allow_nonfinite};
    char prefix[4096], data[4096], index[4200];
    if (!txlm_tf_resolve(a->dir, prefix, sizeof prefix, data, sizeof data, NULL) &&
        snprintf(index, sizeof index, "%s.index", prefix) < (int)sizeof index && same_file(a->out, index))
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: the output would overwrite an input", a->out);
    int rc = a->config || a->weights
                 ? txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: a TensorFlow checkpoint takes no --config or --weights", a->dir)
                 : txlm_tf_source_open(a->dir, !a->vocab, &src, err);
    if (rc) return rc;
    if (a->vocab) rc = load_vocab(a->vocab, a, &src.vocab, err);
    else rc = tokenizer_options(a, &src.vocab, err);
    if (!rc) rc = parse_dtype(a->dtype, &opt.dtype, err);
    if (!rc) rc = pick_order(a, src.order, &opt.cluster_order, err);
    if (!rc) rc = txlm_check_finite(src.ck, a->allow_nonfinite, stderr, "txlm-pack: ", err);
    if (!rc) {
        printf("txlm-pack: %s: %s\ntxlm-pack: %s\n", a->dir, src.what, src.notes);
        say_source(&src.h, opt.cluster_order, src.why, a->order != NULL);
        rc = txlm_pack_write(&src.h, &src.vocab.v, src.ck, &opt, a->out, err);
    }
    txlm_ckpt_source_free(&src);
    return rc;
}

/* --list: a TensorFlow bundle entry by entry; a torch file's training
 * checkpoint or whole module by the tensors a pack takes; anything else
 * (safetensors, a state dict, an HF folder's weights) as a checkpoint. */
static int run_list(const char *path, txlm_err *err)
{
    static const char *const weight_names[] = {"model.safetensors", "pytorch_model.bin", NULL};
    char prefix[4096], data[4096];
    if (txlm_tf_sniff(path)) {
        txlm_tf_bundle *b = NULL;
        int rc = txlm_tf_resolve(path, prefix, sizeof prefix, data, sizeof data, err);
        if (!rc) rc = txlm_tf_bundle_open(prefix, &b, err);
        if (!rc) rc = txlm_tf_bundle_print(b, stdout, err);
        txlm_tf_bundle_free(b);
        return rc;
    }
    char *file = is_file(path) ? strdup(path) : pick(NULL, path, weight_names);
    if (!file) return txlm_fail(err, TXLM_ERR_IO, "%s: no checkpoint there (see --help)", path);
    txlm_torch_obj *o = NULL;
    txlm_ckpt_source src;
    txlm_checkpoint *ck = NULL;
    memset(&src, 0, sizeof src);
    int rc = 0;
    if (file_is(file, txlm_torch_sniff) && !(rc = txlm_torch_load(file, &o, err))) {
        const txlm_pk_value *root = txlm_torch_root(o);
        if (txlm_nvidia_is(root)) rc = txlm_nvidia_read(o, &src, err);
        else if (txlm_module_is(root)) rc = txlm_module_read(o, &src, err);
    }
    if (!rc && !src.ck) rc = txlm_checkpoint_open(file, &ck, err);
    if (!rc) txlm_checkpoint_print(src.ck ? src.ck : ck, stdout);
    txlm_checkpoint_free(ck);
    txlm_ckpt_source_free(&src);
    txlm_torch_free(o);
    free(file);
    return rc;
}

static int run(const args *a, txlm_err *err)
{
    if (a->list) return run_list(a->list, err);
    if (a->synthetic) return run_synthetic(a, err);
    if (a->dir && txlm_tf_sniff(a->dir)) return run_tf(a, err);
    static const char *const config_names[] = {"config.json", NULL};
    static const char *const weight_names[] = {"model.safetensors", "pytorch_model.bin", NULL};
    static const char *const vocab_names[] = {"vocab.txt", "vocab.pkl", "vocab.bin", NULL};
    int file = is_file(a->dir), done = 0;
    if (file && same_file(a->out, a->dir))
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: the output would overwrite an input", a->out);
    if (file && file_is(a->dir, txlm_torch_sniff)) {
        int rc = run_training_file(a, a->dir, &done, err);
        if (rc || done) return rc;
    }
    if (file && a->weights) return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: a checkpoint file and --weights", a->dir);
    char *config = pick(a->config, file ? "." : a->dir, file ? (const char *const[]){NULL} : config_names);
    char *weights = file ? strdup(a->dir) : pick(a->weights, a->dir, weight_names);
    char *vocab = pick(a->vocab, file ? "." : a->dir, file ? (const char *const[]){NULL} : vocab_names);
    txlm_hparams h;
    txlm_vocab_buf v;
    txlm_checkpoint *ck = NULL;
    txlm_config_notes notes = {.hf_defaults = 1};
    txlm_pack_options opt = {TXLM_DT_F32, isatty(2) ? progress : NULL, NULL, TXLM_CLUSTERS_FORWARD, a->allow_nonfinite};
    memset(&v, 0, sizeof v);
    int rc = 0;
    if (!config) rc = txlm_fail(err, TXLM_ERR_IO, file ? "%s: a state dict needs --config (and --vocab)" : "%s: no config.json",
                                a->dir);
    else if (!weights) rc = txlm_fail(err, TXLM_ERR_IO, "%s: no model.safetensors or pytorch_model.bin", a->dir);
    else if (!vocab) rc = txlm_fail(err, TXLM_ERR_IO, file ? "%s: a state dict needs --vocab" : "%s: no vocab.txt, vocab.pkl or vocab.bin",
                                    a->dir);
    else if (same_file(a->out, config) || same_file(a->out, weights) || same_file(a->out, vocab))
        rc = txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: the output would overwrite an input", a->out);
    if (!rc) rc = parse_dtype(a->dtype, &opt.dtype, err);
    if (!rc) rc = txlm_config_load_json_notes(config, &h, &notes, err);
    if (!rc) rc = load_vocab(vocab, a, &v, err);
    if (!rc) rc = txlm_checkpoint_open(weights, &ck, err);
    char why[320];
    if (!rc) rc = pick_order(a, txlm_cluster_order_of_names(ck, why, sizeof why), &opt.cluster_order, err);
    if (!rc) rc = txlm_check_finite(ck, a->allow_nonfinite, stderr, "txlm-pack: ", err);
    if (!rc) {
        say_config(&notes);
        say_source(&h, opt.cluster_order, why, a->order != NULL);
        rc = txlm_pack_write(&h, &v.v, ck, &opt, a->out, err);
    }
    txlm_checkpoint_free(ck);
    txlm_vocab_buf_free(&v);
    free(config);
    free(weights);
    free(vocab);
    return rc;
}

int main(int argc, char **argv)
{
    args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc == 2 ? 0 : 1;
    txlm_err err = {0, ""};
    if (run(&a, &err)) return fail("%s", err.msg[0] ? err.msg : "failed");
    return 0;
}
