// The push constants of the attention kernels (engine/ops.c, struct
// attn_push). KV is a ring of kv_rows rows per layer: memory row 0 sits
// at row kv_row0 (plus STEP[0] with kv_dyn, as the forward pass gives
// it) and key j at kv_row(j), so the memory slides by moving that row
// and no row is ever copied.
//
// Several streams in one dispatch (a batch, engine/attn_streams.c): with
// `table` set, each stream's own shape is an entry of 16 words in the
// step buffer, written by the host before each submission (so a kept
// recording serves wherever every ring has turned to). The grid's z holds
// zdim workgroups per stream; stream s of the dispatch reads its keys and
// values from slot s of binding 1 (attn_io.glsl) and its queries and
// outputs from row q0 of the pass's rows on.
struct AttnPush {
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
    uint table;         // 0: one stream, shaped as above; else STEP word of the dispatch's first stream entry
    uint zdim;          // with table: the grid's z per stream
    uint run;           // attn_merge: keys per run (0: p.splits runs)
};
layout(push_constant) uniform Push { AttnPush s; } pc;

#include "step.glsl"

// The shape of this workgroup's stream: the push constants', or its entry's.
AttnPush p;
// Memory row 0's ring row, read once by attn_begin() at the top of main:
// a storage read per key would cost a load loop per key on CPU drivers.
uint kv_first;
uint slot = 0u;    // the stream's slot in this dispatch
uint q_base = 0u;  // vec4 of its first query (and output) row
uint part0 = 0u;   // vec4 of its partial results in the scratch
uint sync0 = 0u;   // its first count of finished runs (attn_split_sg's DONE, after word 0)
uint wg_z;         // gl_WorkGroupID.z within the stream

void attn_begin()
{
    p = pc.s;
    wg_z = gl_WorkGroupID.z;
    if (p.table == 0u) {
        kv_first = p.kv_row0 + (p.kv_dyn != 0u ? STEP[0] : 0u);
        return;
    }
    slot = gl_WorkGroupID.z / p.zdim;
    wg_z -= slot * p.zdim;
    uint b = p.table + slot * 16u;  // TXLM_ATTN_ENTRY_WORDS
    p.qlen = STEP[b + 1u];
    p.mlen = STEP[b + 2u];
    p.klen = p.mlen + p.qlen;
    kv_first = STEP[b + 3u];
    p.kv_rows = STEP[b + 4u];
    p.mem_len = STEP[b + 5u];
    part0 = STEP[b + 6u];
    sync0 = STEP[b + 7u];
    p.splits = STEP[b + 8u];
    p.same_length = STEP[b + 9u];
    p.clamp_max = STEP[b + 10u];
    q_base = STEP[b] * p.H * (p.dh / 4u);
}

// kv_first < kv_rows and j < klen <= kv_rows: one subtraction wraps it.
uint kv_row(uint j)
{
    uint r = kv_first + j;
    return r >= p.kv_rows ? r - p.kv_rows : r;
}
