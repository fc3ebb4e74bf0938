/* txlm devices: what Vulkan offers and which device txlm would use. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *type_name(txlm_device_type t)
{
    switch (t) {
    case TXLM_DEVICE_DISCRETE: return "discrete GPU";
    case TXLM_DEVICE_INTEGRATED: return "integrated GPU";
    case TXLM_DEVICE_VIRTUAL: return "virtual GPU";
    case TXLM_DEVICE_CPU: return "CPU";
    default: return "other";
    }
}

int cmd_devices(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: txlm devices\n\nLists Vulkan devices; '*' marks the one txlm uses "
                   "(discrete > integrated > virtual > CPU, or TXLM_DEVICE=<index or name substring>).\n");
            return 0;
        }
        return cli_error("devices: unknown option \"%s\" (see txlm devices --help)", argv[i]);
    }
    uint32_t n = 0;
    txlm_status st = txlm_list_devices(NULL, 0, &n);
    if (st) return cli_lib_error(st, "devices");
    txlm_device_info *d = calloc(n ? n : 1, sizeof *d);
    if (!d) return cli_error("out of memory");
    st = txlm_list_devices(d, n, &n);
    if (st) {
        free(d);
        return cli_lib_error(st, "devices");
    }
    int marked = 0;
    for (uint32_t i = 0; i < n; i++) marked |= d[i].preferred;
    for (uint32_t i = 0; i < n; i++)
        printf("%c %u: %s (%s, Vulkan %u.%u, %.1f GiB, subgroup %u)%s\n", d[i].preferred ? '*' : ' ', i, d[i].name,
               type_name(d[i].type), d[i].api_version >> 22, (d[i].api_version >> 12) & 0x3ff,
               (double)d[i].device_local_bytes / (1 << 30), d[i].subgroup_size, d[i].supported ? "" : "  [unsupported]");
    free(d);
    const char *want = getenv("TXLM_DEVICE");
    if (!marked && n && want && *want) return cli_error("devices: TXLM_DEVICE=%s matches none of these devices (give an index or a name substring)", want);
    if (!marked) return cli_error("devices: no device txlm can use");
    return 0;
}
