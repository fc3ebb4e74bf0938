// Values the host writes before every submission of a pass, not recorded
// into the command buffer, so that a kept recording can be submitted
// again while the memories' rings turn: the words contract.h names (a
// lone stream's k|v row for DYN_Y, the streams' entries). The binding of
// the kernels whose line in kernels.manifest says step.
#include "contract.h"
layout(std430, binding = TXLM_STEP_BINDING) readonly buffer StepB { uint STEP[]; };
