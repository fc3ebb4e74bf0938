/* What the kernel test files share (kernel_harness.c): the device,
 * recorder and ops under test, random inputs, host-visible buffers,
 * weights of every dtype, the per-kernel count of test cases, and the
 * device-feature modes that force each kernel variant. */
#ifndef TXLM_TEST_KERNEL_HARNESS_H
#define TXLM_TEST_KERNEL_HARNESS_H

#include "../common/kernel_switches.h"
#include "context.h"
#include "ops.h"

extern txlm_context *ctx;
extern txlm_rec rec;
extern txlm_ops ops;

/* xorshift state: frand() steps it, uniform in [-1, 1) */
extern uint64_t rng;
float frand(void);
float *rand_vec(size_t n, float scale);
void die_if(int rc, const txlm_err *e);
/* A host-visible buffer holding `n` floats (inputs and outputs alike). */
txlm_buf host_buf(const float *data, size_t n);
/* A weight tensor of a dtype; max_range > 0 forces it to be split into
 * chunks of at most that many bytes. `data` is replaced by what the
 * device will actually see (the dtype's rounding), so references use it. */
txlm_gpu_tensor weight_dt(float *data, uint32_t rows, uint32_t cols, uint32_t dtype, VkDeviceSize max_range);
txlm_gpu_tensor weight(float *data, uint32_t rows, uint32_t cols, VkDeviceSize max_range);
const char *dt_name(uint32_t dt);
/* v rounded to f16 and back, as the matrix units read it */
void round_f16(float *v, size_t n);

/* Per kernel, in how many test cases it ran (main checks every kernel
 * the device has ran in at least three); case_done ends a case. */
extern uint32_t cases_run[TXLM_K_COUNT];
void case_done(void);

/* The kernel choices the op functions make from device features, forced
 * one by one (set_mode: 0 where the device cannot run that mode). */
enum {
    MODE_NARROW = 1, MODE_NO_SUBGROUP = 2, MODE_NO_GEMV = 4, MODE_NO_GEMV_Q8 = 8, MODE_TEXEL = 16, MODE_GPU = 32,
    MODE_COOPMAT = 64, /* the GPU kernels with the matrix units' (MODE_GPU: without) */
    N_MODES = 128
};
extern int have_int64, have_subgroup, have_texel, have_gpu_kernels, have_coopmat;
int set_mode(int mode);
void reset_mode(void);

void begin(void);
void run(void);
/* The largest difference; a NaN anywhere counts as infinite. */
double max_abs_diff(const float *a, const float *b, size_t n);

/* kernel_cases_attention.c: relative attention and the log-softmax; the
 * failures its checks counted */
void test_attention(uint32_t qlen, uint32_t mlen, uint32_t H, uint32_t dh, int same_length, uint32_t mem_len,
                    int32_t clamp_len, uint32_t rk_off, uint32_t kv_row0);
/* The same with keys and values in a ring of `ring` rows (>= klen): key
 * j at row (kv_row0 + j) % ring, the other rows stale. */
void test_attention_ring(uint32_t qlen, uint32_t mlen, uint32_t H, uint32_t dh, int same_length, uint32_t mem_len,
                         int32_t clamp_len, uint32_t rk_off, uint32_t kv_row0, uint32_t ring);
void test_logsoftmax(uint32_t rows, uint32_t n, uint32_t n_write, int with_add);
int attention_case_failures(void);
/* kernel_cases_fused.c: a product and its rows' LayerNorm in one
 * dispatch (M, N, K, d, dtype, bias, residual), a product of two outputs
 * (M, N, K, the first output's columns, dtype, bytes per chunk of W) */
void test_linear_ln(uint32_t M, uint32_t N, uint32_t K, uint32_t d, uint32_t dtype, int with_bias, int residual);
void test_linear_split(uint32_t M, uint32_t N, uint32_t K, uint32_t split, uint32_t dtype, VkDeviceSize max_range);
int fused_case_failures(void);
/* kernel_cases_streams.c: several streams' attention in shared dispatches;
 * the failures its checks counted (test_streams_cases runs every case,
 * test_streams_mixed those of streams whose position-key tables differ) */
int test_streams_cases(void);
int test_streams_mixed(void);

#endif
