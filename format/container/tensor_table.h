/* The tensors of a Transformer-XL language model, as one table
 * (docs/tensors.md): each kind's name template, its shape in
 * hyper-parameter terms, how many a model has, what it is tied to, and
 * which types it may be stored in. The packer (format/import), the loader
 * (engine/model.c), the device layout's widening (engine/model_pad.c) and
 * the test reference read it; none of them spells a tensor name or shape
 * of its own. */
#ifndef TXLM_TENSOR_TABLE_H
#define TXLM_TENSOR_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hparams.h"
#include "txlm_file.h"

/* In file order: txlm_tt_each walks consecutive kinds with the same count
 * rule index by index (a layer's 13 tensors, then the next layer's; an
 * output cluster's weight, then its bias), so reordering this enum
 * reorders every packed file. */
typedef enum txlm_tt_id {
    TXLM_TT_EMB_TABLE,  /* word_emb.emb_layers.{c}.weight */
    TXLM_TT_EMB_PROJ,   /* word_emb.emb_projs.{c} */
    TXLM_TT_QKV,        /* layers.{n}.dec_attn.qkv_net.weight */
    TXLM_TT_R_NET,
    TXLM_TT_O_NET,
    TXLM_TT_R_W_BIAS,
    TXLM_TT_R_R_BIAS,
    TXLM_TT_ATTN_LN_W,
    TXLM_TT_ATTN_LN_B,
    TXLM_TT_FF_W1,
    TXLM_TT_FF_B1,
    TXLM_TT_FF_W2,
    TXLM_TT_FF_B2,
    TXLM_TT_FF_LN_W,
    TXLM_TT_FF_LN_B,
    TXLM_TT_OUT_WEIGHT, /* crit.out_layers.{c}.weight */
    TXLM_TT_OUT_BIAS,
    TXLM_TT_OUT_PROJ,   /* crit.out_projs.{c} */
    TXLM_TT_CLUSTER_W,
    TXLM_TT_CLUSTER_B,
    TXLM_TT_INV_FREQ,   /* optional: only a checkpoint's 16-bit-rounded frequencies (inv_freq.h) */
    TXLM_TT_COUNT
} txlm_tt_id;

/* What a dimension is in hyper-parameter terms (the table's shapes):
 * what decides its size, and so which dimensions a change of width
 * moves (engine/model_pad.c widens by these). */
typedef enum txlm_tt_dim {
    TXLM_TD_NONE,    /* a vector's missing second dimension */
    TXLM_TD_MODEL,   /* d_model */
    TXLM_TD_INNER,   /* d_inner */
    TXLM_TD_EMBED,   /* d_embed */
    TXLM_TD_HEADS,   /* n_head */
    TXLM_TD_HEAD,    /* d_head */
    TXLM_TD_HD,      /* n_head * d_head: n_head runs of d_head */
    TXLM_TD_3HD,     /* 3 * n_head * d_head: 3 * n_head runs of d_head */
    TXLM_TD_ROWS,    /* table i's rows: n_token with div_val 1, else cluster i's size */
    TXLM_TD_WIDTH,   /* cluster i's width d_embed / div_val^i */
    TXLM_TD_CUTOFFS, /* n_cutoffs */
    TXLM_TD_HALF,    /* d_model / 2 */
} txlm_tt_dim;

/* One tensor of a model with given hyper-parameters. */
typedef struct txlm_tt_slot {
    txlm_tt_id id;
    uint32_t index;                 /* the layer, or the cluster / table */
    char name[TXLM_MAX_NAME];       /* canonical: as in a .txlm, HF's name without TXLM_HF_PREFIX */
    uint32_t rank;                  /* 1 or 2 */
    uint64_t dims[2];               /* PyTorch order, [out, in] */
    txlm_tt_dim terms[2];           /* what each of dims is (a vector's terms[1]: TXLM_TD_NONE) */
    uint8_t f32_only;               /* the kernels read it as f32: never stored in another type */
    uint8_t optional;               /* a file may lack it (txlm_tt_each skips it) */
    uint8_t tied;                   /* not stored: it is the tensor `tie` (tie_weight, tie_projs) */
    txlm_tt_id tie_id;
    uint32_t tie_index;
    char tie[TXLM_MAX_NAME];
    /* untie_r false: every layer's copy is one tensor, which checkpoints
     * hold once under this name ("" otherwise); a .txlm stores a copy per layer */
    char shared[TXLM_MAX_NAME];
} txlm_tt_slot;

/* How many tensors of kind id h has (tied ones included). */
uint32_t txlm_tt_count(const txlm_hparams *h, txlm_tt_id id);
/* Fills *s for tensor i of kind id: 0, or -1 when h has no such tensor. */
int txlm_tt_slot_of(const txlm_hparams *h, txlm_tt_id id, uint32_t i, txlm_tt_slot *s);
/* Fills *s for the tensor of h called name (its canonical name, as
 * txlm_tt_slot_of spells it): 0, or -1 when h has no such tensor (*s
 * then undefined). */
int txlm_tt_find(const txlm_hparams *h, const char *name, txlm_tt_slot *s);
/* Every tensor a file for h holds or ties, in file order (optional ones
 * skipped); stops at, and returns, fn's first non-zero return. */
int txlm_tt_each(const txlm_hparams *h, int (*fn)(void *user, const txlm_tt_slot *s), void *user);
/* The type a tensor is stored in when `want` is asked for: f32 for the
 * f32-only ones, and for rows that are not whole blocks of a block type. */
uint32_t txlm_tt_stored_dtype(const txlm_tt_slot *s, uint32_t want);

/* HF's TransfoXLLMHeadModel puts everything but crit.* under this prefix;
 * the canonical names are HF's without it. */
#define TXLM_HF_PREFIX "transformer."

/* The name without TXLM_HF_PREFIX ("transformer.crit.*" stays as it is:
 * HF never writes it, so it is reported as unknown). */
static inline const char *txlm_hf_strip(const char *name)
{
    size_t n = sizeof TXLM_HF_PREFIX - 1;
    return !strncmp(name, TXLM_HF_PREFIX, n) && strncmp(name + n, "crit.", 5) ? name + n : name;
}
/* The prefix HF's name for canonical name `name` takes ("" for crit.*). */
static inline const char *txlm_hf_prefix_of(const char *name)
{
    return strncmp(name, "crit.", 5) ? TXLM_HF_PREFIX : "";
}

#endif
