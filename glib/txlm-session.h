#ifndef TXLM_SESSION_H
#define TXLM_SESSION_H

#include <gio/gio.h>

#include "txlm-glib-macros.h"
#include "txlm-model.h"

G_BEGIN_DECLS

#define TXLM_TYPE_SESSION (txlm_session_get_type())
TXLM_GLIB_API G_DECLARE_FINAL_TYPE(TxlmSession, txlm_session, TXLM, SESSION, GObject)

TXLM_GLIB_API TxlmModel *txlm_session_get_model(TxlmSession *session);
TXLM_GLIB_API gboolean txlm_session_get_busy(TxlmSession *session);
TXLM_GLIB_API double txlm_session_get_progress(TxlmSession *session);
TXLM_GLIB_API guint txlm_session_get_memory_length(TxlmSession *session);
TXLM_GLIB_API gboolean txlm_session_clear_memory(TxlmSession *session, GError **error);

/* sampling settings, read when a generation starts */
TXLM_GLIB_API double txlm_session_get_temperature(TxlmSession *session);
TXLM_GLIB_API void txlm_session_set_temperature(TxlmSession *session, double temperature);
TXLM_GLIB_API guint txlm_session_get_top_k(TxlmSession *session);
TXLM_GLIB_API void txlm_session_set_top_k(TxlmSession *session, guint top_k);
TXLM_GLIB_API double txlm_session_get_top_p(TxlmSession *session);
TXLM_GLIB_API void txlm_session_set_top_p(TxlmSession *session, double top_p);
TXLM_GLIB_API double txlm_session_get_repeat_penalty(TxlmSession *session);
TXLM_GLIB_API void txlm_session_set_repeat_penalty(TxlmSession *session, double repeat_penalty);
TXLM_GLIB_API guint txlm_session_get_repeat_last_n(TxlmSession *session);
TXLM_GLIB_API void txlm_session_set_repeat_last_n(TxlmSession *session, guint repeat_last_n);
TXLM_GLIB_API char **txlm_session_get_stop_strings(TxlmSession *session);
TXLM_GLIB_API void txlm_session_set_stop_strings(TxlmSession *session, const char *const *stop_strings);

/* generating */
TXLM_GLIB_API void txlm_session_generate_async(TxlmSession *session, const char *prompt, gint n_tokens, guint64 seed,
                                               GCancellable *cancellable, GAsyncReadyCallback callback,
                                               gpointer user_data);
TXLM_GLIB_API char *txlm_session_generate_finish(TxlmSession *session, GAsyncResult *result, GError **error);
TXLM_GLIB_API char *txlm_session_generate_sync(TxlmSession *session, const char *prompt, gint n_tokens, guint64 seed,
                                               GCancellable *cancellable, GError **error);

/* feeding text */
TXLM_GLIB_API void txlm_session_feed_async(TxlmSession *session, const char *text, GCancellable *cancellable,
                                           GAsyncReadyCallback callback, gpointer user_data);
TXLM_GLIB_API gboolean txlm_session_feed_finish(TxlmSession *session, GAsyncResult *result, GError **error);
TXLM_GLIB_API gboolean txlm_session_feed_sync(TxlmSession *session, const char *text, GCancellable *cancellable,
                                              GError **error);

/* scoring a text: the surprisal of each word */
TXLM_GLIB_API void txlm_session_score_async(TxlmSession *session, const char *text, GCancellable *cancellable,
                                            GAsyncReadyCallback callback, gpointer user_data);
TXLM_GLIB_API GPtrArray *txlm_session_score_finish(TxlmSession *session, GAsyncResult *result, GError **error);
TXLM_GLIB_API GPtrArray *txlm_session_score_sync(TxlmSession *session, const char *text, GCancellable *cancellable,
                                                 GError **error);

/* saving and restoring the state */
TXLM_GLIB_API void txlm_session_save_async(TxlmSession *session, GCancellable *cancellable, GAsyncReadyCallback callback,
                                           gpointer user_data);
TXLM_GLIB_API GBytes *txlm_session_save_finish(TxlmSession *session, GAsyncResult *result, GError **error);
TXLM_GLIB_API GBytes *txlm_session_save_sync(TxlmSession *session, GCancellable *cancellable, GError **error);
TXLM_GLIB_API void txlm_session_restore_async(TxlmSession *session, GBytes *state, GCancellable *cancellable,
                                              GAsyncReadyCallback callback, gpointer user_data);
TXLM_GLIB_API gboolean txlm_session_restore_finish(TxlmSession *session, GAsyncResult *result, GError **error);
TXLM_GLIB_API gboolean txlm_session_restore_sync(TxlmSession *session, GBytes *state, GCancellable *cancellable,
                                                 GError **error);
TXLM_GLIB_API void txlm_session_save_to_file_async(TxlmSession *session, const char *path, GCancellable *cancellable,
                                                   GAsyncReadyCallback callback, gpointer user_data);
TXLM_GLIB_API gboolean txlm_session_save_to_file_finish(TxlmSession *session, GAsyncResult *result, GError **error);
TXLM_GLIB_API gboolean txlm_session_save_to_file_sync(TxlmSession *session, const char *path, GCancellable *cancellable,
                                                      GError **error);
TXLM_GLIB_API void txlm_session_restore_from_file_async(TxlmSession *session, const char *path,
                                                        GCancellable *cancellable, GAsyncReadyCallback callback,
                                                        gpointer user_data);
TXLM_GLIB_API gboolean txlm_session_restore_from_file_finish(TxlmSession *session, GAsyncResult *result,
                                                             GError **error);
TXLM_GLIB_API gboolean txlm_session_restore_from_file_sync(TxlmSession *session, const char *path,
                                                           GCancellable *cancellable, GError **error);

G_END_DECLS

#endif
