/* CRC-32C (Castagnoli), as LevelDB tables and TensorFlow bundles store it:
 * "masked" (rotated and offset) so that a CRC of bytes holding CRCs does not
 * degenerate. */
#ifndef TXLM_TF_CRC32C_H
#define TXLM_TF_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Extends crc (0 to start) over n bytes. */
uint32_t txlm_crc32c_extend(uint32_t crc, const void *data, size_t n);
/* The stored form of a CRC and back. */
uint32_t txlm_crc32c_mask(uint32_t crc);
uint32_t txlm_crc32c_unmask(uint32_t masked);

#endif
