/* The log callback (txlm_set_log_callback) and the library's version.
 * The callback and its user pointer are set together under a lock and read
 * together under it, so a message never goes to one callback with
 * another's user pointer; messages are rare (validation, drivers), so the
 * lock costs nothing that matters. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static txlm_log_fn log_fn;
static void *log_user;

void txlm_set_log_callback(txlm_log_fn fn, void *user)
{
    pthread_mutex_lock(&log_lock);
    log_fn = fn;
    log_user = user;
    pthread_mutex_unlock(&log_lock);
}

void txlm_log(txlm_log_level level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&log_lock);
    txlm_log_fn fn = log_fn;
    void *user = log_user;
    pthread_mutex_unlock(&log_lock);
    if (fn) fn(user, level, msg);
    else fprintf(stderr, "txlm: %s\n", msg);
}

#define STR2(x) #x
#define STR(x) STR2(x)

const char *txlm_version(void)
{
    return STR(TXLM_VERSION_MAJOR) "." STR(TXLM_VERSION_MINOR) "." STR(TXLM_VERSION_PATCH);
}

uint32_t txlm_version_number(void)
{
    return TXLM_VERSION_MAJOR * 10000u + TXLM_VERSION_MINOR * 100u + TXLM_VERSION_PATCH;
}
