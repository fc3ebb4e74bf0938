/* Which order a checkpoint's tail-cluster rows are in. The head of the
 * adaptive softmax ends with one logit per tail cluster, the rows of
 * crit.cluster_weight / crit.cluster_bias. HF's code and the authors'
 * TensorFlow code read tail cluster i (1-based) at head column
 * cutoffs[0] + i - 1 (forward); the authors' PyTorch code and NVIDIA's
 * read it at column -i (reverse). The engine reads forward, so a reverse
 * checkpoint's rows are stored reversed (docs/tensors.md). */
#ifndef TXLM_CLUSTER_ORDER_H
#define TXLM_CLUSTER_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "checkpoint.h"
#include "errmsg.h"

typedef enum txlm_cluster_order {
    TXLM_CLUSTERS_FORWARD = 0,
    TXLM_CLUSTERS_REVERSE = 1,
} txlm_cluster_order;

/* The order of a state dict told by its names, and why (a sentence into why). */
txlm_cluster_order txlm_cluster_order_of_names(const txlm_checkpoint *ck, char *why, size_t cap);
/* "forward" / "reverse" -> order; -1 for anything else. */
int txlm_cluster_order_parse(const char *s);
const char *txlm_cluster_order_name(txlm_cluster_order o);
/* rows x cols floats with the rows in reverse order, malloc'd (NULL: out of memory). */
float *txlm_cluster_rows_reversed(const float *src, uint64_t rows, uint64_t cols);

#endif
