// The statistics of one row for the LayerNorms whose row is one
// subgroup of 8 lanes (layernorm.comp's TEXEL variant, gemv_tex.comp's
// LN epilogue), so both sum in the same order and agree to the bit. The
// includer defines LN_IN4(row, t): texel t (columns 4t..4t+3) of the row.

// keeps the columns of texel t that are < d, zeroes the rest (a select: no NaN leaks)
vec4 ln_real(uint t, vec4 v, uint d) { return mix(vec4(0.0), v, lessThan(uvec4(4u * t) + uvec4(0u, 1u, 2u, 3u), uvec4(d))); }

// mean and 1 / sqrt(biased variance + eps) over the first d columns, two
// passes for accuracy; lane l takes texels l, l + 8, ...
void ln_stats(uint row, uint lane, uint d, float eps, out float mean, out float rstd)
{
    uint n4 = (d + 3u) / 4u;
    vec4 s = vec4(0.0);
    for (uint t = lane; t < n4; t += 8u) s += ln_real(t, LN_IN4(row, t), d);
    mean = subgroupAdd(s.x + s.y + s.z + s.w) / float(d);
    vec4 v = vec4(0.0);
    for (uint t = lane; t < n4; t += 8u) {
        vec4 x = ln_real(t, LN_IN4(row, t) - mean, d);
        v += x * x;
    }
    rstd = 1.0 / sqrt(subgroupAdd(v.x + v.y + v.z + v.w) / float(d) + eps);
}
