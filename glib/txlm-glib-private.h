/* What the files of txlm-glib share; not installed. Only the public C API
 * of txlm (include/) is used below this layer. */
#ifndef TXLM_GLIB_PRIVATE_H
#define TXLM_GLIB_PRIVATE_H

#include <txlm.h>

#include "txlm-glib.h"

/* *error (if not NULL) gets the failed call's status and txlm_last_error()
 * of this thread: TXLM_ERR_CANCELLED as G_IO_ERROR_CANCELLED, any other
 * status as TXLM_ERROR with the same code. */
void txlm_glib_set_error(GError **error, txlm_status status);
GError *txlm_glib_error_new(txlm_status status);

/* A device of txlm_list_devices' list (index: its place there). */
TxlmDevice *txlm_glib_device_new(guint index, const txlm_device_info *info);

/* The loaded model's handle (NULL until loaded), and the session options
 * every session of it is created with (txlm generate's). */
txlm_model *txlm_glib_model_handle(TxlmModel *model);

/* A session over handle (taken), keeping model alive. */
TxlmSession *txlm_glib_session_new(TxlmModel *model, txlm_session *handle);

/* One word of a scored text. */
TxlmWordScore *txlm_glib_word_score_new(const char *text, gsize begin, gsize end, glong char_begin, glong char_end,
                                        double surprisal, guint n_tokens);

#endif
