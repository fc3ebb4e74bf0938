// The push constants of the attention kernels (engine/ops.c, struct
// attn_push). KV is a ring of kv_rows rows per layer: memory row 0 sits
// at row kv_row0 (plus STEP[0] with kv_dyn, as the forward pass gives
// it) and key j at kv_row(j), so the memory slides by moving that row
// and no row is ever copied.
layout(push_constant) uniform Push {
    uint qlen, mlen, klen;
    uint H, dh;
    uint rk_off;        // element offset of the position keys
    uint clamp_max;
    uint same_length;
    uint mem_len;       // of same_length's bound: the memory's, + 1 under NVIDIA's rule (hparams.h)
    float scale;
    uint kv_row0;
    uint kv_rows;
    uint merge;         // attn_split_sg: its last run merges (bindings 6 and 7)
    uint kv_dyn;        // memory row 0 sits at kv_row0 + STEP[0] (step.glsl)
    uint splits;        // attn_tile: runs the keys are split into (0 or 1: none)
} p;

#include "step.glsl"

// Memory row 0's ring row, read once by kv_begin() at the top of main:
// a storage read per key would cost a load loop per key on CPU drivers.
uint kv_first;
void kv_begin() { kv_first = p.kv_row0 + (p.kv_dyn != 0u ? STEP[0] : 0u); }

// kv_first < kv_rows and j < klen <= kv_rows: one subtraction wraps it.
uint kv_row(uint j)
{
    uint r = kv_first + j;
    return r >= p.kv_rows ? r - p.kv_rows : r;
}
