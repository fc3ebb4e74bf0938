/* CRC-32C, reflected polynomial 0x82F63B78, one table of 256 built once. */
#include "tf_crc32c.h"

#include <stdatomic.h>

static uint32_t table[256];
static atomic_int ready;

static void build(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[i] = c;
    }
    atomic_store(&ready, 1); /* threads racing here write the same values */
}

uint32_t txlm_crc32c_extend(uint32_t crc, const void *data, size_t n)
{
    if (!atomic_load(&ready)) build();
    const unsigned char *p = data;
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

#define MASK_DELTA 0xa282ead8u

uint32_t txlm_crc32c_mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + MASK_DELTA; }

uint32_t txlm_crc32c_unmask(uint32_t masked)
{
    uint32_t rot = masked - MASK_DELTA;
    return (rot >> 17) | (rot << 15);
}
