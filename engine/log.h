/* Where the library's messages go: the application's log callback, or
 * stderr (engine/log.c). */
#ifndef TXLM_LOG_H
#define TXLM_LOG_H

#include "errmsg.h"
#include "txlm.h"

/* One message, one line, "txlm: " prefixed on stderr. */
void txlm_log(txlm_log_level level, const char *fmt, ...) TXLM_PRINTF(2, 3);

#endif
