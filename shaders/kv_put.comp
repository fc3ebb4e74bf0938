#version 450
#extension GL_GOOGLE_include_directive : require

// A batch's new keys and values into each stream's ring: rows q0 ..
// q0 + qlen of the batch's k|v product go to the stream's ring rows after
// its memory, wrapping past the last (attn_push.glsl, kv_row). The ring
// rows come from the step buffer's stream entries, not from the
// recording, so a kept recording puts them wherever the rings have turned
// to (a copy command's offsets would be fixed). Bits are moved as they are.

layout(local_size_x = 64) in;

#include "attn_push.glsl"

layout(std430, binding = 0) readonly buffer Sb { uvec4 SRC[]; };   // [rows, 2*H*dh]
#define RING(s, b) layout(std430, binding = b) writeonly buffer Rb##s { uvec4 RING##s[]; };
RING(0, 1)
#ifndef STREAMS
#define STREAMS 1
#endif
#if STREAMS == 8
#define SLOT(s) (TXLM_SLOT_BINDING - 1 + s)
RING(1, SLOT(1)) RING(2, SLOT(2)) RING(3, SLOT(3)) RING(4, SLOT(4)) RING(5, SLOT(5)) RING(6, SLOT(6)) RING(7, SLOT(7))
void put(uint i, uvec4 v)
{
    switch (slot) {
    case 1u: RING1[i] = v; break;
    case 2u: RING2[i] = v; break;
    case 3u: RING3[i] = v; break;
    case 4u: RING4[i] = v; break;
    case 5u: RING5[i] = v; break;
    case 6u: RING6[i] = v; break;
    case 7u: RING7[i] = v; break;
    default: RING0[i] = v; break;
    }
}
#else
void put(uint i, uvec4 v) { RING0[i] = v; }
#endif

void main()
{
    attn_begin();
    uint c = gl_GlobalInvocationID.x, j = gl_GlobalInvocationID.y;  // vec4 column of a row, segment row
    uint w4 = 2u * p.H * (p.dh / 4u);
    if (c >= w4 || j >= p.qlen) return;
    put(kv_row(p.mlen + j) * w4 + c, SRC[2u * q_base + j * w4 + c]);
}
