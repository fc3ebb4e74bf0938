/* Fault points for tests (srv_fault.h). */
#include "srv_fault.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

int srv_fault(const char *name)
{
    const char *v = getenv("TXLM_FAULT_SERVE");
    size_t n = strlen(name);
    for (const char *p = v; p && *p; p += strcspn(p, ","), p += *p == ',')
        if (!strncmp(p, name, n) && (p[n] == ',' || !p[n])) return 1;
    return 0;
}

void srv_fault_pause(const char *name)
{
    if (srv_fault(name)) nanosleep(&(struct timespec){0, 500 * 1000 * 1000}, NULL);
}
