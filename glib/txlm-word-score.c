/* TxlmWordScore: one word of a scored text (a reference-counted boxed type). */
#include "txlm-glib-private.h"

/**
 * TxlmWordScore:
 *
 * One word of a text scored by txlm_session_score_async(): where it is in
 * the text (in bytes and in characters, what a #GtkTextBuffer's offsets
 * count) and its surprisal, the information its tokens carried. The words
 * are the text's runs of characters that are not whitespace, traced back
 * through the tokenizer's normalisation, as `txlm score --words` gives
 * them. Immutable and reference-counted.
 */
struct _TxlmWordScore {
    gatomicrefcount ref;
    char *text;
    gsize begin, end;
    glong char_begin, char_end;
    double surprisal;
    guint n_tokens;
};

G_DEFINE_BOXED_TYPE(TxlmWordScore, txlm_word_score, txlm_word_score_ref, txlm_word_score_unref)

TxlmWordScore *txlm_glib_word_score_new(const char *text, gsize begin, gsize end, glong char_begin, glong char_end,
                                        double surprisal, guint n_tokens)
{
    TxlmWordScore *w = g_new0(TxlmWordScore, 1);
    g_atomic_ref_count_init(&w->ref);
    w->text = g_strndup(text + begin, end - begin);
    w->begin = begin, w->end = end;
    w->char_begin = char_begin, w->char_end = char_end;
    w->surprisal = surprisal;
    w->n_tokens = n_tokens;
    return w;
}

/**
 * txlm_word_score_ref:
 * @score: a #TxlmWordScore
 *
 * Returns: (transfer full): @score, with one more reference
 */
TxlmWordScore *txlm_word_score_ref(TxlmWordScore *score)
{
    g_return_val_if_fail(score != NULL, NULL);
    g_atomic_ref_count_inc(&score->ref);
    return score;
}

/**
 * txlm_word_score_unref:
 * @score: (transfer full): a #TxlmWordScore
 *
 * Drops a reference; the last frees @score.
 */
void txlm_word_score_unref(TxlmWordScore *score)
{
    g_return_if_fail(score != NULL);
    if (!g_atomic_ref_count_dec(&score->ref)) return;
    g_free(score->text);
    g_free(score);
}

/**
 * txlm_word_score_get_text:
 * @score: a #TxlmWordScore
 *
 * Returns: (transfer none): the word, as it is in the text
 */
const char *txlm_word_score_get_text(const TxlmWordScore *score)
{
    g_return_val_if_fail(score != NULL, NULL);
    return score->text;
}

/**
 * txlm_word_score_get_begin:
 * @score: a #TxlmWordScore
 *
 * Returns: the byte offset of the word's first byte in the text
 */
gsize txlm_word_score_get_begin(const TxlmWordScore *score)
{
    g_return_val_if_fail(score != NULL, 0);
    return score->begin;
}

/**
 * txlm_word_score_get_end:
 * @score: a #TxlmWordScore
 *
 * Returns: the byte offset just past the word's last byte
 */
gsize txlm_word_score_get_end(const TxlmWordScore *score)
{
    g_return_val_if_fail(score != NULL, 0);
    return score->end;
}

/**
 * txlm_word_score_get_char_begin:
 * @score: a #TxlmWordScore
 *
 * Returns: the character offset of the word's first character in the text
 */
glong txlm_word_score_get_char_begin(const TxlmWordScore *score)
{
    g_return_val_if_fail(score != NULL, 0);
    return score->char_begin;
}

/**
 * txlm_word_score_get_char_end:
 * @score: a #TxlmWordScore
 *
 * Returns: the character offset just past the word's last character
 */
glong txlm_word_score_get_char_end(const TxlmWordScore *score)
{
    g_return_val_if_fail(score != NULL, 0);
    return score->char_end;
}

/**
 * txlm_word_score_get_surprisal:
 * @score: a #TxlmWordScore
 *
 * The word's surprisal: -log2 p(word | everything before it), the sum of
 * its tokens' surprisals, in bits. NaN for a word whose first token had
 * no context (the first word of a text scored by a session with an empty
 * memory), as `txlm score --words` prints NA; 0 for a word without tokens
 * (only characters the tokenizer drops).
 *
 * Returns: the surprisal in bits
 */
double txlm_word_score_get_surprisal(const TxlmWordScore *score)
{
    g_return_val_if_fail(score != NULL, 0);
    return score->surprisal;
}

/**
 * txlm_word_score_get_n_tokens:
 * @score: a #TxlmWordScore
 *
 * Returns: the number of the model's tokens the word was read as
 */
guint txlm_word_score_get_n_tokens(const TxlmWordScore *score)
{
    g_return_val_if_fail(score != NULL, 0);
    return score->n_tokens;
}
