/* Protocol-buffer wire reading: tags, varints, fixed 32/64-bit values and
 * length-delimited fields; groups (wire types 3, 4) are refused, as no
 * message of a bundle uses them. */
#include "tf_proto.h"

int txlm_pb_varint(const uint8_t *p, uint64_t len, uint64_t *pos, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (*pos >= len) return -1;
        uint8_t b = p[(*pos)++];
        if (i == 9 && b > 1) return -1; /* past 64 bits */
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

int txlm_pb_next(txlm_pb *r, txlm_pb_field *f, const char **why)
{
    if (r->pos >= r->len) return 0;
    uint64_t tag, at = r->pos;
    f->at = at;
    if (txlm_pb_varint(r->p, r->len, &r->pos, &tag)) return *why = "a truncated or overlong field tag", -1;
    if (tag >> 3 == 0 || tag >> 3 > 0x1fffffff) return r->pos = at, *why = "a field number of 0 or past 2^29", -1;
    f->num = (uint32_t)(tag >> 3);
    f->wire = (uint32_t)(tag & 7);
    f->bytes = 0;
    f->n = 0;
    f->u = 0;
    switch (f->wire) {
    case TXLM_PB_VARINT:
        if (txlm_pb_varint(r->p, r->len, &r->pos, &f->u)) return *why = "a truncated or overlong varint", -1;
        return 1;
    case TXLM_PB_I64:
    case TXLM_PB_I32: {
        int n = f->wire == TXLM_PB_I64 ? 8 : 4;
        if (r->len - r->pos < (uint64_t)n) return *why = "a truncated fixed-size field", -1;
        f->u = le(r->p + r->pos, n);
        r->pos += (uint64_t)n;
        return 1;
    }
    case TXLM_PB_LEN:
        if (txlm_pb_varint(r->p, r->len, &r->pos, &f->n)) return *why = "a truncated or overlong length", -1;
        if (f->n > r->len - r->pos) return *why = "a length past the message's end", -1;
        f->bytes = r->p + r->pos;
        r->pos += f->n;
        return 1;
    default:
        r->pos = at;
        return *why = "a group or unknown wire type", -1;
    }
}
