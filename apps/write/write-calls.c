#include "write-calls.h"

void write_call_begin(void)
{
    GApplication *app = g_application_get_default();
    if (app) g_application_hold(app);
}

void write_call_end(void)
{
    GApplication *app = g_application_get_default();
    if (app) g_application_release(app);
}
