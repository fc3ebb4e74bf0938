/* A HuggingFace-style checkpoint folder: config.json, the weights
 * (model.safetensors, else pytorch_model.bin) and the vocabulary
 * (vocab.txt, else vocab.pkl, else vocab.bin), each replaceable by
 * --config, --weights and --vocab. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <txlm_status.h>

#include "ckpt_list.h"
#include "source.h"

static const char *const config_names[] = {"config.json", NULL};
static const char *const weight_names[] = {"model.safetensors", "pytorch_model.bin", NULL};
static const char *const vocab_names[] = {"vocab.txt", "vocab.pkl", "vocab.bin", NULL};

static int sniff(txlm_probe *p) { return p->is_dir; }

/* The explicit path, else the first of names present in dir (NULL: none). */
static char *pick(const char *explicit_path, const char *dir, const char *const *names)
{
    if (explicit_path) return strdup(explicit_path);
    for (int i = 0; names[i]; i++) {
        size_t n = strlen(dir) + strlen(names[i]) + 2;
        char *p = malloc(n);
        struct stat st;
        if (!p) return NULL;
        snprintf(p, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]);
        if (stat(p, &st) == 0) return p;
        free(p);
    }
    return NULL;
}

/* A file of the folder by its own name, any other by its path. */
static const char *in_dir(const char *dir, const char *file)
{
    size_t n = strlen(dir);
    return !strncmp(file, dir, n) && (file[n] == '/' || dir[n - 1] == '/') ? file + n + (file[n] == '/') : file;
}

/* "config.json; without vocab.txt, vocab.pkl or vocab.bin": what is missing. */
static void missing(char *out, size_t cap, const char *const *const *lists, char *const *found)
{
    size_t n = 0;
    for (int i = 0; i < 3; i++) {
        if (found[i]) continue;
        n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s", n ? "; without " : "");
        for (int k = 0; lists[i][k]; k++)
            n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s", k ? (lists[i][k + 1] ? ", " : " or ") : "",
                                  lists[i][k]);
    }
}

static int open_folder(txlm_probe *p, const txlm_source_options *opt, txlm_source *out, txlm_err *err)
{
    const char *const *const lists[3] = {config_names, weight_names, vocab_names};
    char *f[3] = {pick(opt->config, p->path, config_names), pick(opt->weights, p->path, weight_names),
                  pick(opt->vocab, p->path, vocab_names)};
    int rc = 0;
    if (!f[0] || !f[1] || !f[2]) {
        char what[256];
        missing(what, sizeof what, lists, f);
        rc = txlm_fail(err, TXLM_ERR_IO, "%s: a folder without %s (a checkpoint folder holds config.json, "
                       "model.safetensors or pytorch_model.bin, and vocab.txt, vocab.pkl or vocab.bin; --config, "
                       "--weights and --vocab name files elsewhere)", p->path, what);
    }
    if (!rc) rc = txlm_source_config(out, f[0], err);
    if (!rc) rc = txlm_source_vocab(out, f[2], err);
    if (!rc) rc = txlm_source_input(out, f[1], err);
    if (!rc) rc = txlm_checkpoint_open(f[1], &out->ck, err);
    if (!rc) {
        out->order = txlm_cluster_order_of_names(out->ck, out->why, sizeof out->why);
        txlm_source_note_hf_start(out);
        snprintf(out->what, sizeof out->what, "a HuggingFace checkpoint folder: %s, %s (%s), %s", in_dir(p->path, f[0]),
                 in_dir(p->path, f[1]), out->ck->format, in_dir(p->path, f[2]));
    }
    for (int i = 0; i < 3; i++) free(f[i]);
    return rc;
}

/* The weights file's tensors, as named there. */
static int list_folder(txlm_probe *p, FILE *out, txlm_err *err)
{
    char *f = pick(NULL, p->path, weight_names);
    txlm_checkpoint *ck = NULL;
    int rc = f ? txlm_checkpoint_open(f, &ck, err)
               : txlm_fail(err, TXLM_ERR_IO, "%s: a folder without model.safetensors or pytorch_model.bin", p->path);
    if (!rc) txlm_checkpoint_print(ck, out);
    txlm_checkpoint_free(ck);
    free(f);
    return rc;
}

const txlm_source_kind txlm_source_hf_folder = {
    "hf-folder", "a folder holding config.json, model.safetensors or pytorch_model.bin, and vocab.txt, vocab.pkl or vocab.bin",
    sniff, open_folder, list_folder,
};
