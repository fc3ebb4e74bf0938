// The last of a dispatch's workgroups to finish a share of work, found
// by a count in DONE (the includer declares it coherent and the shader
// enables GL_KHR_memory_scope_semantics). Every invocation's buffer
// stores are released at device scope by the workgroup's barrier, which
// orders them before invocation 0's count; the count is an acquire and
// release at device scope, so the last to count has every other
// workgroup's stores visible; the second barrier hands its verdict and
// that visibility to the whole workgroup. A plain barrier() orders only
// workgroup memory, and a fence in one invocation does not pair with an
// atomic in another: both would leave the handshake to the hardware's
// goodwill.

#define GROUP_SYNC() controlBarrier(gl_ScopeWorkgroup, gl_ScopeDevice, \
    gl_StorageSemanticsBuffer | gl_StorageSemanticsShared, gl_SemanticsAcquireRelease)

// Invocation 0's ticket for DONE[word] (1 for the first workgroup to
// count), 0 in the others; called between two GROUP_SYNC()s.
uint count_done(uint tid, uint word)
{
    if (tid != 0u) return 0u;
    return atomicAdd(DONE[word], 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease) + 1u;
}
