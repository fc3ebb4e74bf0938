/* Protocol-buffer wire format, read field by field with every length and
 * varint checked against the message's end (the bundle's protos are small:
 * a header, and one entry per tensor). */
#ifndef TXLM_TF_PROTO_H
#define TXLM_TF_PROTO_H

#include <stdint.h>

enum { TXLM_PB_VARINT = 0, TXLM_PB_I64 = 1, TXLM_PB_LEN = 2, TXLM_PB_I32 = 5 };

typedef struct txlm_pb {
    const uint8_t *p;
    uint64_t len, pos;
} txlm_pb;

typedef struct txlm_pb_field {
    uint32_t num, wire;
    uint64_t u;            /* VARINT, I64, I32 */
    const uint8_t *bytes;  /* LEN */
    uint64_t n;            /* LEN: its length */
    uint64_t at;           /* offset of the field's tag in the message */
} txlm_pb_field;

/* A varint of at most 10 bytes inside [*pos, len); 0 on success. */
int txlm_pb_varint(const uint8_t *p, uint64_t len, uint64_t *pos, uint64_t *out);
/* The next field: 1, 0 at the message's end, -1 on a malformed field
 * (r->pos is then where it went wrong; *why says how). */
int txlm_pb_next(txlm_pb *r, txlm_pb_field *f, const char **why);

#endif
