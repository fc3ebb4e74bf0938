/* Session state save/restore (engine/state.c). */
#ifndef TXLM_STATE_H
#define TXLM_STATE_H

#include <stddef.h>

#include "session.h"

size_t txlm_state_size(const txlm_session *s);
int txlm_state_save(txlm_session *s, void *buf, size_t cap, size_t *written, txlm_err *err);
int txlm_state_load(txlm_session *s, const void *buf, size_t size, txlm_err *err);
int txlm_state_save_file(txlm_session *s, const char *path, txlm_err *err);
int txlm_state_load_file(txlm_session *s, const char *path, txlm_err *err);

#endif
