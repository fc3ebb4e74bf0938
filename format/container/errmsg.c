#include "errmsg.h"

#include <stdio.h>
#include <string.h>

int txlm_fail(txlm_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

int txlm_fail_prefix(txlm_err *err, const char *fmt, ...)
{
    if (!err) return 0;
    char prefix[256], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    size_t n = strlen(prefix);
    if (n >= sizeof err->msg) n = sizeof err->msg - 1;
    memcpy(err->msg, prefix, n);
    size_t rest = strnlen(old, sizeof old - 1);
    if (rest > sizeof err->msg - 1 - n) rest = sizeof err->msg - 1 - n;
    memcpy(err->msg + n, old, rest);
    err->msg[n + rest] = 0;
    return err->code;
}
