/* The context a test makes: on a host device of the process's own when
 * TXLM_TEST_HOST_DEVICE is set (host_device.h), else txlm's own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_device.h"

static host_device shared;
static int shared_open;

static void close_shared(void) { host_device_close(&shared); }

txlm_status test_context_create(const txlm_context_options *opts, txlm_context **out)
{
    const char *v = getenv("TXLM_TEST_HOST_DEVICE");
    if (!v || !*v || !strcmp(v, "0")) return txlm_context_create(opts, out);
    if (!shared_open) {
        hd_options o = {.validation = opts && opts->validation};
        if (host_device_open(&shared, &o)) {
            *out = NULL;
            return TXLM_ERR_NO_DEVICE;
        }
        shared_open = 1;
        printf("contexts on a program's own device (TXLM_TEST_HOST_DEVICE)\n");
        atexit(close_shared); /* after the test has destroyed its contexts */
    }
    return host_device_context(&shared, opts, out);
}
