// The push constants of the attention kernels (contract.h,
// txlm_attn_push). KV is a ring of kv_rows rows per layer: memory row 0
// sits at row kv_row0 (plus the STEP word kv_dyn names, as the forward
// pass gives it) and key j at kv_row(j), so the memory slides by moving
// that row and no row is ever copied.
//
// Several streams in one dispatch (a batch, engine/attn_streams.c): with
// `table` set, each stream's own shape is an entry in the step buffer
// (contract.h, TXLM_ENTRY_*), written by the host before each submission
// (so a kept recording serves wherever every ring has turned to). The grid's z holds
// zdim workgroups per stream; stream s of the dispatch reads its keys and
// values from slot s of binding 1 (attn_io.glsl) and its queries and
// outputs from row q0 of the pass's rows on.
#include "step.glsl"
layout(push_constant) uniform Push { txlm_attn_push s; } pc;

// The shape of this workgroup's stream: the push constants', or its entry's.
txlm_attn_push p;
// Memory row 0's ring row, read once by attn_begin() at the top of main:
// a storage read per key would cost a load loop per key on CPU drivers.
uint kv_first;
uint slot = 0u;    // the stream's slot in this dispatch
uint q0 = 0u;      // its first query (and output) row
uint q_base = 0u;  // the same in vec4 (head sizes of whole vec4s)
uint part0 = 0u;   // vec4 of its partial results in the scratch
uint sync0 = 0u;   // its first count of finished runs (attn_split_sg's DONE, after word 0)
uint wg_z;         // gl_WorkGroupID.z within the stream

void attn_begin()
{
    p = pc.s;
    wg_z = gl_WorkGroupID.z;
    if (p.table == 0u) {
        kv_first = p.kv_row0 + (p.kv_dyn != 0u ? STEP[p.kv_dyn - 1u] : 0u);
        q0 = p.q0;
        q_base = q0 * p.H * (p.dh / 4u);
        return;
    }
    slot = gl_WorkGroupID.z / p.zdim;
    wg_z -= slot * p.zdim;
    uint b = p.table + slot * TXLM_ENTRY_WORDS;
    p.qlen = STEP[b + TXLM_ENTRY_QLEN];
    p.mlen = STEP[b + TXLM_ENTRY_MLEN];
    p.klen = p.mlen + p.qlen;
    kv_first = STEP[b + TXLM_ENTRY_KV_FIRST];
    p.kv_rows = STEP[b + TXLM_ENTRY_KV_ROWS];
    p.mem_len = STEP[b + TXLM_ENTRY_MEM_LEN];
    part0 = STEP[b + TXLM_ENTRY_PART0];
    sync0 = STEP[b + TXLM_ENTRY_SYNC0];
    p.splits = STEP[b + TXLM_ENTRY_SPLITS];
    p.same_length = STEP[b + TXLM_ENTRY_SAME_LENGTH];
    p.clamp_max = STEP[b + TXLM_ENTRY_CLAMP];
    q0 = STEP[b + TXLM_ENTRY_Q0];
    q_base = q0 * p.H * (p.dh / 4u);
}

// kv_first < kv_rows and j < klen <= kv_rows: one subtraction wraps it.
uint kv_row(uint j)
{
    uint r = kv_first + j;
    return r >= p.kv_rows ? r - p.kv_rows : r;
}
