/* One-line error messages carried through the parsers and the engine.
 * Every fallible internal function takes (txlm_err *err) and fills it. */
#ifndef TXLM_ERRMSG_H
#define TXLM_ERRMSG_H

#include <stdarg.h>

typedef struct txlm_err {
    int code;          /* a txlm_status value (include/txlm.h); 0 = no error */
    char msg[512];
} txlm_err;

#if defined(__GNUC__)
#define TXLM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TXLM_PRINTF(a, b)
#endif

/* Sets err (if not NULL) and returns code, so callers can `return txlm_fail(...)`. */
int txlm_fail(txlm_err *err, int code, const char *fmt, ...) TXLM_PRINTF(3, 4);
/* Prefixes an existing message with context ("loading foo.txlm: "). */
int txlm_fail_prefix(txlm_err *err, const char *fmt, ...) TXLM_PRINTF(2, 3);

#endif
