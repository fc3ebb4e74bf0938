/* txlm-pack: a Transformer-XL checkpoint (any source format/import/source.h
 * knows) -> one .txlm file. It parses its arguments, checks that the
 * outputs can be created, opens the source, packs, and then prints what
 * the source said and what was chosen (on stderr: stdout carries only
 * --help, --version and --list's lines). A failure prints one line, the
 * error; --verbose prints the description as it goes, before the work. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <txlm.h>

#include "atomic_write.h"
#include "ckpt_checks.h"
#include "export_hf.h"
#include "pack.h"
#include "same_file.h"
#include "source.h"

static const char usage[] =
    "usage: txlm-pack DIR -o OUT.txlm [options]\n"
    "       txlm-pack CHECKPOINT -o OUT.txlm [options]\n"
    "       txlm-pack MODEL.txlm --dtype T -o OUT.txlm\n"
    "       txlm-pack --synthetic CONFIG.json -o OUT.txlm [--seed N] [options]\n"
    "       txlm-pack --list PATH\n"
    "\n"
    "Converts a Transformer-XL language model to the .txlm format.\n"
    "DIR holds config.json, model.safetensors (else pytorch_model.bin) and\n"
    "vocab.txt (else vocab.pkl, else vocab.bin); options override each file.\n"
    "A CHECKPOINT file is told by its content: NVIDIA's training checkpoint\n"
    "(checkpoint_best.pt: config and vocabulary inside), the authors' whole\n"
    "saved model (model.pt, with --vocab cache.pt), or a state dict (with\n"
    "--config and --vocab). A .txlm with f32 or f16 weights is packed again,\n"
    "as it is or into another --dtype (quantised weights are refused, saying\n"
    "why for the type asked). The authors' TensorFlow models (tf/sota/download.sh)\n"
    "pack from their top folder (model/ + data/), the model folder, or a\n"
    "checkpoint prefix: the dataset's vocabulary (data/cache.pkl, or --vocab)\n"
    "and evaluation settings come with them.\n"
    "\n"
    "  -o, --output F       the .txlm file to write (written atomically; never an input);\n"
    "                       - is standard output (never a terminal; the model is packed\n"
    "                       into a temporary folder under $TMPDIR first)\n"
    "  --list PATH          print every tensor of a checkpoint (any source above) on\n"
    "                       stdout: name, dtype, shape, first values; a damaged file is\n"
    "                       refused as a pack would\n"
    "  --config F           HuggingFace config.json\n"
    "  --weights F          model.safetensors, or a torch.save checkpoint (zip, or the\n"
    "                       legacy format of PyTorch < 1.6); nothing in it is executed\n"
    "  --vocab F            vocab.txt (one symbol per line), or HF TransfoXLTokenizer's\n"
    "                       attribute dict: plain pickle (vocab.pkl) or torch.save (vocab.bin)\n"
    "  --tokenizer KIND     word (default), wt103 (words; raw text gets the WikiText-103\n"
    "                       normalisation first, see docs/tokenizers.md), char (one\n"
    "                       symbol per byte) or text8\n"
    "  --lower-case         lower-case text before looking words up\n"
    "  --dtype T            weight matrices stored as f32 (default; a .txlm input keeps\n"
    "                       each tensor's type), f16, q8_0 or q4_0 (told on stderr);\n"
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
    "                       reported, with its count and first element; without it the\n"
    "                       refusal names how many and the first, --verbose lists each)\n"
    "  -v, --verbose        describe the source and the choices as they are made, before\n"
    "                       the work (a failure then follows the description)\n"
    "  -h, --help           this text\n"
    "\n"
    "Each file's form is told by its content, never by its name. What was read,\n"
    "the defaults taken and warnings go to stderr once the model is written, and\n"
    "so does progress (bytes written / total) when stderr is a terminal. A failure\n"
    "prints one line, the error, and writes nothing; an output that cannot be\n"
    "created (a folder that does not exist) is refused before the source is read.\n";

typedef struct args {
    const char *input, *out, *config, *weights, *vocab, *tokenizer, *dtype, *synthetic, *seed, *export_st, *order, *list;
    int lower_case, allow_nonfinite, verbose;
} args;

static int fail(const char *fmt, const char *a)
{
    fprintf(stderr, "txlm-pack: ");
    fprintf(stderr, fmt, a);
    fputc('\n', stderr);
    return 1;
}

/* The option's slot for a value, or NULL. */
static const char **slot_of(args *a, const char *s)
{
    static const struct {
        const char *flag;
        size_t at;
    } flags[] = {
        {"-o", offsetof(args, out)},          {"--output", offsetof(args, out)},
        {"--config", offsetof(args, config)}, {"--weights", offsetof(args, weights)},
        {"--vocab", offsetof(args, vocab)},   {"--tokenizer", offsetof(args, tokenizer)},
        {"--dtype", offsetof(args, dtype)},   {"--synthetic", offsetof(args, synthetic)},
        {"--seed", offsetof(args, seed)},     {"--export-safetensors", offsetof(args, export_st)},
        {"--cluster-order", offsetof(args, order)}, {"--list", offsetof(args, list)},
    };
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        if (!strcmp(s, flags[i].flag)) return (const char **)((char *)a + flags[i].at);
    return NULL;
}

/* 0 = run, 1 = error, 2 = --help shown. */
static int parse_args(int argc, char **argv, args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char **slot = slot_of(a, s);
        if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            fputs(usage, stdout);
            return 2;
        }
        if (!strcmp(s, "--version")) {
            printf("txlm-pack %d.%d.%d\n", TXLM_VERSION_MAJOR, TXLM_VERSION_MINOR, TXLM_VERSION_PATCH);
            return 2;
        }
        if (!strcmp(s, "--lower-case")) a->lower_case = 1;
        else if (!strcmp(s, "-v") || !strcmp(s, "--verbose")) a->verbose = 1;
        else if (!strcmp(s, "--allow-nonfinite")) a->allow_nonfinite = 1;
        else if (slot && i + 1 >= argc) return fail("%s needs a value (see --help)", s);
        else if (slot) *slot = argv[++i];
        else if (s[0] == '-' && s[1]) return fail("unknown option '%s' (see --help)", s);
        else if (a->input) return fail("more than one input given ('%s')", s);
        else a->input = s;
    }
    if (a->list && (a->input || a->out || a->synthetic || a->config || a->weights || a->vocab))
        return fail("%s", "--list takes one PATH and nothing else");
    if (a->list) return 0;
    if (!a->out) return fail("%s", "no output file given (-o OUT.txlm)");
    if (a->export_st && !strcmp(a->export_st, "-"))
        return fail("%s", "--export-safetensors -: the export is three files (the weights, config.json and vocab.txt "
                          "beside them): give a path");
    if (!strcmp(a->out, "-") && isatty(STDOUT_FILENO))
        return fail("%s", "-o -: binary data is not written to a terminal (redirect standard output to a file or a pipe)");
    if (a->synthetic && (a->input || a->config || a->weights))
        return fail("%s", "--synthetic takes no input folder, --config or --weights");
    if (!a->synthetic && (a->seed || a->export_st)) return fail("%s", "--seed and --export-safetensors need --synthetic");
    if (a->synthetic) return 0;
    if (!a->input && !(a->config && a->weights && a->vocab))
        return fail("%s", "no input folder or checkpoint given (txlm-pack DIR -o OUT.txlm, see --help)");
    return 0;
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

/* "/dev/stdout" when standard output is a regular file (which an input
 * could be), else NULL: a pipe or a terminal is nobody's input. */
static const char *stdout_file(void)
{
    struct stat st;
    return fstat(STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode) ? "/dev/stdout" : NULL;
}

/* The file OUT names: standard output's for "-" (or NULL). */
static const char *out_file(const char *out) { return strcmp(out, "-") ? out : stdout_file(); }

/* Every output (OUT; with --export-safetensors also the config.json and
 * vocab.txt written beside it) against every input the source read and
 * against each other: txlm_paths_same follows symbolic and hard links, so
 * writing onto an input, which would destroy it before it is fully read,
 * is refused however the two are named. */
static int check_outputs(const args *a, const txlm_source *s, txlm_err *err)
{
    char cfg[4096] = "", voc[4096] = "";
    if (a->export_st) { /* the names txlm_export_hf writes */
        const char *slash = strrchr(a->export_st, '/');
        int dl = slash ? (int)(slash - a->export_st) : 1;
        snprintf(cfg, sizeof cfg, "%.*s/config.json", dl, slash ? a->export_st : ".");
        snprintf(voc, sizeof voc, "%.*s/vocab.txt", dl, slash ? a->export_st : ".");
    }
    const char *outs[4] = {out_file(a->out), a->export_st, *cfg ? cfg : NULL, *voc ? voc : NULL};
    for (int k = 0; k < 4; k++) {
        for (uint32_t i = 0; outs[k] && i < s->n_inputs; i++)
            if (txlm_paths_same(outs[k], s->inputs[i]))
                return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: the output would overwrite the input %s",
                                 k == 0 && !strcmp(a->out, "-") ? "-o - (standard output)" : outs[k], s->inputs[i]);
        for (int j = 0; outs[k] && j < k; j++)
            if (outs[j] && txlm_paths_same(outs[k], outs[j]))
                return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: given as two outputs", outs[k]);
    }
    return 0;
}

/* --list prints on standard output: never into what it lists (that file,
 * or a file inside the folder it lists). 0, or 1 after printing why. */
static int list_into_input(const char *path)
{
    const char *o = stdout_file();
    if (!o) return 0;
    char *out = realpath(o, NULL), *in = realpath(path, NULL);
    struct stat st;
    size_t n = in ? strlen(in) : 0;
    int inside = out && in && stat(in, &st) == 0 && S_ISDIR(st.st_mode) && !strncmp(out, in, n) && out[n] == '/';
    free(out), free(in);
    if (inside || txlm_paths_same(o, path))
        return fail("--list %s: standard output is that file or one in it: a listing never goes into what it reads", path);
    return 0;
}

/* A progress line left open on stderr (a write that failed midway): the
 * error then starts a line of its own. */
static int progress_open;

static void progress(void *user, uint64_t done, uint64_t total)
{
    (void)user;
    fprintf(stderr, "\rtxlm-pack: writing %.1f / %.1f MiB", (double)done / (1 << 20), (double)total / (1 << 20));
    if (done >= total) fputc('\n', stderr);
    progress_open = done < total;
}

/* What the source is and the choices made, each line on `to`. */
static void say_source(FILE *to, const args *a, const txlm_source *s, uint32_t order)
{
    const txlm_hparams *h = &s->h;
    fprintf(to, "txlm-pack: %s: %s\n", a->synthetic ? a->synthetic : a->input ? a->input : a->weights, s->what);
    for (const char *p = s->notes; *p;) {
        size_t len = strcspn(p, "\n");
        fprintf(to, "txlm-pack: %.*s\n", (int)len, p);
        p += len + (p[len] == '\n');
    }
    if (h->n_cutoffs >= 2)
        fprintf(to, "txlm-pack: tail-cluster order: %s (%s%s)\n", txlm_cluster_order_name(order),
                a->order ? "--cluster-order; told from the checkpoint: " : "", s->why);
    else
        fprintf(to, "txlm-pack: tail-cluster order: %s (%s; no effect with %u tail cluster%s)\n",
                txlm_cluster_order_name(order), s->why, h->n_cutoffs, h->n_cutoffs == 1 ? "" : "s");
    fprintf(to, "txlm-pack: mem_len %u, tgt_len %u, clamp_len %d, same_length %s%s\n", h->mem_len, h->tgt_len, h->clamp_len,
            h->same_length ? "true" : "false",
            h->same_length_rule == TXLM_SAME_LENGTH_NVIDIA ? " with NVIDIA's rule (mask_len = klen - mem_len - 1)" : "");
    if (s->h.zero_memory)
        fprintf(to, "txlm-pack: a session of this model starts from mem_len rows of zeros, as its code's evaluation "
                    "does (stored in the file; txlm's --zero-memory 0 starts from an empty memory)\n");
}

/* The type the weights are stored in, given or not. */
static void say_dtype(FILE *to, uint32_t dtype, int given)
{
    if (dtype == TXLM_PACK_DTYPE_KEEP)
        fprintf(to, "txlm-pack: dtype: each tensor in the type the source stores it (no --dtype; --dtype f32, f16, "
                    "q8_0 or q4_0 converts)\n");
    else if (dtype == TXLM_DT_F32)
        fprintf(to, "txlm-pack: dtype: f32 (%s)\n",
                given ? "--dtype" : "the default; --dtype f16, q8_0 or q4_0 stores the weight matrices in less room");
    else
        fprintf(to, "txlm-pack: dtype: %s for the weight matrices (--dtype), f32 for vectors, biases and the "
                    "matrices the type cannot hold\n", txlm_dtype_get(dtype)->name);
}

/* The description of a pack, held until it succeeds (or, with --verbose,
 * stderr itself): a failure prints one line, its error. */
typedef struct report {
    FILE *f;      /* where the description goes */
    char *held;   /* open_memstream's buffer, unless verbose */
    size_t len;
} report;

static int report_open(report *r, int verbose, txlm_err *err)
{
    memset(r, 0, sizeof *r);
    r->f = verbose ? stderr : open_memstream(&r->held, &r->len);
    return r->f ? 0 : txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory");
}

/* The description on stderr once the pack succeeded (ok), else dropped. */
static void report_close(report *r, int ok)
{
    if (r->f && r->f != stderr) {
        fclose(r->f);
        if (ok && r->held) fputs(r->held, stderr);
    }
    free(r->held);
    memset(r, 0, sizeof *r);
}

/* Each output the pack creates (OUT, and with --export-safetensors its
 * files), probed where it will be written: the temporary the writer
 * makes, made and dropped at once, so a folder that does not exist, a
 * folder given as OUT or one not writable is refused before the source
 * is read. The export makes its folder when that one level is missing
 * (export_hf.c): then the folder itself is probed, as an entry of its
 * parent. Standard output is open already. */
static int probe_outputs(const args *a, txlm_err *err)
{
    char folder[4096] = "";
    struct stat st;
    if (a->export_st && strrchr(a->export_st, '/')) {
        snprintf(folder, sizeof folder, "%.*s", (int)(strrchr(a->export_st, '/') - a->export_st), a->export_st);
        if (!*folder || stat(folder, &st) == 0 || errno != ENOENT) folder[0] = 0;
    }
    const char *outs[2] = {strcmp(a->out, "-") ? a->out : NULL, *folder ? folder : a->export_st};
    for (int k = 0; k < 2; k++) {
        txlm_atomic t;
        if (!outs[k]) continue;
        int rc = txlm_atomic_open(&t, outs[k], err);
        if (rc) return rc;
        txlm_atomic_abort(&t);
    }
    return 0;
}

/* The model and its HF export, all or nothing: the model is packed under
 * a fresh name beside OUT (created with O_EXCL, so nothing planted there
 * is followed), then the export replaces its three files at once, and
 * only then does the model take OUT's name. A failure before that last
 * rename leaves OUT and the export's files as they were. */
static int write_with_export(const txlm_source *s, const txlm_pack_options *opt, const args *a, const char *out,
                             txlm_err *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.pack-XXXXXX", out) >= (int)sizeof tmp)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: path too long", out);
    int fd = mkstemp(tmp);
    if (fd < 0) return txlm_fail(err, TXLM_ERR_IO, "%s: cannot create a file beside it: %s", out, strerror(errno));
    close(fd);
    int rc = txlm_pack_write(&s->h, &s->vocab.v, s->ck, opt, tmp, err);
    if (!rc) rc = txlm_export_hf(&s->h, &s->vocab.v, s->ck, a->export_st, err);
    if (!rc && rename(tmp, out))
        rc = txlm_fail(err, TXLM_ERR_IO, "%s: cannot rename the packed model into place: %s", out, strerror(errno));
    if (rc) unlink(tmp);
    return rc;
}

/* -o -: the writer places tensors by offset, so the model is packed into a
 * folder of its own under $TMPDIR (or /tmp) first; *dir gets that folder. */
static int stdout_staging(char *dir, size_t cap, char *path, size_t path_cap, txlm_err *err)
{
    const char *tmp = getenv("TMPDIR");
    if (snprintf(dir, cap, "%s/txlm-pack-XXXXXX", tmp && *tmp ? tmp : "/tmp") >= (int)cap || !mkdtemp(dir))
        return txlm_fail(err, TXLM_ERR_IO, "-o -: cannot create a temporary folder in %s: %s", tmp && *tmp ? tmp : "/tmp",
                         strerror(errno));
    snprintf(path, path_cap, "%s/model.txlm", dir);
    return 0;
}

/* The packed model at path copied to standard output; the staging folder removed either way. */
static int copy_to_stdout(const char *dir, const char *path, int rc, txlm_err *err)
{
    FILE *f = rc ? NULL : fopen(path, "rb");
    if (!rc && !f) rc = txlm_fail(err, TXLM_ERR_IO, "-o -: cannot read the packed model back: %s", strerror(errno));
    unlink(path);
    rmdir(dir);
    char buf[1 << 16];
    size_t n;
    while (f && !rc && (n = fread(buf, 1, sizeof buf, f)) > 0)
        if (fwrite(buf, 1, n, stdout) != n) rc = txlm_fail(err, TXLM_ERR_IO, "-o -: writing to standard output failed");
    if (f && !rc && ferror(f)) rc = txlm_fail(err, TXLM_ERR_IO, "-o -: reading the packed model back failed");
    if (f) fclose(f);
    if (!rc && fflush(stdout)) rc = txlm_fail(err, TXLM_ERR_IO, "-o -: writing to standard output failed");
    return rc;
}

static int run(const args *a, txlm_err *err)
{
    txlm_source_options so = {a->config, a->weights, a->vocab, a->tokenizer, a->lower_case, a->synthetic ? "synthetic" : NULL,
                              1, a->dtype};
    txlm_pack_options opt = {TXLM_DT_F32, isatty(2) ? progress : NULL, NULL, TXLM_CLUSTERS_FORWARD, a->allow_nonfinite};
    const char *path = a->synthetic ? a->synthetic : a->input ? a->input : a->weights;
    int rc = parse_dtype(a->dtype, &opt.dtype, err);
    if (!rc) rc = parse_seed(a->seed, &so.seed, err);
    if (!rc && a->order && txlm_cluster_order_parse(a->order) < 0)
        rc = txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "--cluster-order '%s': expected forward or reverse", a->order);
    const char *out = out_file(a->out);
    if (!rc && out && txlm_paths_same(out, path))
        rc = txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: the output would overwrite the input %s",
                       out == a->out ? out : "-o - (standard output)", path);
    if (!rc) rc = probe_outputs(a, err);
    report said;
    if (!rc) rc = report_open(&said, a->verbose, err);
    if (rc) return rc;
    txlm_source s;
    rc = txlm_source_open(path, &so, &s, err);
    if (!rc) rc = check_outputs(a, &s, err);
    if (!rc) {
        opt.cluster_order = a->order ? (uint32_t)txlm_cluster_order_parse(a->order) : s.order;
        if (!a->dtype && !strcmp(s.kind, "txlm")) opt.dtype = TXLM_PACK_DTYPE_KEEP; /* packed again as it is */
        say_source(said.f, a, &s, opt.cluster_order);
        say_dtype(said.f, opt.dtype, a->dtype != NULL);
        rc = txlm_check_finite(s.ck, a->allow_nonfinite, said.f, "txlm-pack: ", err);
    }
    char dir[4096], staged[4160];
    int to_stdout = !strcmp(a->out, "-");
    const char *target = a->out;
    if (!rc && to_stdout && !(rc = stdout_staging(dir, sizeof dir, staged, sizeof staged, err))) target = staged;
    if (!rc) rc = a->export_st ? write_with_export(&s, &opt, a, target, err) : txlm_pack_write(&s.h, &s.vocab.v, s.ck, &opt, target, err);
    if (to_stdout && target == staged) rc = copy_to_stdout(dir, staged, rc, err);
    txlm_source_free(&s);
    report_close(&said, rc == 0);
    return rc;
}

int main(int argc, char **argv)
{
    args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc == 2 ? 0 : 1;
    txlm_err err = {0, ""};
    if (a.list && list_into_input(a.list)) return 1;
    if (a.list ? txlm_source_list(a.list, stdout, &err) : run(&a, &err)) {
        if (progress_open) fputc('\n', stderr);
        return fail("%s", err.msg[0] ? err.msg : "failed");
    }
    return 0;
}
