// Reading 8 consecutive f32 activations (element e, a multiple of 8) in
// one 256-bit load where the device has 64-bit integers (WIDE), else two.
#if WIDE
layout(std430, binding = X_BINDING) readonly buffer Xb { u64vec4 X8[]; };
void x_load8(uint e, out vec4 lo, out vec4 hi)
{
    u64vec4 u = X8[e >> 3];
    lo = vec4(uintBitsToFloat(unpackUint2x32(u.x)), uintBitsToFloat(unpackUint2x32(u.y)));
    hi = vec4(uintBitsToFloat(unpackUint2x32(u.z)), uintBitsToFloat(unpackUint2x32(u.w)));
}
#else
layout(std430, binding = X_BINDING) readonly buffer Xb { vec4 X4[]; };
void x_load8(uint e, out vec4 lo, out vec4 hi) { lo = X4[e >> 2]; hi = X4[(e >> 2) + 1u]; }
#endif
