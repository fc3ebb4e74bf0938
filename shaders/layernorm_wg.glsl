// The statistics of one row for the LayerNorms whose row is one
// workgroup of 64 invocations with storage-buffer reads (layernorm.comp's
// plain variant, gemv_gpu.comp's LN epilogue), summed through workgroup
// memory, so no subgroup size is assumed and both sum in the same order
// and agree to the bit. The includer defines LN_IN(row, c): column c of
// the row.

shared float red[64];

float reduce_sum(float v)
{
    uint t = gl_LocalInvocationID.x;
    red[t] = v;
    barrier();
    for (uint s = 32u; s > 0u; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        barrier();
    }
    float total = red[0];
    barrier();
    return total;
}

// mean and 1 / sqrt(biased variance + eps) over the first d columns, two
// passes for accuracy; invocation t takes columns t, t + 64, ...
void ln_stats_wg(uint row, uint t, uint d, float eps, out float mean, out float rstd)
{
    float s = 0.0;
    for (uint c = t; c < d; c += 64u) s += LN_IN(row, c);
    mean = reduce_sum(s) / float(d);
    float v = 0.0;
    for (uint c = t; c < d; c += 64u) {
        float x = LN_IN(row, c) - mean;
        v += x * x;
    }
    rstd = 1.0 / sqrt(reduce_sum(v) / float(d) + eps);
}
