/* Turning a checkpoint (HF or the authors' naming) + config + vocabulary
 * into a .txlm file with canonical tensor names (docs/format.md, "Tensors"). */
#ifndef TXLM_PACK_H
#define TXLM_PACK_H

#include "checkpoint.h"
#include "cluster_order.h"
#include "errmsg.h"
#include "hparams.h"
#include "vocab.h"

/* An owned vocabulary (what the vocab readers return). */
typedef struct txlm_vocab_buf {
    txlm_vocab v;        /* views into the two arrays below */
    uint32_t *offsets;
    char *blob;
} txlm_vocab_buf;

void txlm_vocab_buf_free(txlm_vocab_buf *b);

/* HF config.json -> hyper-parameters (validated). */
int txlm_config_load_json(const char *path, txlm_hparams *out, txlm_err *err);
/* What reading a config had to say, for txlm-pack to print. */
typedef struct txlm_config_notes {
    int hf_defaults; /* in: missing mem_len, tgt_len, clamp_len, same_length take HF's defaults (1600, 128, 1000, true) */
    char text[2048]; /* out: one line each: the defaults taken, a warning naming every key txlm does not know */
} txlm_config_notes;
int txlm_config_load_json_notes(const char *path, txlm_hparams *out, txlm_config_notes *notes, txlm_err *err);
int txlm_config_parse_json(const char *text, uint64_t len, txlm_hparams *out, txlm_err *err);

/* vocab.txt: one symbol per line, line number = id. */
int txlm_vocab_load_txt(const char *path, txlm_vocab_buf *out, txlm_err *err);
/* The same from memory: takes ownership of the malloc'd text (freed on
 * failure, kept as the blob on success); `where` names it in messages. */
int txlm_vocab_parse_txt(const char *where, char *text, uint32_t len, txlm_vocab_buf *out, txlm_err *err);

#define TXLM_PACK_DTYPE_KEEP 0xffffffffu

typedef struct txlm_pack_options {
    uint32_t dtype;          /* output dtype of the large matrices; vectors and small tensors stay f32;
                                TXLM_PACK_DTYPE_KEEP: each in the type the source stores it (f16 where
                                it is f16 and the rule above allows it, else f32) */
    void (*progress)(void *user, uint64_t done, uint64_t total);
    void *user;
    uint32_t cluster_order;  /* txlm_cluster_order of the checkpoint's crit.cluster_* rows (stored forward); 0 forward */
    int allow_nonfinite;     /* keep values that the conversion to dtype makes infinite (else an error) */
} txlm_pack_options;

/* Maps checkpoint names to canonical ones, resolves ties, checks every
 * shape against hparams, and writes out_path atomically. */
int txlm_pack_write(const txlm_hparams *h, const txlm_vocab *v, const txlm_checkpoint *ck,
                    const txlm_pack_options *opt, const char *out_path, txlm_err *err);

#endif
