/* Telling the tail-cluster order from what a checkpoint is (cluster_order.h).
 *
 * A state dict's names say which code wrote it, up to a point:
 * - "transformer." in front of the body: HF's TransfoXLLMHeadModel
 *   (trained with HF, or converted by HF from the authors' TensorFlow
 *   checkpoints): forward;
 * - NVIDIA's output-layer names (crit.out_layers_weights.N,
 *   crit.out_layers_biases.N, crit.shared_out_projs.N): reverse;
 * - no prefix with the shared biases at the top (r_w_bias): the authors'
 *   MemTransformerLM, whose biases are always shared: reverse;
 * - no prefix with per-layer biases only (layers.N.dec_attn.r_w_bias):
 *   neither PyTorch training code has those, so an HF model saved
 *   without its prefix: forward.
 * With fewer than two tail clusters both orders are the same. */
#include "cluster_order.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor_table.h"

txlm_cluster_order txlm_cluster_order_of_names(const txlm_checkpoint *ck, char *why, size_t cap)
{
    if (txlm_checkpoint_has_prefix(ck, "crit.out_layers_weights.") ||
        txlm_checkpoint_has_prefix(ck, "crit.out_layers_biases.") || txlm_checkpoint_has_prefix(ck, "crit.shared_out_projs.")) {
        snprintf(why, cap, "NVIDIA's output-layer names (crit.out_layers_biases.N): NVIDIA's PyTorch code");
        return TXLM_CLUSTERS_REVERSE;
    }
    if (txlm_checkpoint_has_prefix(ck, TXLM_HF_PREFIX)) {
        snprintf(why, cap, "names with the transformer. prefix: HF's TransfoXLLMHeadModel");
        return TXLM_CLUSTERS_FORWARD;
    }
    if (txlm_checkpoint_find(ck, "r_w_bias")) {
        snprintf(why, cap, "no transformer. prefix and one shared r_w_bias at the top: the authors' PyTorch "
                           "MemTransformerLM (an HF model saved without its prefix would need --cluster-order forward)");
        return TXLM_CLUSTERS_REVERSE;
    }
    snprintf(why, cap, "no transformer. prefix but per-layer r_w_bias, which the authors' and NVIDIA's PyTorch codes "
                       "never have: an HF model saved without its prefix");
    return TXLM_CLUSTERS_FORWARD;
}

int txlm_cluster_order_parse(const char *s)
{
    if (!strcmp(s, "forward")) return TXLM_CLUSTERS_FORWARD;
    if (!strcmp(s, "reverse")) return TXLM_CLUSTERS_REVERSE;
    return -1;
}

const char *txlm_cluster_order_name(txlm_cluster_order o) { return o == TXLM_CLUSTERS_REVERSE ? "reverse" : "forward"; }

float *txlm_cluster_rows_reversed(const float *src, uint64_t rows, uint64_t cols)
{
    float *out = malloc(rows && cols ? rows * cols * sizeof *out : 1);
    if (!out) return NULL;
    for (uint64_t r = 0; r < rows; r++) memcpy(out + r * cols, src + (rows - 1 - r) * cols, cols * sizeof *out);
    return out;
}
