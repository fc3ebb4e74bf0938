/* The context a test makes (tests/common/host_env.c): on a program's own
 * device (host_device.h) when TXLM_TEST_HOST_DEVICE is set, else txlm's
 * own; the device closes with the last context on it. */
#ifndef TXLM_TEST_CONTEXT_H
#define TXLM_TEST_CONTEXT_H

#include <txlm.h>

txlm_status test_context_create(const txlm_context_options *opts, txlm_context **out);
/* NULL is ignored. */
void test_context_destroy(txlm_context *ctx);

#endif
