#include "write-run.h"

#include "write-calls.h"

WriteRun *write_run_new(gpointer owner, char *text, guint64 version)
{
    WriteRun *r = g_new0(WriteRun, 1);
    r->owner = g_object_ref(owner);
    r->cancel = g_cancellable_new();
    r->text = text;
    r->version = version;
    write_call_begin();
    return r;
}

void write_run_free(WriteRun *r)
{
    write_call_end();
    g_object_unref(r->owner);
    g_object_unref(r->cancel);
    g_free(r->text);
    g_free(r);
}

void write_run_cancel(WriteRun **run)
{
    if (!*run) return;
    g_cancellable_cancel((*run)->cancel);
    *run = NULL;
}
