/* On-disk layout of .txlm v1 files, shared by the reader and the writer.
 * docs/format.md is the normative description; the offsets below must
 * match it byte for byte. Everything is little-endian and accessed through
 * the rd/wr helpers, never by casting file bytes to structs, so the code is
 * independent of host byte order and of the alignment of the input buffer. */
#ifndef TXLM_LAYOUT_H
#define TXLM_LAYOUT_H

#include <stdint.h>
#include <string.h>

#include "errmsg.h"
#include "vocab.h"

#define TXLM_MAGIC "TXLMODEL"
#define TXLM_MAGIC_LEN 8
#define TXLM_MAJOR 1
#define TXLM_MINOR 0
#define TXLM_BOM 0x01020304u

/* ---- header ---- */
#define TXLM_HDR_SIZE 128u          /* v1.0 header; later minors may grow it */
#define TXLM_HDR_MAX 4096u
#define TXLM_HDR_MAGIC 0
#define TXLM_HDR_MAJOR 8            /* u16 */
#define TXLM_HDR_MINOR 10           /* u16 */
#define TXLM_HDR_BOM 12             /* u32 */
#define TXLM_HDR_HEADER_SIZE 16     /* u32 */
#define TXLM_HDR_ALIGNMENT 20       /* u32 */
#define TXLM_HDR_FILE_SIZE 24       /* u64 */
#define TXLM_HDR_TABLE_OFFSET 32    /* u64 */
#define TXLM_HDR_SECTION_COUNT 40   /* u32 */
#define TXLM_HDR_ENTRY_SIZE 44      /* u32 */
#define TXLM_HDR_CHECKSUM 48        /* u64 */
/* 56..128: reserved, written as zero, ignored by v1 readers */

#define TXLM_WRITE_ALIGNMENT 256u
#define TXLM_MIN_ALIGNMENT 64u
#define TXLM_MAX_ALIGNMENT (1u << 24)

/* ---- section table ---- */
#define TXLM_SEC_ENTRY_SIZE 32u
#define TXLM_SEC_ENTRY_MAX 256u
#define TXLM_SEC_MAX 64u
#define TXLM_SEC_TAG 0              /* 4 bytes */
#define TXLM_SEC_FLAGS 4            /* u32 */
#define TXLM_SEC_OFFSET 8           /* u64 */
#define TXLM_SEC_SIZE 16            /* u64 */
#define TXLM_SEC_CHECKSUM 24        /* u64 */

#define TXLM_SECF_REQUIRED (1u << 0)
#define TXLM_SECF_NO_CHECKSUM (1u << 1)

#define TXLM_TAG_HPRM "HPRM"
#define TXLM_TAG_VOCB "VOCB"
#define TXLM_TAG_DTYP "DTYP"
#define TXLM_TAG_TDIR "TDIR"
#define TXLM_TAG_TDAT "TDAT"

/* ---- HPRM ---- */
#define TXLM_HPRM_SIZE 144u
#define TXLM_HPRM_MAX 65536u
#define TXLM_HP_SIZE 0
#define TXLM_HP_N_TOKEN 4
#define TXLM_HP_D_MODEL 8
#define TXLM_HP_D_EMBED 12
#define TXLM_HP_N_HEAD 16
#define TXLM_HP_D_HEAD 20
#define TXLM_HP_D_INNER 24
#define TXLM_HP_N_LAYER 28
#define TXLM_HP_DIV_VAL 32
#define TXLM_HP_N_CUTOFFS 36
#define TXLM_HP_CUTOFFS 40          /* u32[15] */
#define TXLM_HP_TIE_PROJS 100       /* u8[16] */
#define TXLM_HP_TIE_WEIGHT 116      /* u8 */
#define TXLM_HP_PRE_LNORM 117       /* u8 */
#define TXLM_HP_UNTIE_R 118         /* u8 */
#define TXLM_HP_SAME_LENGTH 119     /* u8 */
#define TXLM_HP_CLAMP_LEN 120       /* i32 */
#define TXLM_HP_MEM_LEN 124
#define TXLM_HP_TGT_LEN 128
#define TXLM_HP_EXT_LEN 132
#define TXLM_HP_ATTN_TYPE 136
#define TXLM_HP_LN_EPS 140          /* f32 */
/* Version 1.1 appends (written only when not 0, so other files stay 1.0 byte for byte): */
#define TXLM_HPRM_SIZE_1_1 148u
#define TXLM_HP_SAME_LENGTH_RULE 144 /* u32 */
/* Version 1.2 appends (written only when not 0): */
#define TXLM_HPRM_SIZE_1_2 152u
#define TXLM_HP_ZERO_MEMORY 148      /* u32 */

/* ---- VOCB ---- */
#define TXLM_VOCB_HEAD 24u          /* n, kind, flags, eos_id, unk_id, blob_size */
#define TXLM_VOCB_MAX_N (1u << 24)
#define TXLM_VOCB_MAX_BLOB (1u << 30)
/* Longest symbol: the tokenizers look words up in a 1024-byte key buffer,
 * so a longer symbol could never be produced from text. */
#define TXLM_VOCB_MAX_SYM 1023u
#define TXLM_VOCAB_KNOWN_FLAGS (TXLM_VOCAB_LOWER_CASE | TXLM_VOCAB_WT103_NORM | TXLM_VOCAB_LINE_START_EOS)

/* ---- DTYP ---- */
#define TXLM_DTYP_HEAD 8u           /* count, entry_size */
#define TXLM_DTYP_ENTRY_SIZE 32u
#define TXLM_DTYP_MAX 256u
#define TXLM_DTYP_NAME_LEN 16u
#define TXLM_DT_ID 0
#define TXLM_DT_BLOCK_ELEMS 4
#define TXLM_DT_BLOCK_BYTES 8
#define TXLM_DT_RESERVED 12
#define TXLM_DT_NAME 16

/* ---- TDIR ---- */
#define TXLM_TDIR_HEAD 8u           /* count, entry_size */
#define TXLM_TDIR_ENTRY_SIZE 192u
#define TXLM_TDIR_ENTRY_MAX 4096u
#define TXLM_TDIR_MAX 65536u
#define TXLM_TE_NAME 0              /* char[TXLM_MAX_NAME] */
#define TXLM_TE_DTYPE 96
#define TXLM_TE_RANK 100
#define TXLM_TE_DIMS 104            /* u64[8] */
#define TXLM_TE_OFFSET 168
#define TXLM_TE_NBYTES 176
#define TXLM_TE_HASH 184

/* Caps on tensor shapes, also enforced by txlm_tensor_nbytes. */
#define TXLM_MAX_DIM (1ull << 40)
#define TXLM_MAX_ELEMS (1ull << 40)

static inline uint16_t txlm_rd16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t txlm_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t txlm_rd64(const uint8_t *p)
{
    return (uint64_t)txlm_rd32(p) | ((uint64_t)txlm_rd32(p + 4) << 32);
}
static inline void txlm_wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void txlm_wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void txlm_wr64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline float txlm_rdf32(const uint8_t *p)
{
    uint32_t u = txlm_rd32(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline void txlm_wrf32(uint8_t *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    txlm_wr32(p, u);
}

/* Strict UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
 * Returns the length of the valid prefix: == len when all is valid. */
uint64_t txlm_utf8_valid_prefix(const uint8_t *s, uint64_t len);

/* Checks a vocabulary as the reader requires it (counts, offsets, ids,
 * UTF-8 unless kind is TXLM_TOK_CHAR_BYTE, no NUL byte, no symbol twice:
 * vocab_check.h). `where` names it in messages;
 * failures are reported with `code`. */
int txlm_vocab_check(const txlm_vocab *v, const char *where, int code, txlm_err *err);

#endif
