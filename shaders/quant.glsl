// Where quantised weights live on the device (engine/tensor.c): in
// superblocks of 512 values (16 blocks of 32), each followed by the 16
// blocks' f16 scales (32 bytes), so a row's scales travel in the same
// stream as its values. e counts elements from the start of the bound
// chunk; a superblock is 136 uints (q8_0) or 72 (q4_0), whole texels of
// 4 uints and whole 8-uint loads.
#if W_TYPE == 3 || W_TYPE == 4
const uint Q_SB_VALUE_WORDS = W_TYPE == 3 ? 128u : 64u;
const uint Q_SB_WORDS = Q_SB_VALUE_WORDS + 8u;
const uint Q_PER_WORD = W_TYPE == 3 ? 4u : 8u;

// the uint holding element e (4 int8 or 8 nibbles, in order)
uint q_word(uint e) { return (e >> 9) * Q_SB_WORDS + (e & 511u) / Q_PER_WORD; }
// the uint holding the scale of e's block (two f16 scales per uint)
uint q_scale_word(uint e) { return (e >> 9) * Q_SB_WORDS + Q_SB_VALUE_WORDS + ((e >> 6) & 7u); }
float q_scale(uint word, uint e)
{
    vec2 v = unpackHalf2x16(word);
    return ((e >> 5) & 1u) != 0u ? v.y : v.x;
}

// The 4 int8 values of a uint (q8_0), and the 4 low nibbles of its low 16
// bits less 8 (q4_0), unscaled, as floats.
vec4 i8x4(uint u) { return vec4(ivec4(int(u) << 24, int(u) << 16, int(u) << 8, int(u)) >> 24); }
vec4 u4x4(uint u) { return vec4(uvec4(u, u >> 4, u >> 8, u >> 12) & 15u) - 8.0; }
#endif
