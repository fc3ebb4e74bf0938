#include "fp_flush.h"

#if defined(__x86_64__) || defined(_M_X64) /* every x86-64 processor has DAZ; 32-bit x86 may lack it */
#include <xmmintrin.h>
#define MXCSR_FTZ 0x8000u /* results that would be subnormal become 0 */
#define MXCSR_DAZ 0x0040u /* subnormal operands read as 0 */

int txlm_fp_flush_begin(txlm_fp_env *env)
{
    env->saved = _mm_getcsr();
    _mm_setcsr((unsigned)env->saved | MXCSR_FTZ | MXCSR_DAZ);
    env->changed = 1;
    return 1;
}

void txlm_fp_flush_end(const txlm_fp_env *env)
{
    if (env->changed) _mm_setcsr((unsigned)env->saved);
}
#elif defined(__aarch64__)
#define FPCR_FZ (1ul << 24)

int txlm_fp_flush_begin(txlm_fp_env *env)
{
    unsigned long v;
    __asm__ volatile("mrs %0, fpcr" : "=r"(v));
    env->saved = v;
    v |= FPCR_FZ;
    __asm__ volatile("msr fpcr, %0" : : "r"(v));
    env->changed = 1;
    return 1;
}

void txlm_fp_flush_end(const txlm_fp_env *env)
{
    if (env->changed) __asm__ volatile("msr fpcr, %0" : : "r"(env->saved));
}
#else
int txlm_fp_flush_begin(txlm_fp_env *env)
{
    env->saved = 0;
    env->changed = 0;
    return 0;
}

void txlm_fp_flush_end(const txlm_fp_env *env) { (void)env; }
#endif
