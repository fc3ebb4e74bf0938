/* A session inside a call is claimed for it: a second call on it from
 * another thread (or a batch naming it twice over) is refused with a
 * clear error instead of racing on its memory (api/session_claim.c). */
#ifndef TXLM_SESSION_CLAIM_H
#define TXLM_SESSION_CLAIM_H

#include "blame.h"
#include "session.h"

/* 0, or TXLM_ERR_INVALID_ARGUMENT naming `what` (NULL: nothing) when s is inside another call. */
int txlm_session_claim(txlm_session *s, const char *what, txlm_err *err);
void txlm_session_release(txlm_session *s);
/* All of s[0..n) or none; the error names the stream (blame.h). */
int txlm_sessions_claim(txlm_session *const *s, uint32_t n, txlm_blame *blame, txlm_err *err);
void txlm_sessions_release(txlm_session *const *s, uint32_t n);

#endif
