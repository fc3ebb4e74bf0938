/* The device's buffer-to-buffer copy rate (engine/vk/copy_rate.c). */
#ifndef TXLM_COPY_RATE_H
#define TXLM_COPY_RATE_H

#include "context.h"

/* Bytes copied per second, each read once and written once: the median of
 * 5 timings of 4 copies of up to 256 MiB (twice that is allocated). */
int txlm_copy_rate(txlm_context *ctx, double *bytes_per_s, txlm_err *err);

#endif
