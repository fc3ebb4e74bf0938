/* Tests of the API on a packed golden case (tests/text/golden_model.c). */
#ifndef TXLM_TEST_GOLDEN_MODEL_H
#define TXLM_TEST_GOLDEN_MODEL_H

#include <txlm.h>

/* Packs golden/name into a new temporary *dir (the caller removes it with
 * rm_tree) and loads it on a new context (../common/test_context.h: the
 * caller destroys it with test_context_destroy): 0, or 1 after printing why. */
int open_golden_model(const char *pack, const char *golden, const char *name, char **dir, txlm_context **ctx,
                      txlm_model **m);

#endif
