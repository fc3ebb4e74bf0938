/* Subnormal floats on CPU Vulkan devices.
 *
 * A CPU implementation (lavapipe) runs shaders on worker threads that it
 * starts when the device is created, and they inherit the floating-point
 * environment of the thread that creates it. x86 processors handle a
 * subnormal operand or result in microcode, about a hundred times slower
 * than a normal one, and attention and log-softmax make subnormals
 * routinely (exp of a score far below the maximum): one head GEMV of a
 * generated token was measured at 33 ms with them and 3.4 ms without.
 * GPUs flush them in hardware, and Vulkan leaves the choice to the
 * implementation unless shaderDenormPreserveFloat32 is asked for (txlm
 * never does; lavapipe offers neither that nor a flush-to-zero float
 * control). So the device of a CPU implementation is created with
 * subnormals flushed to zero (x86-64: MXCSR FTZ and DAZ; AArch64: FPCR FZ),
 * and the caller's environment is restored right after. */
#ifndef TXLM_FP_FLUSH_H
#define TXLM_FP_FLUSH_H

typedef struct txlm_fp_env {
    unsigned long saved;
    int changed;
} txlm_fp_env;

/* Flushes subnormals on this thread (and threads started from it) until
 * txlm_fp_flush_end; 0 where the processor has no such switch. */
int txlm_fp_flush_begin(txlm_fp_env *env);
void txlm_fp_flush_end(const txlm_fp_env *env);

#endif
