// Merging the runs of keys of attn_split.comp's layout (PART[H, qlen,
// nparts, 1 + dh/4] = (m, l, ., .) then the run's weighted values) into
// one output: with M the largest run maximum,
//   O = sum_r exp(m_r - M) * acc_r / sum_r exp(m_r - M) * l_r.
// Runs that saw no key have m_r = TXLM_MASKED and weigh exactly 0.
// attn_merge.comp does it in a dispatch of its own; attn_tile.comp's and
// attn_cm.comp's MERGE variants in the last run to finish, in the same
// order, so the two agree to the bit. The includer declares PART.

// vec4 e of the merged output whose runs' first vec4 is PART[base],
// runs stride vec4s apart
vec4 merged_runs(uint base, uint stride, uint nparts, uint e)
{
    float M = TXLM_MASKED;
    for (uint r = 0u; r < nparts; r++) M = max(M, PART[base + r * stride].x);
    float l = 0.0;
    vec4 acc = vec4(0.0);
    for (uint r = 0u; r < nparts; r++) {
        vec4 ml = PART[base + r * stride];
        float w = exp(ml.x - M);
        l += w * ml.y;
        acc += w * PART[base + r * stride + 1u + e];
    }
    return acc / l;
}

#if MERGE
#include "last_group.glsl"

// Whether this workgroup is the last of its word's `runs` workgroups to
// finish (all invocations call it; last_group.glsl's handshake, the
// verdict through LAST_FLAG, a float of workgroup memory the includer
// lends). The last puts the count back to 0 for the next dispatch.
bool last_run(uint tid, uint word, uint runs)
{
    GROUP_SYNC();
    uint ticket = count_done(tid, word);
    if (tid == 0u) {
        LAST_FLAG = ticket == runs ? 1.0 : 0.0;
        if (ticket == runs) DONE[word] = 0u;
    }
    GROUP_SYNC();
    return LAST_FLAG != 0.0;
}
#endif
