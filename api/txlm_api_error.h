/* Turning internal errors into the public API's status + per-thread message (api.c). */
#ifndef TXLM_API_ERROR_H
#define TXLM_API_ERROR_H

#include "errmsg.h"
#include "txlm.h"

txlm_status txlm_api_fail(const txlm_err *e);
txlm_status txlm_api_bad_arg(const char *what);

#endif
