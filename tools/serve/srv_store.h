/* Sessions that outlive a restart (--session-dir DIR). At SIGTERM or
 * SIGINT every session in memory is written to DIR/ID.session (through
 * txlm_output_*: a temporary synced and renamed, so a crash leaves the
 * old file or none, never a torn one); a server started with the same DIR
 * lists them under the same ids at once and reads each back the first
 * time a request uses it (lazily: a restart costs one directory read),
 * removing the file then. A session deleted or expired loses its file.
 *
 * A file: the line "txlm-serve-session 1", a line of JSON with the
 * session's facts ({"id", "key", "tokens", "from_state", "seed",
 * "memory_rows", "created", "last_used"}: key is the SHA-256 of the API
 * key that owns it, in hex, or null on a server without keys; the times
 * in seconds since 1970), then the state as txlm_session_save writes it.
 * Only files whose id has this server's --id-prefix are taken, so
 * servers with their own prefixes may share one directory. */
#ifndef TXLM_SRV_STORE_H
#define TXLM_SRV_STORE_H

#include "serve.h"
#include "srv_json.h"

/* At the start (before any thread): the sessions of DIR listed, up to
 * --max-sessions, their states left on disk. 0, or 1 after printing why
 * (DIR cannot be made or read). */
int srv_store_open(srv *sv);
/* A session listed from DIR and claimed by the caller (not locked): its
 * state read back into a new txlm_session and its file removed. 0, or -1
 * after filling e (the session stays listed, its file kept). */
int srv_store_load(srv *sv, srv_session *x, srv_err *e);
/* A session that is gone for good (deleted, expired): its file removed. */
void srv_store_forget(srv *sv, const srv_session *x);
/* At the stop, every thread but the main one idle: each session in memory
 * written to DIR (those never read back keep their file). */
void srv_store_save_all(srv *sv);

#endif
