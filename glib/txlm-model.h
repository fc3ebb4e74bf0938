#ifndef TXLM_MODEL_H
#define TXLM_MODEL_H

#include <gio/gio.h>

#include "txlm-glib-macros.h"
#include "txlm-device.h"

G_BEGIN_DECLS

typedef struct _TxlmSession TxlmSession;

#define TXLM_TYPE_MODEL (txlm_model_get_type())
TXLM_GLIB_API G_DECLARE_FINAL_TYPE(TxlmModel, txlm_model, TXLM, MODEL, GObject)

TXLM_GLIB_API TxlmModel *txlm_model_new(const char *path, GCancellable *cancellable, GError **error);
TXLM_GLIB_API void txlm_model_load_async(const char *path, GCancellable *cancellable, GAsyncReadyCallback callback,
                                         gpointer user_data);
TXLM_GLIB_API TxlmModel *txlm_model_load_finish(GAsyncResult *result, GError **error);

TXLM_GLIB_API const char *txlm_model_get_path(TxlmModel *model);
TXLM_GLIB_API TxlmDevice *txlm_model_get_device(TxlmModel *model);
TXLM_GLIB_API gboolean txlm_model_get_no_verify(TxlmModel *model);
TXLM_GLIB_API double txlm_model_get_progress(TxlmModel *model);
TXLM_GLIB_API gboolean txlm_model_get_loaded(TxlmModel *model);
TXLM_GLIB_API guint txlm_model_get_vocab_size(TxlmModel *model);
TXLM_GLIB_API guint txlm_model_get_max_memory(TxlmModel *model);
TXLM_GLIB_API guint64 txlm_model_get_validation_messages(TxlmModel *model);

TXLM_GLIB_API gint32 *txlm_model_tokenize(TxlmModel *model, const char *text, gsize *n_tokens, GError **error);
TXLM_GLIB_API TxlmSession *txlm_model_create_session(TxlmModel *model, GError **error);

G_END_DECLS

#endif
