/* A golden case packed into a fresh temporary folder and loaded on a
 * context (with the validation layer when TXLM_VALIDATION asks; on a
 * program's own device when TXLM_TEST_HOST_DEVICE is set). */
#include <stdlib.h>
#include <string.h>

#include "../common/test_context.h"
#include "golden_model.h"
#include "text_util.h"

int open_golden_model(const char *pack, const char *golden, const char *name, char **dir, txlm_context **ctx,
                      txlm_model **m)
{
    char path[1100];
    *dir = make_tmp_dir();
    snprintf(path, sizeof path, "%s/%s.txlm", *dir ? *dir : ".", name);
    const char *val = getenv("TXLM_VALIDATION");
    txlm_context_options co = {.validation = val && *val && strcmp(val, "0") != 0};
    if (!*dir || pack_case(pack, golden, name, path, NULL) || test_context_create(&co, ctx) ||
        txlm_model_load(*ctx, path, NULL, m)) {
        fprintf(stderr, "setup: %s\n", txlm_last_error());
        if (*dir) rm_tree(*dir);
        return 1;
    }
    return 0;
}
