/* Checkpoint sources: where a model to pack comes from. Each source is a
 * {sniff, open} pair in a file of its own and one line of the table in
 * source.c; txlm_source_open asks the sniffs in table order and opens the
 * input with the first that says yes. An input no sniff takes is refused
 * with what it looks like and what is accepted. txlm-pack only parses its
 * arguments, calls txlm_source_open and prints what the source says. */
#ifndef TXLM_SOURCE_H
#define TXLM_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "checkpoint.h"
#include "cluster_order.h"
#include "errmsg.h"
#include "hparams.h"
#include "pack.h"
#include "pickle.h"
#include "torch.h"

/* What the command line says about the input. A source takes the files it
 * can use and refuses the others with a message naming them. */
typedef struct txlm_source_options {
    const char *config;    /* hyper-parameters from this HF config.json */
    const char *weights;   /* the weights from this file */
    const char *vocab;     /* the vocabulary from this file (vocab.txt, or a pickled one) */
    const char *tokenizer; /* word, wt103, char or text8 over the vocabulary's own (NULL: keep it) */
    int lower_case;        /* lower-case text before looking words up */
    const char *source;    /* open with this source by name, without sniffing (NULL: told from the input) */
    uint64_t seed;         /* the synthetic source's seed */
    const char *dtype;     /* the --dtype asked for (NULL: none), for a source's messages */
} txlm_source_options;

#define TXLM_SOURCE_MAX_INPUTS 32 /* a sharded checkpoint reads several data files */

/* An opened source: what a .txlm needs, and what the packer tells the user. */
typedef struct txlm_source {
    const char *kind;              /* the source's name in the table */
    char what[256];                /* what the input is ("an NVIDIA training checkpoint (...)") */
    /* hyper-parameters, including the source's rules: same_length_rule
     * (which keys a same_length mask keeps), layer_norm_epsilon */
    txlm_hparams h;
    txlm_vocab_buf vocab;
    txlm_checkpoint *ck;           /* the weights: named tensors (names below), f32, f16 or bf16 */
    txlm_cluster_order order;      /* the order of its crit.cluster_weight/bias rows */
    char why[256];                 /* why that order */
    /* 1: sessions of the packed model start from mem_len rows of zeros by
     * default, as this code's own evaluation does (written into the file's
     * HPRM zero_memory, docs/format.md; txlm's --zero-memory 0 overrides) */
    int zero_memory;
    char notes[2048];              /* notices, one a line: defaults taken, unknown keys, what a vocabulary lost */
    char *inputs[TXLM_SOURCE_MAX_INPUTS]; /* every file it read: an output must be none of them */
    uint32_t n_inputs;
} txlm_source;

/* Opens `path` (a file or a folder; for a source chosen by name, what it
 * reads) into *out, which txlm_source_free releases whatever this returns. */
int txlm_source_open(const char *path, const txlm_source_options *opt, txlm_source *out, txlm_err *err);
void txlm_source_free(txlm_source *s);
/* txlm-pack --list: every tensor the source of `path` reads, one line
 * each (NAME<TAB>DTYPE<TAB>[d0, d1, ...]<TAB>first values), without the
 * options a pack needs; a damaged file is refused as a pack would. */
int txlm_source_list(const char *path, FILE *out, txlm_err *err);

/* ---- writing a source ------------------------------------------------

   Tensor names: the canonical names (tensor_table.h), HF's with
   TXLM_HF_PREFIX, the authors' (shared r_w_bias / r_r_bias at the top) or
   NVIDIA's are all accepted by the packer. Tied tensors may be absent or
   present (then they must equal their target). A source sets h (every
   field: txlm_hparams_validate must pass), vocab (n_token symbols; the
   tokenizer kind and flags), ck, order and why, and may set what,
   zero_memory and notes; txlm_source_note appends a line, and
   txlm_source_input records each file it reads. */

/* What the sniffs look at, read once. */
typedef struct txlm_probe {
    const char *path;
    int exists, is_dir, is_file;   /* is_file: a regular file */
    unsigned mode;                 /* st_mode */
    uint64_t size;
    unsigned char head[64];        /* the first bytes of a regular file */
    size_t head_len;
    txlm_torch_obj *torch;         /* a torch.save file's object, read once (txlm_probe_torch_root) */
    int torch_read;                /* it was tried */
} txlm_probe;

typedef struct txlm_source_kind {
    const char *name;
    const char *accepts;  /* what it reads, for messages: "a folder holding config.json, ..." */
    /* 1 when this source reads p->path (NULL: only when chosen by name) */
    int (*sniff)(txlm_probe *p);
    int (*open)(txlm_probe *p, const txlm_source_options *opt, txlm_source *out, txlm_err *err);
    /* --list: prints what it reads (txlm_checkpoint_print's lines) without
     * needing --config or --vocab. NULL: the tensors of an open with no options. */
    int (*list)(txlm_probe *p, FILE *out, txlm_err *err);
} txlm_source_kind;

/* The saved object of a torch.save file, read the first time a sniff asks
 * (NULL when the file is not one, or does not read). */
const txlm_pk_value *txlm_probe_torch_root(txlm_probe *p);
/* The object read, taken over by an open (NULL if none). */
txlm_torch_obj *txlm_probe_take_torch(txlm_probe *p);
/* 1 when the first bytes are safetensors' (a length, then '{'). */
int txlm_probe_is_safetensors(const txlm_probe *p);

void txlm_source_note(txlm_source *s, const char *fmt, ...) TXLM_PRINTF(2, 3);
int txlm_source_input(txlm_source *s, const char *path, txlm_err *err);
/* HF's code starts a text from mem_len rows of zeros (init_mems); a model
 * of HF's names keeps txlm's empty start, and the notes say how to get HF's. */
void txlm_source_note_hf_start(txlm_source *s);
/* Hyper-parameters from a config.json, HF's defaults for missing lengths
 * told in the notes. */
int txlm_source_config(txlm_source *s, const char *path, txlm_err *err);
/* The vocabulary of a vocab.txt or a pickled one (told by content), into s->vocab. */
int txlm_source_vocab(txlm_source *s, const char *path, txlm_err *err);
/* "X: holds its own Y: no --opt" when the options name a file the source does not read. */
int txlm_source_refuse(const txlm_source_options *opt, const char *path, int config, int weights, int vocab,
                       txlm_err *err);

#endif
