#ifndef TXLM_WORD_SCORE_H
#define TXLM_WORD_SCORE_H

#include <glib-object.h>

#include "txlm-glib-macros.h"

G_BEGIN_DECLS

typedef struct _TxlmWordScore TxlmWordScore;

#define TXLM_TYPE_WORD_SCORE (txlm_word_score_get_type())
TXLM_GLIB_API GType txlm_word_score_get_type(void);

TXLM_GLIB_API TxlmWordScore *txlm_word_score_ref(TxlmWordScore *score);
TXLM_GLIB_API void txlm_word_score_unref(TxlmWordScore *score);
TXLM_GLIB_API const char *txlm_word_score_get_text(const TxlmWordScore *score);
TXLM_GLIB_API gsize txlm_word_score_get_begin(const TxlmWordScore *score);
TXLM_GLIB_API gsize txlm_word_score_get_end(const TxlmWordScore *score);
TXLM_GLIB_API glong txlm_word_score_get_char_begin(const TxlmWordScore *score);
TXLM_GLIB_API glong txlm_word_score_get_char_end(const TxlmWordScore *score);
TXLM_GLIB_API double txlm_word_score_get_surprisal(const TxlmWordScore *score);
TXLM_GLIB_API guint txlm_word_score_get_n_tokens(const TxlmWordScore *score);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(TxlmWordScore, txlm_word_score_unref)

G_END_DECLS

#endif
