/* Claiming a session for one call (session_claim.h). */
#include "session_claim.h"

#include <stdio.h>

int txlm_session_claim(txlm_session *s, const char *what, txlm_err *err)
{
    int free_ = 0;
    if (__atomic_compare_exchange_n(&s->busy, &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return 0;
    return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s%sthe session is inside another call (a session is used by one "
                     "thread at a time)", what ? what : "", what ? ": " : "");
}

void txlm_session_release(txlm_session *s) { __atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE); }

int txlm_sessions_claim(txlm_session *const *s, uint32_t n, txlm_blame *blame, txlm_err *err)
{
    for (uint32_t i = 0; i < n; i++) {
        if (txlm_session_claim(s[i], NULL, err)) {
            txlm_sessions_release(s, i);
            return txlm_blame_stream(blame, err, i);
        }
    }
    return 0;
}

void txlm_sessions_release(txlm_session *const *s, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) txlm_session_release(s[i]);
}
