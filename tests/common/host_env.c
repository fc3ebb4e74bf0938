/* The context a test makes: on a host device of the process's own when
 * TXLM_TEST_HOST_DEVICE is set (host_device.h), else txlm's own. The
 * device is closed when the last context on it is destroyed, before the
 * test returns: at exit, a newer validation layer (Mesa 26.2's Debian
 * package) has torn its own state down and aborts in vkDeviceWaitIdle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_device.h"
#include "test_context.h"

static host_device shared;
static int shared_open;
static uint32_t shared_contexts;

static int wanted(void)
{
    const char *v = getenv("TXLM_TEST_HOST_DEVICE");
    return v && *v && strcmp(v, "0") != 0;
}

txlm_status test_context_create(const txlm_context_options *opts, txlm_context **out)
{
    if (!wanted()) return txlm_context_create(opts, out);
    if (!shared_open) {
        hd_options o = {.validation = opts && opts->validation};
        if (host_device_open(&shared, &o)) {
            *out = NULL;
            return TXLM_ERR_NO_DEVICE;
        }
        shared_open = 1;
        printf("contexts on a program's own device (TXLM_TEST_HOST_DEVICE)\n");
    }
    txlm_status st = host_device_context(&shared, opts, out);
    shared_contexts += st == TXLM_OK;
    return st;
}

void test_context_destroy(txlm_context *ctx)
{
    txlm_context_destroy(ctx);
    if (!ctx || !shared_open || --shared_contexts) return;
    if (shared.messages) fprintf(stderr, "host device: %llu validation messages\n", (unsigned long long)shared.messages);
    host_device_close(&shared);
    shared_open = 0;
}
