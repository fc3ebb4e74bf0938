/* Two contexts, the same work, the same bits: what the host-device and
 * submission-budget tests run on a packed golden case. */
#ifndef TXLM_TEST_PAIR_RUNS_H
#define TXLM_TEST_PAIR_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include <txlm.h>

/* txlm-pack golden/name -o out, its weight matrices stored as dtype
 * (NULL: as they come, f32): 0, or 1 after saying why. */
int pack_golden(const char *pack, const char *golden, const char *name, const char *out, const char *dtype);
/* TXLM_VALIDATION is set and not 0. */
int validation_on(void);
/* The case's segments (token arrays ended by -1), *n of them, malloc'd. */
int32_t **read_segments(const char *golden, const char *name, uint32_t *n);
void free_segments(int32_t **segs, uint32_t n);
uint32_t seg_len(const int32_t *seg);
/* a and b, n floats, identical to the bit (a failed check names the first difference). */
void same_bits(const float *a, const float *b, size_t n, const char *what);

/* One model on each of two contexts. */
typedef struct pair {
    txlm_model *m[2];
    uint32_t V;
} pair;

/* Every segment through one session on each (all rows asked for), then
 * 8 tokens drawn and fed (kept recordings replayed) and the next row. */
void run_segments(pair *p, int32_t **segs, uint32_t n_seg);
/* A batch of three sessions on each: segments of 8, 1 and 5/3/7/2 tokens
 * from the case's stream, four passes, every row asked for. */
void run_batch(pair *p, int32_t **segs, uint32_t n_seg);

#endif
