/* The zip container as torch.save (PyTorch >= 1.6) writes it: stored
 * (uncompressed) entries, zip64 records when the file is large. Entries are
 * located through the central directory and handed out as ranges of the
 * mapped file; nothing is copied. */
#ifndef TXLM_ZIP_H
#define TXLM_ZIP_H

#include <stddef.h>
#include <stdint.h>

#include "errmsg.h"

typedef struct txlm_zip_entry {
    const char *name; /* points into the central directory, not NUL-terminated */
    uint32_t name_len;
    uint32_t crc;
    uint64_t offset;  /* of the entry's data in the file */
    uint64_t size;
    int crc_checked;
} txlm_zip_entry;

typedef struct txlm_zip {
    txlm_zip_entry *entries; /* sorted by name */
    uint32_t n;
} txlm_zip;

/* Reads the directory of the zip image data[0 .. len) and checks every
 * entry: stored, unencrypted, local header consistent, data inside the file. */
int txlm_zip_open(const char *where, const uint8_t *data, uint64_t len, txlm_zip *z, txlm_err *err);
void txlm_zip_free(txlm_zip *z);
/* NULL when absent. */
txlm_zip_entry *txlm_zip_find(const txlm_zip *z, const char *name, size_t name_len);
/* Verifies an entry's CRC-32 once (later calls return at once). */
int txlm_zip_check_crc(const char *where, const uint8_t *data, txlm_zip_entry *e, txlm_err *err);
uint32_t txlm_crc32(uint32_t crc, const void *data, size_t len);

#endif
