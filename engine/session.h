/* A session: one text stream's memory and the scratch buffers of its
 * forward pass, all on the device. */
#ifndef TXLM_SESSION_H
#define TXLM_SESSION_H

#include "model.h"
#include "ops.h"

struct txlm_session {
    txlm_model *m;
    txlm_rec rec;
    txlm_ops ops;

    /* settings */
    uint32_t mem_len;        /* M: rows of memory kept per layer */
    uint32_t max_seg;        /* S: longest segment */
    int32_t clamp_len;       /* <= 0: none */
    uint32_t same_length;
    uint32_t max_dist;       /* largest relative distance with its own position row */

    /* state */
    uint32_t mlen;           /* rows of memory held now */
    uint32_t rk_rows;        /* position-key rows computed so far (per layer) */

    /* device buffers */
    txlm_buf ids;            /* [S] int32, host-written */
    txlm_buf *hs;            /* per layer: [M + S, d] = memory rows then this segment's input */
    txlm_buf slide;          /* [M, d] staging for the memory slide */
    txlm_buf z;              /* [S, d] last layer's output */
    txlm_buf xn;             /* [M + S, d] pre-norm LN(cat) */
    txlm_buf qkv;            /* [M + S, 3*H*dh] */
    txlm_buf scores;         /* [H, S, M + S] */
    txlm_buf attn;           /* [S, H*dh] */
    txlm_buf a;              /* [S, d] after attention */
    txlm_buf ffin;           /* [S, d] pre-norm LN(a) */
    txlm_buf ffh;            /* [S, d_inner] */
    txlm_buf emb_tmp;        /* [S, max cluster dim] gathered embedding rows */
    txlm_gpu_tensor pos;     /* [max_dist + 1, d] sinusoids by distance */
    txlm_gpu_tensor *rk;     /* per layer [max_dist + 1, H*dh]: pos · Wr^T */

    /* adaptive softmax, processed in blocks of out_rows rows */
    uint32_t out_rows;
    txlm_buf zp;             /* [out_rows, max cluster dim] */
    txlm_buf head;           /* [out_rows, cutoff0 + n_cutoffs] logits */
    txlm_buf head_lp;        /* same, log-probabilities */
    txlm_buf tail;           /* [out_rows, largest cluster] logits */
    txlm_buf out;            /* [out_rows, n_token] log-probabilities (host-visible) */
};

int txlm_session_open(txlm_model *m, const txlm_session_options *opts, txlm_session **out, txlm_err *err);
void txlm_session_close(txlm_session *s);
/* forward.c: one segment through the model; updates the memory. */
int txlm_forward(txlm_session *s, const int32_t *tokens, uint32_t n, float *logprobs, txlm_err *err);

#endif
