/* Server sessions (serve.h's srv_session): ids, the key that owns each,
 * the cap, idle expiry, and their state exported and imported in the
 * format of txlm_session_save (txlm generate --state-in reads it).
 * Functions marked "locked" are called holding srv.lock. */
#ifndef TXLM_SRV_SESSIONS_H
#define TXLM_SRV_SESSIONS_H

#include "serve.h"
#include "srv_json.h"

/* A new session owned by key, seeded (seed_given) or from a random seed,
 * restored from state[0..state_len) when state is not NULL, and claimed
 * (busy) for the caller, who releases it (srv_session_release): nothing
 * can expire or delete it before the caller's first use. Not locked (it
 * takes the lock itself). NULL after filling e: the cap (429 with
 * *retry_after seconds), device memory (503), a refused state (400). */
srv_session *srv_session_new(srv *sv, int key, const uint64_t *seed, const void *state, size_t state_len, int *retry_after,
                             srv_err *e);
/* locked: the session id owned by key, or NULL after filling e (404). */
srv_session *srv_session_find(srv *sv, const char *id, int key, srv_err *e);
/* locked: the session id owned by key, marked busy; NULL after filling e
 * (404 for an id unknown or of another key, 409 when busy). */
srv_session *srv_session_claim(srv *sv, const char *id, int key, srv_err *e);
/* A session the caller claimed, its state in memory: read back from
 * --session-dir if it was listed from there (not locked). 0, or -1 after
 * filling e. */
int srv_session_ready(srv *sv, srv_session *x, srv_err *e);
/* A session's device memory as the engine reports it (no call may hold it). */
uint64_t srv_device_bytes(const txlm_session *s);
/* locked: no longer busy; its idle time starts now, its memory is measured. */
void srv_session_release(srv *sv, srv_session *x);
/* locked: unlinks the session id of key (not busy) and returns it for
 * srv_session_free, or NULL after filling e. */
srv_session *srv_session_remove(srv *sv, const char *id, int key, srv_err *e);
/* Frees an unlinked session (not locked). */
void srv_session_free(srv_session *x);
/* locked: unlinks the sessions idle for longer than the limit (or all, at
 * the end) into out[] (room for every session); their count. */
uint32_t srv_session_expire(srv *sv, int all, srv_session **out);
/* locked: a session as JSON (its memory rows only when not busy). */
cJSON *srv_session_json(const srv *sv, const srv_session *x);
/* locked: the sessions of key as an OpenAI-style list. */
cJSON *srv_session_list(const srv *sv, int key);

#endif
