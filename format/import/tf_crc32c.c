/* CRC-32C, reflected polynomial 0x82F63B78, one table of 256 built once.
 *
 * The table is built on first use under pthread_once, which runs build()
 * exactly once and makes its writes visible to every thread that returns
 * from pthread_once: the TensorFlow reader may run on several threads at
 * once, and threads filling a shared table with plain writes (even of the
 * same values) race. A table written out at build time would need no
 * synchronisation at all, but adds a generator to the format library's
 * build and to the fuzzers' clang build of it, for 256 words computed in
 * microseconds; here the loop that defines the table stays the table.
 * After the first call pthread_once is one atomic load. */
#include "tf_crc32c.h"

#include <pthread.h>

static uint32_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[i] = c;
    }
}

uint32_t txlm_crc32c_extend(uint32_t crc, const void *data, size_t n)
{
    pthread_once(&table_once, build);
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
