// Values the host writes before every submission of a segment
// (engine/forward.c, write_step), not recorded into the command buffer,
// so that a recorded one-token step can be submitted again for the next
// token while the memory's ring turns: word 0 is the ring row of memory
// row 0 (the attention kernels, with kv_dyn), word 1 the element offset
// of the segment's first key|value row (the k|v projection, DYN_Y).
// Binding 8 of the kernels whose line in kernels.manifest says step.
layout(std430, binding = 8) readonly buffer StepB { uint STEP[]; };
